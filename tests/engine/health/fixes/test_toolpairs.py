"""`--fix tool-pairs`: each runtime's own result for a call left without one."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

import pytest

from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.engine.health.fixes.toolpairs import CLAUDE_INTERRUPTED, CODEX_ABORTED, PI_NO_RESULT
from thinkfix.formats import registry
from thinkfix.formats.repairs import Edits


@dataclass(frozen=True)
class Found:
    """A `call-without-result` finding as the `tool-pairs` check gives it."""

    record_index: int
    detail: str
    problem: str = "call-without-result"
    line: int = 0
    end_line: int = 0


def _lines(entries: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in entries)


def _fixed(fmt: str, data: bytes, findings: list[Found]) -> list[dict[str, Any]]:
    records = list(registry.get(fmt).read(io.BytesIO(data)))
    planned = plan_fixes(fmt, records, findings, {Fix.TOOL_PAIRS})
    edits, _ = merged(Edits(len(records), {}, {}), planned)
    out = b"".join(r.raw + r.eol for r in edits.after(records))
    return [json.loads(line) for line in out.splitlines() if line.strip()]


ENVELOPE = {
    "isSidechain": False,
    "userType": "external",
    "cwd": "/w",
    "sessionId": "s1",
    "version": "2.1.90",
    "gitBranch": "main",
}


def _claude_session() -> list[dict[str, Any]]:
    def tool_use(uid: str, parent: str, call: str) -> dict[str, Any]:
        content = [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}}]
        return {
            "parentUuid": parent,
            **ENVELOPE,
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": content,
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
            "requestId": "req_1",
            "type": "assistant",
            "uuid": uid,
            "timestamp": "2026-01-01T00:00:01Z",
        }

    return [
        {
            "parentUuid": None,
            **ENVELOPE,
            "type": "user",
            "message": {"role": "user", "content": "list files"},
            "uuid": "u1",
            "timestamp": "2026-01-01T00:00:00Z",
        },
        tool_use("a1", "u1", "toolu_1"),
        tool_use("a2", "a1", "toolu_2"),
        {
            "parentUuid": "a2",
            **ENVELOPE,
            "type": "user",
            "message": {"role": "user", "content": "never mind"},
            "uuid": "u2",
            "timestamp": "2026-01-01T00:00:09Z",
        },
    ]


def _chain(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records Claude Code resumes: from the newest back along `parentUuid`."""
    by_uuid = {e["uuid"]: e for e in entries}
    out, at = [], entries[-1]
    while at is not None:
        out.append(at)
        at = by_uuid.get(at.get("parentUuid"))
    return out[::-1]


def test_claude_code_gets_its_interrupted_result_after_the_whole_message() -> None:
    out = _fixed(
        "claude-code", _lines(_claude_session()), [Found(1, "toolu_1"), Found(2, "toolu_2")]
    )
    assert [e["uuid"] for e in out][:3] == ["u1", "a1", "a2"]
    results = out[3:5]
    assert [r["message"]["content"][0]["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"]
    for r in results:
        block = r["message"]["content"][0]
        assert block["content"] == CLAUDE_INTERRUPTED and block["is_error"] is True
        assert r["type"] == "user" and r["toolUseResult"] == CLAUDE_INTERRUPTED
        assert r["sessionId"] == "s1" and r["cwd"] == "/w"
    assert results[0]["parentUuid"] == "a2"
    assert results[1]["parentUuid"] == results[0]["uuid"]
    # the chain Claude Code follows back from the newest line passes through both results
    chain = _chain(out)
    calls = {b["id"] for e in chain for b in _blocks(e) if b.get("type") == "tool_use"}
    answered = {
        b["tool_use_id"] for e in chain for b in _blocks(e) if b.get("type") == "tool_result"
    }
    assert calls == answered == {"toolu_1", "toolu_2"}


def _blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    content = entry.get("message", {}).get("content")
    return content if isinstance(content, list) else []


def test_claude_code_fix_plans_the_same_ids_twice() -> None:
    data = _lines(_claude_session())
    found = [Found(2, "toolu_2")]
    assert _fixed("claude-code", data, found) == _fixed("claude-code", data, found)


def test_claude_code_server_tool_calls_are_left_alone() -> None:
    session = _claude_session()
    session[2]["message"]["content"][0]["type"] = "server_tool_use"
    data = _lines(session)
    assert _fixed("claude-code", data, [Found(2, "toolu_2")]) == session


def test_claude_code_log_reads_the_fixed_session_with_every_result(tmp_path: Any) -> None:
    converter = pytest.importorskip("claude_code_log.converter")
    out = _fixed(
        "claude-code", _lines(_claude_session()), [Found(1, "toolu_1"), Found(2, "toolu_2")]
    )
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_lines(out))
    entries = converter.load_transcript(path, silent=True)
    assert [e.uuid for e in entries] == [e["uuid"] for e in out]
    results = [
        item.tool_use_id
        for e in entries
        if e.type == "user" and not isinstance(e.message.content, str)
        for item in e.message.content
        if getattr(item, "type", None) == "tool_result"
    ]
    assert results == ["toolu_1", "toolu_2"]


def _codex_session(call_type: str = "function_call") -> list[dict[str, Any]]:
    call: dict[str, Any] = {"type": call_type, "name": "shell", "call_id": "call_1"}
    call["arguments" if call_type == "function_call" else "input"] = '{"command":["ls"]}'
    return [
        {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}},
        {"timestamp": "t1", "type": "response_item", "payload": call},
        {"timestamp": "t2", "type": "event_msg", "payload": {"type": "turn_aborted"}},
    ]


@pytest.mark.parametrize(
    ("call_type", "output_type"),
    [("function_call", "function_call_output"), ("custom_tool_call", "custom_tool_call_output")],
)
def test_codex_gets_its_aborted_output_right_after_the_call(
    call_type: str, output_type: str
) -> None:
    session = _codex_session(call_type)
    out = _fixed("codex", _lines(session), [Found(1, "call_1")])
    assert out[:2] == session[:2] and out[3:] == session[2:]
    assert out[2] == {
        "timestamp": "t1",
        "type": "response_item",
        "payload": {"type": output_type, "call_id": "call_1", "output": CODEX_ABORTED},
    }


def test_codex_early_rollout_gets_a_bare_output_item() -> None:
    session = [
        {"id": "s1", "timestamp": "t0", "instructions": None},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
    ]
    out = _fixed("codex", _lines(session), [Found(1, "c1")])
    assert out[2] == {"type": "function_call_output", "call_id": "c1", "output": CODEX_ABORTED}


def _pi_session(stop: str = "toolUse", tree: bool = True) -> list[dict[str, Any]]:
    assistant = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "tc_1", "name": "bash", "arguments": {}}],
        "stopReason": stop,
        "timestamp": 1767225601000,
    }
    entries = [
        {"type": "session", "version": 3, "id": "sess", "timestamp": "t0", "cwd": "/w"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "t1",
            "message": {"role": "user", "content": [{"type": "text", "text": "go"}]},
        },
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "t2", "message": assistant},
        {
            "type": "message",
            "id": "u2",
            "parentId": "a1",
            "timestamp": "t3",
            "message": {"role": "user", "content": [{"type": "text", "text": "stop"}]},
        },
    ]
    if not tree:
        for e in entries[1:]:
            del e["id"], e["parentId"]
    return entries


def test_pi_gets_its_no_result_provided_and_the_tree_passes_through_it() -> None:
    out = _fixed("pi", _lines(_pi_session()), [Found(2, "tc_1")])
    result = out[3]
    assert result["type"] == "message" and result["parentId"] == "a1"
    assert result["message"] == {
        "role": "toolResult",
        "toolCallId": "tc_1",
        "toolName": "bash",
        "content": [{"type": "text", "text": PI_NO_RESULT}],
        "isError": True,
        "timestamp": 1767225601000,
    }
    assert len(result["id"]) == 8
    assert out[4]["id"] == "u2" and out[4]["parentId"] == result["id"]


def test_pi_v1_session_gets_a_result_without_ids() -> None:
    out = _fixed("pi", _lines(_pi_session(tree=False)), [Found(2, "tc_1")])
    assert "id" not in out[3] and out[3]["message"]["toolCallId"] == "tc_1"


def test_pi_aborted_message_is_left_alone() -> None:
    """pi never replays an aborted message, so a result for its call would be an orphan."""
    session = _pi_session(stop="aborted")
    assert _fixed("pi", _lines(session), [Found(2, "tc_1")]) == session


def _orphan_result(uid: str, parent: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        **ENVELOPE,
        "type": "user",
        "message": {"role": "user", "content": blocks},
        "uuid": uid,
    }


ORPHAN = {"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x", "is_error": False}


def test_claude_code_result_without_call_is_emptied_and_the_chain_skips_it() -> None:
    session = _claude_session()[:1] + [
        _orphan_result("r1", "u1", [ORPHAN]),
        _orphan_result("u2", "r1", [{"type": "text", "text": "next"}]),
    ]
    data = _lines(session)
    records = list(registry.get("claude-code").read(io.BytesIO(data)))
    found = [Found(1, "toolu_gone", problem="result-without-call")]
    planned = plan_fixes("claude-code", records, found, {Fix.TOOL_PAIRS})
    edits, _ = merged(Edits(len(records), {}, {}), planned)
    out = b"".join(r.raw + r.eol for r in edits.after(records)).split(b"\n")
    assert out[1] == b""  # the line stays, empty
    assert json.loads(out[2])["parentUuid"] == "u1"
    assert planned.fixed[0].dropped == (records[1].raw.decode(),)


def test_claude_code_orphan_block_beside_others_leaves_its_array() -> None:
    text = {"type": "text", "text": "and this"}
    session = _claude_session()[:1] + [_orphan_result("r1", "u1", [ORPHAN, text])]
    out = _fixed(
        "claude-code", _lines(session), [Found(1, "toolu_gone", problem="result-without-call")]
    )
    assert out[1]["message"]["content"] == [text] and out[1]["uuid"] == "r1"


def test_codex_output_without_call_is_emptied_as_codex_drops_it() -> None:
    session = _codex_session()[:1] + [
        {
            "timestamp": "t1",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "gone", "output": "x"},
        },
        {"timestamp": "t2", "type": "event_msg", "payload": {"type": "task_complete"}},
    ]
    out = _fixed("codex", _lines(session), [Found(1, "gone", problem="result-without-call")])
    assert out == [session[0], session[2]]


def test_pi_result_without_call_is_emptied_and_its_child_takes_its_parent() -> None:
    session = _pi_session()[:2] + [
        {
            "type": "message",
            "id": "r1",
            "parentId": "u1",
            "timestamp": "t2",
            "message": {
                "role": "toolResult",
                "toolCallId": "gone",
                "toolName": "bash",
                "content": [],
                "isError": False,
            },
        },
        {
            "type": "message",
            "id": "u2",
            "parentId": "r1",
            "timestamp": "t3",
            "message": {"role": "user", "content": [{"type": "text", "text": "go on"}]},
        },
    ]
    out = _fixed("pi", _lines(session), [Found(2, "gone", problem="result-without-call")])
    assert [e["id"] for e in out[1:]] == ["u1", "u2"] and out[2]["parentId"] == "u1"


def test_claude_code_stranded_parallel_result_is_spliced_into_the_branch() -> None:
    """Parallel results written as siblings: the one off the chain Claude Code resumes is
    spliced into it; nothing is made up."""
    session = _claude_session()[:3]  # u1, a1 (toolu_1), a2 (toolu_2)

    def result(uid: str, call: str) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": call, "content": "ok", "is_error": False}
        return _orphan_result(uid, "a2", [block])

    session += [result("r1", "toolu_1"), result("r2", "toolu_2")]
    session.append(_orphan_result("u2", "r2", [{"type": "text", "text": "thanks"}]))
    assert "r1" not in [e["uuid"] for e in _chain(session)]
    out = _fixed("claude-code", _lines(session), [Found(1, "toolu_1")])
    assert len(out) == len(session)  # no record added
    assert [e["uuid"] for e in _chain(out)] == ["u1", "a1", "a2", "r1", "r2", "u2"]
