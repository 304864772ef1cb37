"""#21 item 3: refusals that are repairs. A message that keeps a tool call needs no text, so
an all-reasoning text beside one is repaired (not refused), and the repaired copy rescans
clean; a valid JSON document split across lines is read as one document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan

#: The issue's repro: an assistant message whose string content is only reasoning, beside
#: `tool_calls` (the model emitted `<think>` and then called a tool).
CHAT: dict[str, Any] = {
    "model": "m",
    "messages": [
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "<think>I will run ls.</think>",
            "reasoning": "I will run ls.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "assistant", "content": "One file."},
    ],
}
HERMES: dict[str, Any] = {
    "session_id": "20260412_093015_a1b2c3",
    "model": "MiniMax-M2.7",
    "platform": "cli",
    "session_start": "2026-04-12T09:30:15",
    "system_prompt": "You are Hermes.",
    "tools": [],
    "message_count": 4,
    "messages": CHAT["messages"],
}


def _repair(tmp_path: Path, source: Path) -> Path:
    out = tmp_path / "o"
    result = repair_paths(
        [str(source)],
        RepairOptions(mode=WriteMode.OUT, out_dir=str(out), run_dir=str(tmp_path / "run"), jobs=1),
    )
    assert not result.all_errors, result.all_errors
    return out / source.name


@pytest.mark.parametrize(
    ("doc", "name", "fmt", "empty"),
    [(CHAT, "s.json", "openai-chat", None), (HERMES, "session_x.json", "hermes", "")],
    ids=["openai-chat", "hermes"],
)
def test_repair_all_reasoning_content_beside_tool_calls(
    tmp_path: Path, doc: dict[str, Any], name: str, fmt: str, empty: str | None
) -> None:
    source = tmp_path / name
    source.write_text(json.dumps(doc, indent=2))
    before = scan([str(source)], ScanOptions())
    assert before.summary.by_file[str(source)].format == fmt
    assert [f.refused for f in before.findings] == [None]  # scan no longer calls it refused
    repaired = _repair(tmp_path, source)
    after = scan([str(repaired)], ScanOptions())
    assert after.exit_code() is ExitCode.CLEAN, after.findings
    message = json.loads(repaired.read_text())["messages"][1]
    # what each runtime writes beside tool calls: Hermes `""`, the Chat Completions API `null`
    assert message["content"] == empty
    assert message["tool_calls"] == doc["messages"][1]["tool_calls"]
    assert message["reasoning"] == "I will run ls."  # the duplicate is not appended twice


#: `printf '{"messages": [...},\n {...}]}\n'`: one valid JSON document, split across lines
#: without the usual indentation. `json.load` reads it; it was `unknown_format` (and every
#: line a `bad_line` with `--format openai-chat`).
SPLIT = (
    b'{"messages": [{"role": "user", "content": "hi"},\n'
    b' {"role": "assistant", "content": "<think>x</think>Hello"}]}\n'
)


@pytest.mark.parametrize("forced", [None, "openai-chat"])
def test_scan_reads_a_document_split_across_lines(tmp_path: Path, forced: str | None) -> None:
    from thinkfix.engine.inputs.files import InputOptions

    source = tmp_path / "split.json"
    source.write_bytes(SPLIT)
    assert json.loads(SPLIT)  # what json.load reads
    for prefilter in (True, False):
        report = scan(
            [str(source)], ScanOptions(inputs=InputOptions(format=forced), prefilter=prefilter)
        )
        assert report.errors == ()
        assert report.summary.by_file[str(source)].format == "openai-chat"
        assert [(f.line, f.json_path, f.kind.value) for f in report.findings] == [
            (1, "messages[1].content", "block")
        ]
    repaired = _repair(tmp_path, source)
    assert json.loads(repaired.read_bytes())["messages"][1]["content"] == "Hello"
    assert scan([str(repaired)], ScanOptions()).exit_code() is ExitCode.CLEAN


def test_scan_jsonl_with_a_broken_first_line_is_still_read_by_line(tmp_path: Path) -> None:
    """A first line that opens an object and does not parse is not always a split document:
    when the whole does not parse either, the file is still read line by line."""
    source = tmp_path / "chat.jsonl"
    source.write_bytes(
        b'{"role": "assistant", "content": "cut off\n'
        b'{"role": "assistant", "content": "<think>x</think>Hello"}\n'
        b'{"role": "user", "content": "more"}\n'
    )
    from thinkfix.engine.inputs.files import InputOptions

    report = scan([str(source)], ScanOptions(inputs=InputOptions(format="openai-chat")))
    assert [(e.line, e.kind.value) for e in report.errors] == [(1, "bad_line")]
    assert [f.line for f in report.findings] == [2]


def _claude_lines(text: str) -> list[dict[str, Any]]:
    """Claude Code writing one API message as two records sharing `message.id`: the text
    block on one line, its tool_use on the next (then the result and a closing answer)."""
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/p",
        "version": "2.1.41",
        "timestamp": "2026-03-01T10:00:01.000Z",
    }
    base["sessionId"] = "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f"
    usage = {"input_tokens": 120, "cache_read_input_tokens": 0, "output_tokens": 58}

    def assistant(uuid: str, parent: str, mid: str, block: dict[str, Any]) -> dict[str, Any]:
        message = {"id": mid, "type": "message", "role": "assistant", "model": "glm-4.7"}
        message.update(content=[block], stop_reason=None, usage=usage)
        return {
            "parentUuid": parent,
            **base,
            "message": message,
            "requestId": "req_" + mid,
            "type": "assistant",
            "uuid": uuid,
            "timestamp": "2026-03-01T10:00:01.000Z",
        }

    result = {"tool_use_id": "toolu_1", "type": "tool_result", "content": "a.txt"}
    return [
        {
            "parentUuid": None,
            **base,
            "type": "user",
            "uuid": "a1",
            "message": {"role": "user", "content": "list the files"},
        },
        assistant("a2", "a1", "msg_01", {"type": "text", "text": text}),
        assistant(
            "a3",
            "a2",
            "msg_01",
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
        ),
        {
            "parentUuid": "a3",
            **base,
            "type": "user",
            "uuid": "a4",
            "message": {"role": "user", "content": [result]},
        },
        assistant("a5", "a4", "msg_02", {"type": "text", "text": "One file: a.txt."}),
    ]


def test_repair_claude_code_all_reasoning_text_with_a_tool_use_in_a_sibling_record(
    tmp_path: Path,
) -> None:
    """The message is judged by all its records: its tool_use (next line, same message.id)
    still shows, so the emptied text block goes instead of the repair being refused."""
    lines = _claude_lines("<think>I should run ls to see the files.</think>")
    source = tmp_path / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = scan([str(source)], ScanOptions())
    assert [f.refused for f in before.findings] == [None]
    repaired = _repair(tmp_path, source)
    assert scan([str(repaired)], ScanOptions()).exit_code() is ExitCode.CLEAN
    after = [json.loads(line) for line in repaired.read_text().splitlines()]
    assert after[1]["message"]["content"] == []  # the text block removed, the record kept
    assert after[2] == lines[2] and after[0] == lines[0] and after[3:] == lines[3:]


def test_repair_claude_code_sibling_text_without_a_tool_use_is_still_refused(
    tmp_path: Path,
) -> None:
    lines = _claude_lines("<think>I should run ls.</think>")
    lines[2]["message"]["id"] = "msg_other"  # the tool_use belongs to another message
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [f.refused is not None for f in scan([str(source)], ScanOptions()).findings] == [True]


def test_claude_code_log_sees_the_same_messages_and_usage_after_the_sibling_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """claude-code-log loads the repaired transcript with the same API messages and the same
    token usage: its session totals (deduplicated by requestId) are unchanged, and every
    request still has an entry to carry its usage. The entry that held only the leaked
    reasoning is gone; its message is shown by its tool_use, as a tool-only message is."""
    converter = pytest.importorskip("claude_code_log.converter")
    renderer = pytest.importorskip("claude_code_log.renderer")
    from tests.engine.test_readers import _render, _shown

    lines = _claude_lines("<think>I should run ls to see the files.</think>")
    source = tmp_path / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    repaired = _repair(tmp_path, source)

    def seen(path: Path) -> tuple[dict[str, int], int, set[str]]:
        entries = renderer._filter_messages(converter.load_transcript(path, silent=True))
        sessions, order, show = renderer._collect_session_info(entries, {})
        (info,) = (sessions[s] for s in order)
        totals = {k: v for k, v in info.items() if k.endswith("_tokens")}
        ids = {e.message.id for e in entries if getattr(e, "type", None) == "assistant"}
        return totals, len(show), ids

    assert seen(repaired) == seen(source)
    before, after = (
        _shown(_render(tmp_path, source, monkeypatch)),
        _shown(_render(tmp_path, repaired, monkeypatch)),
    )
    assert after["tool"] == before["tool"] and after["user"] == before["user"]
    assert after["assistant"] == before["assistant"] - 1  # the leaked-reasoning-only entry
