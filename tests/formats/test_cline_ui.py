"""Cline, Roo Code and Kilo Code `ui_messages.json`: the task view's messages are read (the
answers, never the task), every shape the runtime never writes is an error, and a repair
moves the reasoning into a `say: "reasoning"` message before the answer, as the runtime does.

The documents are written here as the runtimes write them: compact `JSON.stringify` of
`ClineMessage`s, keys in the order `say()` and `addToClineMessages` set them (cline/cline
src/core/task/index.ts and message-state.ts; RooCodeInc/Roo-Code src/core/task/Task.ts).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import run
from tests.formats.support import FIXTURES, read, repair, session_files, sites
from thinkfix.cli import main
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.repair.verify import find_repairs
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import cline_ui, registry
from thinkfix.formats.detection import HEAD_BYTES, base_name, sample
from thinkfix.formats.records import Record
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

CLINE = get("cline")
MODEL = {"providerId": "ollama", "modelId": "deepseek-r1:32b", "mode": "act"}
TASK_DIR = "Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1780000000000"
LEAK = "<think>\nRead the test first.\n</think>\n\nI'll read the implementation first."


def _cline(kind: str, ts: int, text: str, say: str = "say", **extra: Any) -> dict[str, Any]:
    """A message as Cline's `say`/`ask` leave it: modelInfo, then the history index."""
    m: dict[str, Any] = {"ts": ts, "type": say, say: kind, "text": text}
    m.update(extra)
    m["modelInfo"] = MODEL
    m["conversationHistoryIndex"] = 0
    return m


def _dump(messages: list[dict[str, Any]]) -> bytes:
    return json.dumps(messages, separators=(",", ":"), ensure_ascii=False).encode()


def _task(text: str = LEAK) -> list[dict[str, Any]]:
    """A Cline task: the task, a request with a leaking answer and a tool ask, a completion."""
    return [
        {
            "ts": 1780000000000,
            "type": "say",
            "say": "task",
            "text": "The date test fails on leap years; fix it.",
            "modelInfo": MODEL,
            "conversationHistoryIndex": -1,
        },
        _cline("api_req_started", 1780000000100, '{"request":"<task>…</task>","tokensIn":12}'),
        _cline("text", 1780000004100, text, partial=False),
        _cline("tool", 1780000004200, '{"tool":"readFile","path":"src/date.ts"}', "ask"),
        _cline("api_req_started", 1780000009000, '{"request":"[read_file]","cost":0}'),
        _cline("completion_result", 1780000012000, "Fixed: `npm test` passes.", partial=False),
        {"ts": 1780000012001, "type": "ask", "ask": "completion_result", "text": ""},
    ]


DOC = _dump(_task())


def _roo() -> list[dict[str, Any]]:
    """Roo Code (and Kilo Code): the task said as `text`, no modelInfo, a native reasoning."""
    return [
        {"ts": 1780000000000, "type": "say", "say": "text", "text": "<think>x</think> the task"},
        {"ts": 1780000000050, "type": "say", "say": "api_req_started", "text": "{}"},
        {"ts": 1780000000900, "type": "say", "say": "reasoning", "text": "Plan.", "partial": False},
        {"ts": 1780000001000, "type": "say", "say": "text", "text": LEAK, "partial": False},
    ]


def _records(data: bytes) -> list[Record]:
    return read(CLINE, data, f"{TASK_DIR}/ui_messages.json")


def _repairs(data: bytes) -> list[Repair]:
    """The repairs the engine makes of a document (its native reasoning and rule 4 passed)."""
    found = find_repairs(CLINE, _records(data), ScanOptions())
    return [Repair(site, result.visible, result.extracted) for site, result in found]


# --- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path,expected",
    [
        (f"{TASK_DIR}/ui_messages.json", "cline"),
        ("x/globalStorage/rooveterinaryinc.roo-cline/tasks/1/ui_messages.json", "roo-code"),
        ("x/globalStorage/kilocode.kilo-code/tasks/1/ui_messages.json", "kilo-code"),
        ("copied.json", "cline"),  # by its shape
    ],
)
def test_cline_ui_detection_names_the_runtime(path: str, expected: str) -> None:
    found = registry.detect(DOC, path)
    assert found is not None and found[0].id == expected


def test_cline_ui_truncated_head_is_told_by_its_name_and_opening_bytes() -> None:
    big = _dump([_cline("text", 1780000000000 + i, "x" * 2000) for i in range(60)])
    head = big[:HEAD_BYTES]
    assert sample(head).doc is None
    found = registry.detect(head, f"{TASK_DIR}/ui_messages.json")
    assert found is not None and found[0].id == "cline"


def test_cline_ui_claims_no_other_fixture() -> None:
    for path in session_files(FIXTURES):
        head = path.read_bytes()[:HEAD_BYTES]
        claimed = cline_ui.detects(sample(head).doc, head, base_name(str(path)))
        assert claimed == (path.name == "ui_messages.json"), path


def test_cline_ui_history_beside_it_is_read_as_history() -> None:
    history = (FIXTURES / "cline/tasks/1775300000123/api_conversation_history.json").read_bytes()
    assert not cline_ui.is_ui(json.loads(history))
    assert all(s.json_path.endswith("content[0].text") for s in sites(CLINE, read(CLINE, history)))


# --- reading --------------------------------------------------------------------------------


def test_cline_ui_reads_the_answers_with_their_model_and_ts() -> None:
    (record,) = _records(DOC)
    assert CLINE.assistant_messages(record) == 2
    found = list(CLINE.sites(record))
    assert [(s.json_path, s.message_id, s.model) for s in found] == [
        ("[2].text", "1780000004100", "deepseek-r1:32b"),
        ("[5].text", "1780000012000", "deepseek-r1:32b"),
    ]
    # the tool ask after the text, in the same request, is rule 4's evidence
    assert [s.followed_by_tool_call for s in found] == [True, False]


def test_cline_ui_never_reads_the_task_and_takes_the_requests_reasoning_as_native() -> None:
    (record,) = _records(_dump(_roo()))
    found = list(CLINE.sites(record))
    assert [(s.json_path, s.native_reasoning, s.model) for s in found] == [
        ("[3].text", "Plan.", None)
    ]


def test_cline_ui_scan_counts_the_fixture_answers() -> None:
    report = scan([str(FIXTURES / "cline/tasks/1775300000123/ui_messages.json")], jobs=1)
    assert not report.errors
    assert [(f.json_path, f.kind) for f in report.findings] == [("[1].text", "block")]


@pytest.mark.parametrize(
    "bad,where",
    [
        ("not a message", "[2]"),
        ({"type": "say", "say": "text", "text": LEAK}, "[2].ts"),
        ({"ts": "1780000004100", "type": "say", "say": "text", "text": LEAK}, "[2].ts"),
        ({"ts": True, "type": "say", "say": "text", "text": LEAK}, "[2].ts"),
        ({"ts": 1780000004100, "type": "assistant", "say": "text", "text": LEAK}, "[2].type"),
        ({"ts": 1780000004100, "type": "say", "text": LEAK}, "[2].say"),
        ({"ts": 1780000004100, "type": "say", "say": ["text"], "text": LEAK}, "[2].say"),
        ({"ts": 1780000004100, "type": "ask", "say": "text", "text": LEAK}, "[2].ask"),
        ({"ts": 1780000004100, "type": "say", "say": "text", "text": [LEAK]}, "[2].text"),
        ({"ts": 1780000004100, "type": "say", "say": "text", "text": {"t": LEAK}}, "[2].text"),
        ({"ts": 1780000004100, "type": "say", "say": "tool", "text": 7}, "[2].text"),
    ],
)
def test_cline_ui_a_message_the_runtime_never_writes_is_an_error(
    tmp_path: Path, bad: Any, where: str
) -> None:
    messages: list[Any] = _task()
    messages[2] = bad
    path = tmp_path / "saoudrizwan.claude-dev" / "tasks" / "1" / "ui_messages.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(_dump(messages))
    report = scan([str(path)], jobs=1)
    assert report.exit_code() is ExitCode.ERROR
    assert [e.line for e in report.errors] == [1]
    assert "unknown shape" in report.errors[0].message and where in report.errors[0].message
    assert not report.findings


# --- repair ---------------------------------------------------------------------------------


def test_cline_ui_repair_puts_a_reasoning_message_before_the_answer() -> None:
    out = repair(CLINE, DOC, _repairs(DOC))
    (placement,) = out.placements
    assert placement.kind is PlacementKind.BLOCK and placement.json_path == "[2]"
    after = json.loads(out.data)
    assert after[2] == {
        "ts": 1780000004099,
        "type": "say",
        "say": "reasoning",
        "text": "Read the test first.",
        "partial": False,
        "modelInfo": MODEL,
        "conversationHistoryIndex": 0,
    }
    assert after[3] == _task("I'll read the implementation first.")[2]
    assert after[:2] + after[3:] == _task("I'll read the implementation first.")
    # written as the runtime writes it: compact, no trailing newline, key order kept
    assert out.data.startswith(b'[{"ts":1780000000000,"type":"say"') and out.data.endswith(b"]")
    assert not _repairs(out.data)


def test_cline_ui_repair_of_roo_keeps_its_fields_and_dedupes_the_native_reasoning() -> None:
    messages = _roo()
    messages[3]["text"] = "<think>Plan.</think>Done."
    data = _dump(messages)
    out = repair(CLINE, data, _repairs(data))
    assert [p.kind for p in out.placements] == [PlacementKind.NONE]
    assert json.loads(out.data)[3] == {
        "ts": 1780000001000,
        "type": "say",
        "say": "text",
        "text": "Done.",
        "partial": False,
    }


def test_cline_ui_no_free_millisecond_keeps_the_reasoning_in_the_manifest() -> None:
    messages = _task()
    messages[1]["ts"] = messages[2]["ts"] - 1  # api_req_started one ms before the answer
    data = _dump(messages)
    out = repair(CLINE, data, _repairs(data))
    assert [p.kind for p in out.placements] == [PlacementKind.MANIFEST]
    assert len(json.loads(out.data)) == len(messages)
    assert json.loads(out.data)[2]["text"] == "I'll read the implementation first."


def test_cline_ui_all_reasoning_text_becomes_the_reasoning_message_in_place() -> None:
    data = _dump(_task("<think>Read the test first.</think>"))
    out = repair(CLINE, data, _repairs(data))
    assert [(p.kind, p.json_path) for p in out.placements] == [(PlacementKind.BLOCK, "[2]")]
    expected = _task("Read the test first.")
    expected[2]["say"] = "reasoning"
    assert json.loads(out.data) == expected
    assert not _repairs(out.data)


def test_cline_ui_all_reasoning_completion_result_is_refused() -> None:
    messages = _task("Done.")
    messages[5]["text"] = "<think>All done, I think.</think>"
    data = _dump(messages)
    out = repair(CLINE, data, _repairs(data))
    assert [p.kind for p in out.placements] == [PlacementKind.REFUSED]
    assert out.data == data


def test_cline_ui_repair_in_place_then_undo_restores_the_bytes(tmp_path: Path) -> None:
    work = tmp_path / "saoudrizwan.claude-dev" / "tasks" / "1780000000000" / "ui_messages.json"
    work.parent.mkdir(parents=True)
    work.write_bytes(DOC)
    runner = CliRunner()
    shown = runner.invoke(main, ["diff", "--output-format", "json", str(work)])
    assert shown.exit_code == 1, shown.output
    assert "Read the test first." in shown.stdout
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN, result
    assert not scan([str(work)], jobs=1).findings
    assert b'"say":"reasoning","text":"Read the test first."' in work.read_bytes()
    assert result.manifest_path is not None
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert work.read_bytes() == DOC


def test_cline_ui_show_prints_the_task_the_reasoning_and_the_answers() -> None:
    (record,) = _records(_dump(_roo()))
    turns = list(CLINE.turns(record))
    assert [(t.role.value, t.parts[0].kind.value) for t in turns] == [
        ("user", "text"),
        ("assistant", "thinking"),
        ("assistant", "text"),
    ]
    assert turns[2].parts[0].path == (3, "text") and turns[2].timestamp is not None


# --- the property ---------------------------------------------------------------------------

_WORDS = st.text(alphabet="abc xyz.\n", min_size=1, max_size=30).filter(lambda t: t.strip())


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    answers=st.lists(
        st.tuples(_WORDS, _WORDS, st.sampled_from(["text", "completion_result"])),
        min_size=1,
        max_size=4,
    ),
    gap=st.integers(min_value=1, max_value=3),
)
def test_cline_ui_property_repair_leaves_no_leak_keeps_reasoning_and_undo_restores(
    answers: list[tuple[str, str, str]], gap: int
) -> None:
    messages = _task()[:2]
    ts = 1780000001000
    for thought, answer, kind in answers:
        ts += gap
        messages.append(_cline(kind, ts, f"<think>{thought}</think>{answer}", partial=False))
    data = _dump(messages)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "saoudrizwan.claude-dev" / "tasks" / "1" / "ui_messages.json"
        work.parent.mkdir(parents=True)
        work.write_bytes(data)
        result = run([work], WriteMode.IN_PLACE, Path(tmp))
        assert result.exit_code() is ExitCode.CLEAN, result
        repaired = work.read_bytes()
        assert not _repairs(repaired)
        after = json.loads(repaired)
        # nothing lost: every answer's reasoning is in a reasoning message before it (a gap
        # of one millisecond leaves the next one's in the manifest), every answer kept
        reasoning = [m["text"] for m in after if m.get("say") == "reasoning"]
        for thought, _, _ in answers:
            assert thought.strip() in reasoning or gap == 1
        assert [m["ts"] for m in after if m.get("say") != "reasoning"] == [
            m["ts"] for m in messages
        ]
        assert len({m["ts"] for m in after}) == len(after)
        assert result.manifest_path is not None
        assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
        assert work.read_bytes() == data


_SOUP = st.lists(
    st.sampled_from(["<think>", "</think>", "<thought>", "</thought>", "◁think▷", "◁/think▷"])
    | st.text(alphabet="ab \n`", min_size=1, max_size=8),
    min_size=1,
    max_size=8,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_SOUP, min_size=1, max_size=3), tool=st.booleans())
def test_cline_ui_property_any_leak_is_repaired_or_refused_and_nothing_else_moves(
    texts: list[str], tool: bool
) -> None:
    messages = _task()[:2]
    for n, text in enumerate(texts):
        messages.append(_cline("text", 1780000001000 + 10 * n, text, partial=False))
        if tool:
            messages.append(_cline("tool", 1780000001005 + 10 * n, "{}", "ask"))
    data = _dump(messages)
    repairs = _repairs(data)
    out = repair(CLINE, data, repairs)  # ids, numbers, texts and no removal checked there
    after = json.loads(out.data)
    refused = {p.site.json_path for p in out.placements if p.kind is PlacementKind.REFUSED}
    left = {r.site.json_path for r in _repairs(out.data)}
    assert len(left) == len(refused)  # what a repair refuses is all that still leaks
    # every message the file had is still there, in order, with its ts; the new ones are
    # reasoning messages, each right before its answer
    kept = [m for m in after if m["ts"] in {o["ts"] for o in messages}]
    assert [m["ts"] for m in kept] == [m["ts"] for m in messages]
    for j, m in enumerate(after):
        if m["ts"] not in {o["ts"] for o in messages}:
            assert m["say"] == "reasoning" and after[j + 1]["ts"] == m["ts"] + 1
    reasoning = "\n\n".join(m["text"] for m in after if m.get("say") == "reasoning")
    for rep, placement in zip(repairs, out.placements):
        if placement.applied:
            assert all(s.strip() in reasoning for s in rep.thinking if s.strip())
