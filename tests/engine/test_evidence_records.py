"""#21 item 3: rule 4's tool-call evidence across records. Claude Code writes a message's
tool_use on the record after its text (same `message.id`), Codex its `function_call` as an
item of its own after the message: the text before a trailing orphan `</think>` is reasoning
there too, in scan, show and every repair mode, as it is when one record holds both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.test_refusal_repairs import _claude_lines
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan import transcript
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats.repairs import ApplyOptions, ClaudeCodeMode, CodexMode

PLAN = "I will run ls to see the files."
LEAK = PLAN + "</think>"


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _repair(tmp_path: Path, source: Path, mode: WriteMode, **apply: Any) -> Any:
    out = tmp_path / "o"
    result = repair_paths(
        [str(source)],
        RepairOptions(
            mode=mode,
            out_dir=str(out) if mode is WriteMode.OUT else None,
            run_dir=str(tmp_path / "run"),
            jobs=1,
            apply=ApplyOptions(**apply),
        ),
    )
    assert not result.all_errors, result.all_errors
    return result


def _kinds(path: Path) -> list[tuple[int, str, str | None]]:
    report = scan([str(path)], ScanOptions(), jobs=1)
    return [(f.line, f.kind.value, f.refused) for f in sorted(report.findings)]


def _recovered(path: Path) -> list[str]:
    t = transcript.load(str(path), normalized=True)
    return [p.text for turn in t.turns for p in turn.parts if p.recovered]


def _codex_lines(text: str, call: str | None = "function_call") -> list[dict[str, Any]]:
    """A Codex rollout: the assistant's text as a message item, its call an item after it
    (the agent_message event copy between them, as Codex writes it)."""
    stamp = "2026-03-01T10:00:01.000Z"

    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": stamp, "type": kind, "payload": payload}

    items: dict[str, dict[str, Any]] = {
        "function_call": {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "call_1",
        },
        "custom_tool_call": {
            "type": "custom_tool_call",
            "call_id": "call_1",
            "name": "apply_patch",
            "input": "*** Begin Patch",
        },
        "local_shell_call": {
            "type": "local_shell_call",
            "call_id": "call_1",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls"]},
        },
    }
    out = [
        line(
            "session_meta",
            {"id": "0199a1b2-c3d4", "cwd": "/p", "model_provider": "deepseek"},
        ),
        line("turn_context", {"cwd": "/p", "model": "deepseek-r1"}),
        line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
        ),
        line("event_msg", {"type": "user_message", "message": "ls"}),
        line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            },
        ),
        line("event_msg", {"type": "agent_message", "message": text}),
    ]
    if call is not None:
        out.append(line("response_item", items[call]))
        out.append(
            line(
                "response_item",
                {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
            )
        )
    out.append(
        line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "One file: a.txt."}],
            },
        )
    )
    return out


# --- Claude Code: the text on one record, its tool_use on the next ----------------------------


def test_claude_code_text_then_tool_use_record_is_reasoning(tmp_path: Path) -> None:
    source = _write(tmp_path / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl", _claude_lines(LEAK))
    assert _kinds(source) == [(2, "orphan_close", None)]
    assert _recovered(source) == [PLAN]


def test_claude_code_sibling_evidence_repair_places_a_thinking_block(tmp_path: Path) -> None:
    lines = _claude_lines(LEAK)
    source = _write(tmp_path / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl", lines)
    dry = _repair(tmp_path, source, WriteMode.DRY_RUN, claude_code_mode=ClaudeCodeMode.ARCHIVE)
    (change,) = dry.files[0].changes
    assert change.extracted == (PLAN,) and change.applied
    _repair(tmp_path, source, WriteMode.OUT, claude_code_mode=ClaudeCodeMode.ARCHIVE)
    repaired = tmp_path / "o" / source.name
    after = [json.loads(line) for line in repaired.read_text().splitlines()]
    assert after[1]["message"]["content"] == [{"type": "thinking", "thinking": PLAN}]
    assert after[2] == lines[2] and after[0] == lines[0] and after[3:] == lines[3:]
    assert scan([str(repaired)], ScanOptions()).exit_code() is ExitCode.CLEAN


def test_claude_code_sibling_evidence_in_place_then_undo(tmp_path: Path) -> None:
    source = _write(tmp_path / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl", _claude_lines(LEAK))
    original = source.read_bytes()
    result = _repair(tmp_path, source, WriteMode.IN_PLACE)  # resumable: the manifest only
    assert json.loads(source.read_text().splitlines()[1])["message"]["content"] == []
    assert scan([str(source)], ScanOptions()).exit_code() is ExitCode.CLEAN
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert source.read_bytes() == original


def test_claude_code_text_without_a_later_tool_use_loses_only_the_delimiter(
    tmp_path: Path,
) -> None:
    lines = _claude_lines(LEAK)
    lines[2]["message"]["id"] = "msg_other"  # the tool_use belongs to another message
    source = _write(tmp_path / "s.jsonl", lines)
    assert _kinds(source) == [(2, "stray_close", None)]
    assert _recovered(source) == []
    _repair(tmp_path, source, WriteMode.OUT)
    after = json.loads((tmp_path / "o" / "s.jsonl").read_text().splitlines()[1])
    assert after["message"]["content"] == [{"type": "text", "text": PLAN}]


def test_claude_code_tool_use_before_the_text_is_no_evidence(tmp_path: Path) -> None:
    lines = _claude_lines(LEAK)
    lines[1], lines[2] = lines[2], lines[1]  # the call first: the text does not precede it
    source = _write(tmp_path / "s.jsonl", lines)
    assert _kinds(source) == [(3, "stray_close", None)]


# --- Codex: the message item, then its call item ----------------------------------------------


@pytest.mark.parametrize("call", ["function_call", "custom_tool_call", "local_shell_call"])
def test_codex_message_then_call_item_is_reasoning(tmp_path: Path, call: str) -> None:
    source = _write(
        tmp_path / "rollout-2026-03-01T10-00-00-0199a1b2.jsonl", _codex_lines(LEAK, call)
    )
    assert _kinds(source) == [(5, "orphan_close", None)]
    assert _recovered(source) == [PLAN]


def test_codex_call_evidence_repair_places_a_reasoning_item_then_undo(tmp_path: Path) -> None:
    lines = _codex_lines(LEAK)
    source = _write(tmp_path / "rollout-2026-03-01T10-00-00-0199a1b2.jsonl", lines)
    original = source.read_bytes()
    _repair(tmp_path, source, WriteMode.OUT, codex_mode=CodexMode.INSERT)
    after = [json.loads(x) for x in (tmp_path / "o" / source.name).read_text().splitlines()]
    items = [o["payload"] for o in after if o["type"] == "response_item"]
    reasoning = [i for i in items if i["type"] == "reasoning"]
    assert [c["text"] for r in reasoning for c in r["content"]] == [PLAN]
    # the message that held only reasoning is gone; its call follows the reasoning item
    kinds = [i["type"] for i in items]
    assert kinds[kinds.index("reasoning") + 1] == "function_call"
    events = [o["payload"] for o in after if o["type"] == "event_msg"]
    assert {"type": "agent_reasoning", "text": PLAN} in events  # was its agent_message copy
    assert not any(e["type"] == "agent_message" and PLAN in e["message"] for e in events)
    assert scan([str(tmp_path / "o" / source.name)], ScanOptions()).exit_code() is ExitCode.CLEAN
    result = _repair(tmp_path, source, WriteMode.IN_PLACE, codex_mode=CodexMode.INSERT)
    assert scan([str(source)], ScanOptions()).exit_code() is ExitCode.CLEAN
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert source.read_bytes() == original


def test_codex_message_without_a_call_after_loses_only_the_delimiter(tmp_path: Path) -> None:
    source = _write(
        tmp_path / "rollout-2026-03-01T10-00-00-0199a1b2.jsonl", _codex_lines(LEAK, None)
    )
    assert _kinds(source) == [(5, "stray_close", None)]
    assert _recovered(source) == []


# --- property: one message's blocks on one record or spread over sibling records --------------

_BLOCKS = st.lists(
    st.one_of(
        st.sampled_from(
            [LEAK, PLAN, "Done.", "<think>a plan</think>Done.", "Look: </think>", "x</think>\n"]
        ).map(lambda t: {"type": "text", "text": t}),
        st.just({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=40, deadline=None)
@given(blocks=_BLOCKS)
def test_spreading_a_message_over_sibling_records_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory, blocks: list[dict[str, Any]]
) -> None:
    tmp = tmp_path_factory.mktemp("spread")
    first, template, *rest = _claude_lines("x")

    def record(content: list[dict[str, Any]]) -> dict[str, Any]:
        line = json.loads(json.dumps(template))
        line["message"]["content"] = content
        return line

    whole = _write(tmp / "whole.jsonl", [first, record(blocks), *rest[1:]])
    spread = _write(tmp / "spread.jsonl", [first, *(record([b]) for b in blocks), *rest[1:]])

    def seen(path: Path) -> tuple[list[Any], list[str]]:
        found = sorted(scan([str(path)], ScanOptions(), jobs=1).findings)
        kinds = [(f.kind.value, f.leaked_chars, f.refused is None) for f in found]
        return kinds, _recovered(path)

    assert seen(spread) == seen(whole)
    out = {}
    for path in (whole, spread):
        result = repair_paths(
            [str(path)],
            RepairOptions(mode=WriteMode.DRY_RUN, run_dir=str(tmp / "run"), jobs=1),
        )
        out[path.name] = [c.extracted for f in result.files for c in f.changes]
    assert out["spread.jsonl"] == out["whole.jsonl"]


def test_claude_code_log_sees_the_same_messages_and_usage_after_the_evidence_repair(
    tmp_path: Path,
) -> None:
    """claude-code-log loads the repaired file (the text record left with an empty content
    list, its tool_use record as it was) with the same API messages and token totals."""
    converter = pytest.importorskip("claude_code_log.converter")
    renderer = pytest.importorskip("claude_code_log.renderer")
    source = _write(tmp_path / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl", _claude_lines(LEAK))
    _repair(tmp_path, source, WriteMode.OUT)
    repaired = tmp_path / "o" / source.name
    assert repaired.read_bytes() != source.read_bytes()

    def seen(path: Path) -> tuple[dict[str, int], set[str]]:
        entries = renderer._filter_messages(converter.load_transcript(path, silent=True))
        sessions, order, _ = renderer._collect_session_info(entries, {})
        (info,) = (sessions[s] for s in order)
        totals = {k: v for k, v in info.items() if k.endswith("_tokens")}
        ids = {e.message.id for e in entries if getattr(e, "type", None) == "assistant"}
        return totals, ids

    assert seen(repaired) == seen(source)


def test_legacy_codex_bare_message_then_function_call(tmp_path: Path) -> None:
    """Rollouts before the envelope write bare items: the evidence holds there too, but a
    bare message's line cannot become a reasoning item (its whole line would be replaced),
    so an all-reasoning one is still refused, and scan says so."""
    lines = [
        {"id": "0199a1b2-c3d4", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": LEAK}],
        },
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
        {"record_type": "state"},
    ]
    source = _write(tmp_path / "rollout-2025-05-01-0199a1b2.jsonl", lines)
    assert [(line, kind, note is not None) for line, kind, note in _kinds(source)] == [
        (3, "orphan_close", True)
    ]
    assert _recovered(source) == [PLAN]
    dry = _repair(tmp_path, source, WriteMode.DRY_RUN, codex_mode=CodexMode.INSERT)
    assert [c.applied for c in dry.files[0].changes] == [False]


def test_incremental_scan_sees_a_tool_use_appended_after_the_text(tmp_path: Path) -> None:
    """The text's line was scanned before its tool_use line was written: once it is, an
    incremental scan finds what a full scan finds (the file is read whole again)."""
    from thinkfix.engine.telemetry.incremental import scan_incremental

    lines = _claude_lines(LEAK)
    root = tmp_path / "sessions"
    root.mkdir()
    source = _write(root / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl", lines[:2])
    state = str(tmp_path / "state.json")
    first, _ = scan_incremental([str(root)], ScanOptions(), state)
    assert [f.kind.value for f in first.findings] == ["stray_close"]
    with source.open("a") as fp:
        fp.write("".join(json.dumps(line) + "\n" for line in lines[2:]))
    report, _ = scan_incremental([str(root)], ScanOptions(), state)
    expected = scan([str(root)], ScanOptions(), jobs=1)
    assert [f.kind.value for f in expected.findings] == ["orphan_close"]
    assert report.to_dict() == expected.to_dict()
