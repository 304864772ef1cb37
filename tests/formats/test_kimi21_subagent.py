"""Kimi CLI's parent `wire.jsonl` wraps each event of a sub-agent in a `SubagentEvent`
(`src/kimi_cli/subagents/runner.py`, `_make_ui_loop_fn`: `SubagentEvent(parent_tool_call_id,
agent_id, subagent_type, event=msg)`). The web UI replays the parent's wire on every session
open (`src/kimi_cli/web/api/sessions.py`, `replay_history`) and shows a nested text part as
a text step, a nested think part as a thinking step, inside the parent's Agent tool call
(`web/src/hooks/useSessionStream.ts`, `processSubagentEvent`). So a nested leak is read in
the parent's file (each sub-agent's events a lane of their own, runs as at the top level)
and repaired there with a nested think part before the run; the sub-agent's own
`subagents/<id>/wire.jsonl` holds the same text and is read as its own file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.support import read, repair, sites
from tests.formats.test_kimi_cli import KIMI_PYTHON
from tests.formats.test_kimi_wire import (
    META,
    _line,
    status,
    text,
    think,
    tool_call,
    tool_result,
    turn,
    wire,
)
from thinkfix import normalize
from thinkfix.cli import main
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("kimi-wire")
NESTED = "message.payload.event.payload.text"
LEAK = "<think>Look in src first; é.</think>Found it in src/app.py."


def sub(stamp: float, line: str, agent: str = "a1234567", call: str = "call_agent") -> str:
    """`line`'s message wrapped as the parent's recorder writes a sub-agent's event."""
    event = json.loads(line)["message"]
    payload = {
        "parent_tool_call_id": call,
        "agent_id": agent,
        "subagent_type": "explore",
        "event": event,
    }
    return _line(stamp, "SubagentEvent", payload)


def agent_call(stamp: float) -> str:
    record = json.loads(tool_call(stamp))
    function = {"name": "Agent", "arguments": '{"prompt": "find it"}'}
    record["message"]["payload"].update(id="call_agent", function=function)
    return json.dumps(record, ensure_ascii=False)


def parent(*nested: str) -> bytes:
    return wire(
        *turn(
            text(1.0, "I will ask a sub-agent."),
            agent_call(1.1),
            *nested,
            tool_result(9.0).replace('"call_123"', '"call_agent"'),
        )
    )


def _leaks(data: bytes) -> list[tuple[int, str, str]]:
    return [
        (s.line, s.json_path, s.text)
        for s in sites(FMT, read(FMT, data))
        if normalize(s.text, native_reasoning=s.native_reasoning).findings
    ]


def _fixed(data: bytes) -> list[Repair]:
    scanned = [
        (s, normalize(s.text, native_reasoning=s.native_reasoning))
        for s in sites(FMT, read(FMT, data))
    ]
    return [Repair(s, r.visible, tuple(r.thinking)) for s, r in scanned if r.findings]


SPLIT = parent(
    sub(2.0, _line(2.0, "StepBegin", {"n": 1})),
    sub(2.1, text(2.1, LEAK[:20])),
    sub(2.2, status(2.2)),
    sub(2.3, text(2.3, LEAK[20:])),
    sub(2.4, _line(2.4, "StepBegin", {"n": 2})),
)


def test_kimi21_a_nested_text_run_is_read_in_the_parent() -> None:
    """Failed before: the nested parts were not read, so the parent's wire was clean."""
    assert _leaks(SPLIT) == [(7, NESTED, LEAK)]
    assert sum(FMT.assistant_messages(r) for r in read(FMT, SPLIT)) == 2


def test_kimi21_each_sub_agent_is_a_lane_of_its_own() -> None:
    """Sub-agents run side by side: their events interleave in the parent's wire, and a
    parent record between a sub-agent's parts does not split its text."""
    data = parent(
        sub(2.1, text(2.1, LEAK[:20])),
        sub(2.15, text(2.15, "<think>Other.</think>"), agent="b7654321", call="call_b"),
        status(2.2),
        sub(2.3, text(2.3, LEAK[20:])),
        sub(2.35, text(2.35, "Other answer."), agent="b7654321", call="call_b"),
    )
    assert _leaks(data) == [
        (6, NESTED, LEAK),
        (7, NESTED, "<think>Other.</think>Other answer."),
    ]


def test_kimi21_a_nested_run_ends_at_the_sub_agents_think_or_tool_call() -> None:
    data = parent(
        sub(2.1, think(2.1, "Plan.")),
        sub(2.2, text(2.2, "<think>a</think>")),
        sub(2.3, _line(2.3, "ToolCall", {"type": "function", "id": "c", "function": {}})),
        sub(2.4, text(2.4, "b")),
    )
    found = [(s.line, s.text, s.native_reasoning) for s in sites(FMT, read(FMT, data))]
    assert found[1:] == [(7, "<think>a</think>", "Plan."), (9, "b", "Plan.")]


def test_kimi21_nested_repair_puts_a_nested_think_part_before_the_run() -> None:
    """Failed before: nothing was read, so nothing repaired."""
    out = repair(FMT, SPLIT, _fixed(SPLIT))
    (placement,) = out.placements
    assert placement.kind is PlacementKind.RECORD
    lines = [json.loads(x) for x in out.data.splitlines()]
    inserted = lines[6]["message"]
    assert inserted == {
        "type": "SubagentEvent",
        "payload": {
            "parent_tool_call_id": "call_agent",
            "agent_id": "a1234567",
            "subagent_type": "explore",
            "event": {
                "type": "ContentPart",
                "payload": {"type": "think", "think": "Look in src first; é.", "encrypted": None},
            },
        },
    }
    assert lines[6]["timestamp"] == 2.1
    shown = "".join(
        x["message"]["payload"]["event"]["payload"].get("text", "")
        for x in lines
        if x.get("message", {}).get("type") == "SubagentEvent"
    )
    assert shown == "Found it in src/app.py."
    assert not _leaks(out.data)
    assert not _fixed(out.data)  # a second repair changes nothing


def test_kimi21_legacy_task_tool_call_id_is_a_lane_too() -> None:
    line = sub(2.1, text(2.1, LEAK))
    record = json.loads(line)
    payload = record["message"]["payload"]
    record["message"]["payload"] = {"task_tool_call_id": "call_old", "event": payload["event"]}
    data = parent(json.dumps(record, ensure_ascii=False))
    assert _leaks(data) == [(6, NESTED, LEAK)]
    out = repair(FMT, data, _fixed(data))
    inserted = json.loads(out.data.splitlines()[5])["message"]["payload"]
    assert list(inserted) == ["task_tool_call_id", "event"]


_PART = {"type": "text", "text": LEAK}


@pytest.mark.parametrize(
    "payload",
    [
        ["ContentPart", _PART],
        {"parent_tool_call_id": "c", "event": ["ContentPart", _PART]},
        {"parent_tool_call_id": "c", "event": {"type": ["ContentPart"], "payload": _PART}},
        {"parent_tool_call_id": "c", "event": {"type": "ContentPart", "payload": [_PART]}},
        {
            "parent_tool_call_id": "c",
            "event": {"type": "ContentPart", "payload": {"type": "text", "text": [LEAK]}},
        },
    ],
)
def test_kimi21_a_nested_event_of_no_shape_kimi_writes_is_an_error(
    tmp_path: Path, payload: Any
) -> None:
    path = tmp_path / ".kimi/sessions/abc/s1/wire.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(parent(_line(2.0, "SubagentEvent", payload), sub(2.1, text(2.1, LEAK))))
    report = scan([str(path)], ScanOptions(), jobs=1)
    assert report.exit_code() == ExitCode.ERROR, report.errors
    assert report.errors[0].line == 6


def test_kimi21_parent_and_sub_agent_files_each_count_their_copy_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sub-agent's own wire.jsonl holds the same run: each file is a place the text is
    shown (the parent's in the web UI's Agent step, the sub-agent's own when it is resumed),
    so each counts it once (as context.jsonl and wire.jsonl each count an answer), neither
    file twice; repair fixes both and undo gives both back."""
    state = tmp_path / "state"
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(state))
    session = tmp_path / ".kimi/sessions/0923ed9e609e90f4690ffaf2aab37d39/s1"
    own = session / "subagents" / "a1234567" / "wire.jsonl"
    own.parent.mkdir(parents=True)
    (session / "wire.jsonl").write_bytes(SPLIT)
    own_data = wire(*turn(text(2.1, LEAK[:20]), status(2.2), text(2.3, LEAK[20:])))
    own.write_bytes(own_data)
    runner = CliRunner()
    scanned = runner.invoke(main, ["scan", "--isolated", str(session), "--output-format", "json"])
    assert scanned.exit_code == 1, scanned.output
    report = json.loads(scanned.stdout)
    by_file = {
        str(Path(p).relative_to(session)): f for p, f in report["summary"]["by_file"].items()
    }
    assert {p: f["leaking_messages"] for p, f in by_file.items()} == {
        "wire.jsonl": 1,
        "subagents/a1234567/wire.jsonl": 1,
    }
    files = {session / "wire.jsonl": SPLIT, own: own_data}
    fixed = runner.invoke(main, ["repair", "--in-place", "--include-active", str(session)])
    assert (fixed.exit_code, fixed.output) == (0, fixed.output)
    assert not [p for p in files if b"</think>" in p.read_bytes()]
    undone = runner.invoke(main, ["undo", str(next(state.glob("runs/*/manifest.json")))])
    assert (undone.exit_code, {p: p.read_bytes() for p in files}) == (0, files), undone.output


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.integers(0, len(LEAK)), max_size=4).map(sorted),
    between=st.lists(st.sampled_from(["status", "parent", "other"]), min_size=4, max_size=4),
)
def test_kimi21_a_nested_leak_is_one_site_however_it_is_split(
    cuts: list[int], between: list[str]
) -> None:
    """However the sub-agent's text is split over records, with its own status updates, the
    parent's records or another sub-agent's between them: one site, the whole text; the
    repair leaves the visible text and the reasoning once."""
    pieces = [LEAK[a:b] for a, b in zip([0, *cuts], [*cuts, len(LEAK)]) if b > a]
    lines = []
    for n, piece in enumerate(pieces):
        lines.append(sub(2.0 + n, text(2.0 + n, piece)))
        gap = between[n % len(between)]
        if gap == "status":
            lines.append(sub(2.5 + n, status(2.5 + n)))
        elif gap == "parent":
            lines.append(status(2.5 + n))
        else:
            lines.append(sub(2.5 + n, text(2.5 + n, "x"), agent="b7654321", call="call_b"))
    data = parent(*lines)
    found = [s for s in _leaks(data)]
    assert [(p, t) for _, p, t in found] == [(NESTED, LEAK)]
    out = repair(FMT, data, _fixed(data))
    assert not _leaks(out.data)
    assert out.data.decode().count("Look in src first") == 1
    assert META in out.data.decode()


#: Run by an interpreter with Kimi CLI installed: each line of the wire file given is parsed
#: and dumped again as `WireFile` writes it (`parse_wire_file_line`, `_dump_line`), and the
#: sub-agent events are folded into steps as the web UI's `processSubagentEvent` folds them.
_KIMI_READS = """
import json, sys
from kimi_cli.wire.file import WireMessageRecord, _dump_line, parse_wire_file_line
from kimi_cli.wire.types import SubagentEvent
from kosong.message import TextPart, ThinkPart

same, steps = True, []
for line in open(sys.argv[1], encoding="utf-8"):
    parsed = parse_wire_file_line(line)
    same = same and _dump_line(parsed) == line
    if not isinstance(parsed, WireMessageRecord):
        continue
    message = parsed.to_wire_message()
    if isinstance(message, SubagentEvent):
        kind = {ThinkPart: "thinking", TextPart: "text"}.get(type(message.event))
        text = getattr(message.event, "think", None) or getattr(message.event, "text", None)
        if kind and text:
            if steps and steps[-1][0] == kind:
                steps[-1][1] += text
            else:
                steps.append([kind, text])
print(json.dumps({"same": same, "steps": steps}))
"""


@pytest.mark.skipif(not KIMI_PYTHON, reason="THINKFIX_KIMI_PYTHON names no Kimi CLI interpreter")
def test_kimi21_kimi_reads_the_repaired_parent_wire_itself(tmp_path: Path) -> None:
    """Kimi CLI parses every line of the repaired parent wire and writes each back byte for
    byte, and the web UI's steps of the Agent call become the reasoning as a thinking step and
    the answer as a text step."""
    out = repair(FMT, SPLIT, _fixed(SPLIT))
    path = tmp_path / "wire.jsonl"
    path.write_bytes(out.data)
    run = subprocess.run(
        [KIMI_PYTHON, "-c", _KIMI_READS, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(run.stdout) == {
        "same": True,
        "steps": [["thinking", "Look in src first; é."], ["text", "Found it in src/app.py."]],
    }
