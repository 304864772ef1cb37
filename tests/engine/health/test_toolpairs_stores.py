"""`tool-pairs` on the database formats (Crush, Zed, Cursor), whose stores are built with
each runtime's own schema by the formats' test helpers, and what each runtime loads.

Crush pairs over a session from its summary on (`preparePrompt`, `getSessionMessages` in
internal/agent/agent.go); Zed within each agent message (`AgentMessage::to_request`,
crates/agent/src/thread.rs); Cursor within a bubble's `toolFormerData`.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from tests.formats import crush_db, cursor_db, zed_db
from thinkfix.engine.health.run import check_file
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import Problem
from thinkfix.formats import registry

CALL = Problem.CALL_WITHOUT_RESULT
RESULT = Problem.RESULT_WITHOUT_CALL


def _found(path: Path, fmt: str) -> list[tuple[Problem, str, str]]:
    assert registry.detect_file(str(path)).id == fmt
    found = check_file(str(path), registry.get(fmt), (Check.TOOL_PAIRS,)).findings
    return [(f.problem, f.json_path, f.detail) for f in found]


# --- Crush ----------------------------------------------------------------------------------

VIEW = {"file_path": "/home/ana/src/shop/cart.go"}


def _crush_turns(*calls: str, results: tuple[str, ...] = ()) -> list[crush_db.Message]:
    """A user prompt, an assistant message making `calls`, a tool message answering
    `results`, then the answer."""
    return [
        ("u-1", "user", [crush_db.text("Why is the total off?"), crush_db.finish("stop", 0)]),
        (
            "a-1",
            "assistant",
            [
                crush_db.text("Reading the files."),
                *(crush_db.tool_call(c, "view", VIEW) for c in calls),
                crush_db.finish("tool_use", crush_db.T0 + 12),
            ],
        ),
        (
            "t-1",
            "tool",
            [*(crush_db.tool_result(r, "view", "package cart") for r in results)]
            + [crush_db.finish("stop", 0)],
        ),
        ("a-2", "assistant", [crush_db.text("Sum cents."), crush_db.finish("end_turn", 0)]),
    ]


def test_crush_a_paired_session_is_clean(tmp_path: Path) -> None:
    db = crush_db.build(tmp_path / "crush.db", _crush_turns("call_a", results=("call_a",)))
    assert _found(db, "crush") == []


def test_crush_a_call_without_result_and_a_result_without_call(tmp_path: Path) -> None:
    turns = _crush_turns("call_a", "call_b", results=("call_a", "call_z"))
    db = crush_db.build(tmp_path / "crush.db", turns)
    assert _found(db, "crush") == [(CALL, "parts[2]", "call_b"), (RESULT, "parts[1]", "call_z")]


def _summarize(db: Path, message: str, reason: str) -> None:
    """Mark a message as the session's summary, as `Summarize` leaves it."""
    with closing(sqlite3.connect(db)) as con:
        con.execute("UPDATE messages SET is_summary_message = 1 WHERE id = ?", (message,))
        if reason == "end_turn":
            con.execute("UPDATE sessions SET summary_message_id = ?", (message,))
        con.commit()


def test_crush_sends_the_session_from_its_summary_on(tmp_path: Path) -> None:
    """A call before the summary is not sent (`getSessionMessages`); one after it is."""
    turns = _crush_turns("call_old")
    summary = ("s-1", "assistant", [crush_db.text("Summary."), crush_db.finish("end_turn", 0)])
    after = (
        "a-3",
        "assistant",
        [crush_db.tool_call("call_new", "view", VIEW), crush_db.finish("tool_use", 0)],
    )
    db = crush_db.build(tmp_path / "crush.db", [*turns, summary, after])
    _summarize(db, "s-1", "end_turn")
    assert _found(db, "crush") == [(CALL, "parts[0]", "call_new")]


def test_crush_a_failed_summary_cuts_nothing(tmp_path: Path) -> None:
    turns = _crush_turns("call_old")
    summary = ("s-1", "assistant", [crush_db.text("Summ"), crush_db.finish("error", 0)])
    db = crush_db.build(tmp_path / "crush.db", [*turns, summary])
    _summarize(db, "s-1", "error")
    assert _found(db, "crush") == [(CALL, "parts[1]", "call_old")]


def test_crush_pairs_each_session_on_its_own(tmp_path: Path) -> None:
    db = crush_db.build(tmp_path / "crush.db", _crush_turns("call_a"))
    other = [(f"x{mid}", role, parts) for mid, role, parts in _crush_turns(results=("call_a",))]
    crush_db.add_session(db, other, "7a1b2c3d-0000-4e5f-8a9b-0c1d2e3f4a5b")  # read first
    assert _found(db, "crush") == [(RESULT, "parts[0]", "call_a"), (CALL, "parts[1]", "call_a")]


# --- Zed ------------------------------------------------------------------------------------


def _use(call_id: str) -> dict[str, Any]:
    return {
        "ToolUse": {
            "id": call_id,
            "name": "read_file",
            "raw_input": '{"path":"cart.rs"}',
            "input": {"path": "cart.rs"},
            "is_input_complete": True,
            "thought_signature": None,
        }
    }


def _result(call_id: str) -> dict[str, Any]:
    return {
        "tool_use_id": call_id,
        "tool_name": "read_file",
        "is_error": False,
        "content": {"Text": "fn total() {}"},
        "output": None,
    }


def _zed(tmp_path: Path, *messages: Any) -> Path:
    doc = zed_db.thread("Fix the cart total", [zed_db.user("why?"), *messages])
    return zed_db.build(tmp_path / "threads.db", [(zed_db.THREAD, doc)])


def test_zed_a_paired_thread_is_clean(tmp_path: Path) -> None:
    db = _zed(tmp_path, zed_db.agent(_use("toolu_1"), results={"toolu_1": _result("toolu_1")}))
    assert _found(db, "zed") == []


def test_zed_a_call_without_result_and_a_result_without_call(tmp_path: Path) -> None:
    message = zed_db.agent(
        {"Text": "Reading."},
        _use("toolu_1"),
        _use("toolu_2"),
        results={"toolu_1": _result("toolu_1"), "toolu_9": _result("toolu_9")},
    )
    base = "thread.messages[1].Agent"
    assert _found(_zed(tmp_path, message), "zed") == [
        (CALL, f"{base}.content[2].ToolUse", "toolu_2"),
        (RESULT, f"{base}.tool_results.toolu_9", "toolu_9"),
    ]


def test_zed_pairs_within_each_message(tmp_path: Path) -> None:
    """`to_request` sends a message's results after that message alone: a result kept in
    the next message answers nothing, and the call it was for is dropped."""
    db = _zed(
        tmp_path,
        zed_db.agent(_use("toolu_1")),
        zed_db.agent({"Text": "Done."}, results={"toolu_1": _result("toolu_1")}),
    )
    assert _found(db, "zed") == [
        (CALL, "thread.messages[1].Agent.content[0].ToolUse", "toolu_1"),
        (RESULT, "thread.messages[2].Agent.tool_results.toolu_1", "toolu_1"),
    ]


# --- Cursor ---------------------------------------------------------------------------------


def _tool(call_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "tool": 5,
        "toolIndex": 0,
        "modelCallId": f"{call_id}-model",
        "toolCallId": call_id,
        "status": "completed",
        "rawArgs": cursor_db.js({"target_file": "src/cart.ts"}),
        "name": "read_file",
        "params": cursor_db.js({"targetFile": "src/cart.ts"}),
        **extra,
    }


def test_cursor_a_call_whose_result_was_never_stored(tmp_path: Path) -> None:
    bubbles = [
        cursor_db.user("u-1", "Why is the total off?"),
        cursor_db.assistant("a-1", "", toolFormerData=_tool("toolu_1", result='{"contents":"x"}')),
        cursor_db.assistant("a-2", "", toolFormerData=_tool("toolu_2", status="loading")),
        cursor_db.assistant("a-3", "Sum cents."),
    ]
    db = cursor_db.build(tmp_path / "state.vscdb", {cursor_db.COMPOSER: bubbles})
    assert _found(db, "cursor") == [(CALL, "bubble.toolFormerData", "toolu_2")]


def test_cursor_a_paired_store_is_clean(tmp_path: Path) -> None:
    bubbles = [cursor_db.assistant("a-1", "", toolFormerData=_tool("toolu_1", result="{}"))]
    db = cursor_db.build(tmp_path / "state.vscdb", {cursor_db.COMPOSER: bubbles})
    assert _found(db, "cursor") == []
