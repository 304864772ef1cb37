"""Kimi CLI wire logs (`wire.jsonl`): what the UI replays on every resume, read as runs of text
parts (a text split over lines by other records is one text), repaired line by line with the
reasoning in a think part record before the run.

The records are built as kimi-cli 4a550ef writes them: `WireFile.append_record`
(src/kimi_cli/wire/file.py) dumps `WireMessageRecord.model_dump(mode="json")` with
`json.dumps(..., ensure_ascii=False)` after a metadata line; each message's envelope and
payload are those tests/core/test_wire_message.py snapshots (`TextPart` as `{"type": "text",
"text"}`, `StatusUpdate` with every field, `ToolCall` with `extras: None`, `ToolResult`'s
`return_value`)."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.support import read, repair, scores, sites
from thinkfix import normalize
from thinkfix.cli import main
from thinkfix.formats import registry
from thinkfix.formats.kimi_wire import shares
from thinkfix.formats.planner import new_segments
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("kimi-wire")
META = '{"type": "metadata", "protocol_version": "1.10"}'


def _line(stamp: float, kind: str, payload: dict[str, Any]) -> str:
    """One `WireMessageRecord` as `_dump_line` writes it."""
    record = {"timestamp": stamp, "message": {"type": kind, "payload": payload}}
    return json.dumps(record, ensure_ascii=False)


def text(stamp: float, value: str) -> str:
    return _line(stamp, "ContentPart", {"type": "text", "text": value})


def think(stamp: float, value: str) -> str:
    return _line(stamp, "ContentPart", {"type": "think", "think": value, "encrypted": None})


def status(stamp: float) -> str:
    payload = {
        "context_usage": 0.5,
        "context_tokens": None,
        "max_context_tokens": None,
        "token_usage": None,
        "message_id": None,
        "plan_mode": None,
        "mcp_status": None,
    }
    return _line(stamp, "StatusUpdate", payload)


def tool_call(stamp: float) -> str:
    payload = {
        "type": "function",
        "id": "call_123",
        "function": {"name": "bash", "arguments": '{"command": "ls -la"}'},
        "extras": None,
    }
    return _line(stamp, "ToolCall", payload)


def tool_result(stamp: float) -> str:
    value = {
        "is_error": False,
        "output": "",
        "message": "Command completed",
        "display": [{"type": "brief", "text": "Command completed"}],
        "extras": None,
    }
    return _line(stamp, "ToolResult", {"tool_call_id": "call_123", "return_value": value})


def turn(*body: str, prompt: str = "What is 2+2?") -> list[str]:
    return [
        _line(1764300000.1, "TurnBegin", {"user_input": prompt}),
        _line(1764300000.2, "StepBegin", {"n": 1}),
        *body,
        _line(1764300009.9, "TurnEnd", {}),
    ]


def wire(*lines: str) -> bytes:
    return ("\n".join((META, *lines)) + "\n").encode()


SPLIT = wire(
    *turn(
        text(1764300001.25, "<think>Two plus two; "),
        status(1764300001.5),
        text(1764300001.75, "that is 4 — é.</think>The answer"),
        text(1764300002.0, " is 4."),
    )
)


def test_kimi_wire_is_claimed_by_its_metadata_line_and_record_shape() -> None:
    confidence = scores(SPLIT[:65536], "/h/.kimi/sessions/abc/def/wire.jsonl")
    assert confidence["kimi-wire"] == 0.95
    assert max(v for k, v in confidence.items() if k != "kimi-wire") < registry.THRESHOLD
    # a head cut past the metadata line (a damaged file) is still its records
    assert scores(SPLIT.split(b"\n", 1)[1])["kimi-wire"] == 0.9
    # Kimi's context.jsonl is not a wire log
    context = b'{"role": "_checkpoint", "id": 0}\n{"role":"assistant","content":"Hi."}\n'
    assert scores(context)["kimi-wire"] == 0.0
    assert scores(context)["kimi-cli"] == 0.95


def test_kimi_wire_reads_a_text_split_over_lines_as_one_text() -> None:
    """The recorder flushes its merge buffer on a status update mid-stream: the `<think>`
    opened on one line closes on the next, and the finding needs them joined."""
    found = sites(FMT, read(FMT, SPLIT))
    assert [(s.line, s.json_path) for s in found] == [(4, "message.payload.text")]
    assert found[0].text == "<think>Two plus two; that is 4 — é.</think>The answer is 4."
    assert normalize(found[0].text).visible == "The answer is 4."
    assert sum(FMT.assistant_messages(r) for r in read(FMT, SPLIT)) == 1


def test_kimi_wire_runs_end_at_steps_tool_calls_and_think_parts() -> None:
    data = wire(
        *turn(
            text(2.0, "First."),
            tool_call(2.1),
            tool_result(2.2),
            _line(2.3, "StepBegin", {"n": 2}),
            think(2.4, "Plan."),
            text(2.5, "Second."),
            think(2.6, "More."),
            text(2.7, "Third."),
        )
    )
    found = sites(FMT, read(FMT, data))
    assert [(s.line, s.text, s.native_reasoning) for s in found] == [
        (4, "First.", None),
        (9, "Second.", "Plan."),
        (11, "Third.", "Plan.\n\nMore."),
    ]


def _repair_of(data: bytes) -> Repair:
    """The repair a scan makes of the file's first leaking text."""
    site = sites(FMT, read(FMT, data))[0]
    result = normalize(site.text)
    return Repair(site, result.visible, result.extracted)


def test_kimi_wire_repair_rewrites_each_line_and_inserts_a_think_record() -> None:
    out = repair(FMT, SPLIT, [_repair_of(SPLIT)])
    lines = out.data.decode().splitlines()
    assert lines[3] == think(1764300001.25, "Two plus two; that is 4 — é.")
    # each line keeps its own share; a line left empty stays, with ""
    assert lines[4] == text(1764300001.25, "")
    assert lines[5] == status(1764300001.5)
    assert lines[6] == text(1764300001.75, "The answer")
    assert lines[7] == text(1764300002.0, " is 4.")
    assert out.placements[0].kind is PlacementKind.RECORD
    assert out.placements[0].mirrors == ("record 6: message.payload.text",)
    again = sites(FMT, out.reread)
    assert [(s.text, s.native_reasoning) for s in again] == [
        ("The answer is 4.", "Two plus two; that is 4 — é.")
    ]
    # a second repair has nothing left to do
    assert not new_segments(_repair_of(out.data)) and _repair_of(out.data).visible == (
        "The answer is 4."
    )


def test_kimi_wire_reasoning_the_step_already_shows_is_not_inserted_again() -> None:
    data = wire(*turn(think(3.0, "Two plus two."), text(3.1, "<think>Two plus two.</think>4")))
    out = repair(FMT, data, [_repair_of(data)])
    assert out.placements[0].kind is PlacementKind.NONE
    assert out.data.decode().splitlines()[4] == text(3.1, "4")


def test_kimi_wire_an_all_reasoning_run_is_refused() -> None:
    data = wire(*turn(text(4.0, "<think>Only "), status(4.1), text(4.2, "thinking.</think>")))
    out = repair(FMT, data, [_repair_of(data)])
    assert out.placements[0].kind is PlacementKind.REFUSED
    assert out.data == data


def test_kimi_wire_a_run_grown_since_the_scan_is_stale() -> None:
    """A site scanned when its run was one line is not applied to the longer run the file
    holds now: its share of the text could not be told."""
    before = wire(*turn(text(6.0, "<think>Hm.</think>Yes")))
    now = wire(*turn(text(6.0, "<think>Hm.</think>Yes"), status(6.1), text(6.2, ", and no.")))
    out = repair(FMT, now, [_repair_of(before)])
    assert out.placements[0].kind is PlacementKind.SKIPPED
    assert (out.placements[0].reason or "").startswith("stale")
    assert out.data == now


def test_kimi_wire_shares_join_to_the_visible_text() -> None:
    assert shares(["<think>a</think>a", "b"], "ab") == ["a", "b"]
    assert shares(["x<think>y", "</think>z"], "xz") == ["x", "z"]
    # not a subsequence (a placeholder): whole on the first line
    assert shares(["a", "b"], "c") == ["c", ""]


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(folder))
    return folder


def test_kimi_wire_session_folder_repair_then_undo_gives_the_bytes_back(
    tmp_path: Path, state: Path
) -> None:
    """A Kimi session: context.jsonl and wire.jsonl are both read (no unknown file), both
    repaired, and undo puts back every byte."""
    session = tmp_path / ".kimi/sessions/0923ed9e609e90f4690ffaf2aab37d39/s1"
    session.mkdir(parents=True)
    context = (
        b'{"role": "_system_prompt", "content": "You are Kimi."}\n'
        b'{"role":"user","content":"What is 2+2?"}\n'
        b'{"role":"assistant","content":"<think>Two plus two.</think>The answer is 4."}\n'
    )
    (session / "context.jsonl").write_bytes(context)
    (session / "wire.jsonl").write_bytes(SPLIT)
    runner = CliRunner()
    scanned = runner.invoke(main, ["scan", "--isolated", str(session), "--output-format", "json"])
    assert scanned.exit_code == 1, scanned.output
    report = json.loads(scanned.stdout)
    by_file = report["summary"]["by_file"]
    assert {Path(p).name: f["format"] for p, f in by_file.items()} == {
        "context.jsonl": "kimi-cli",
        "wire.jsonl": "kimi-wire",
    }
    assert report["skipped"] == [] and report["errors"] == []
    assert report["summary"]["leaking_messages"] == 2
    fixed = runner.invoke(main, ["repair", "--in-place", "--include-active", str(session)])
    assert fixed.exit_code == 0, fixed.output
    assert b"</think>" not in (session / "wire.jsonl").read_bytes()
    manifest = next(state.glob("runs/*/manifest.json"))
    undone = runner.invoke(main, ["undo", str(manifest)])
    assert undone.exit_code == 0, undone.output
    assert (session / "wire.jsonl").read_bytes() == SPLIT
    assert (session / "context.jsonl").read_bytes() == context


ANSWER = "<think>Let me add: 2 + 2 = 4, ü.</think>The answer is **4**."


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.integers(0, len(ANSWER)), max_size=4).map(sorted),
    between=st.sampled_from(["status", "none"]),
)
def test_kimi_wire_any_split_gives_the_same_finding_and_a_clean_repair(
    cuts: list[int], between: str
) -> None:
    """However the recorder cut the text (merge flushes by an interrupting record, or a
    file of unmerged deltas), the run reads as the whole text; its repair re-reads as
    the visible text, with no delimiter left on any line."""
    bounds = [0, *cuts, len(ANSWER)]
    pieces = [ANSWER[a:b] for a, b in pairwise(bounds)]
    body: list[str] = []
    for n, piece in enumerate(pieces):
        if n and between == "status":
            body.append(status(5.0 + n))
        body.append(text(5.0 + n + 0.5, piece))
    data = wire(*turn(*body))
    found = sites(FMT, read(FMT, data))
    assert [s.text for s in found] == [ANSWER]
    whole = normalize(ANSWER)
    assert normalize(found[0].text).findings == whole.findings
    out = repair(FMT, data, [_repair_of(data)])
    assert out.placements[0].kind is PlacementKind.RECORD
    assert [s.text for s in sites(FMT, out.reread)] == [whole.visible]
    assert all(not normalize(s.text).findings for s in sites(FMT, out.reread))
    for record in out.reread:
        assert "<think>" not in record.raw.decode() or b'"think"' in record.raw
        assert b"</think>" not in record.raw
