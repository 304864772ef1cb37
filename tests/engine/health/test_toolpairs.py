"""`tool-pairs` on runtimes that load one branch of a tree of records."""

from __future__ import annotations

from typing import Any

import orjson

from thinkfix.engine.health.run import check_bytes
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import Problem
from thinkfix.formats import registry


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _pi(i: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": i,
        "parentId": parent,
        "timestamp": "2026-01-20T09:00:00.000Z",
        "message": message,
    }


PI_CALL = {
    "role": "assistant",
    "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "stopReason": "toolUse",
    "timestamp": 1,
}
PI_RESULT = {
    "role": "toolResult",
    "toolCallId": "c1",
    "toolName": "read",
    "content": [{"type": "text", "text": "ok"}],
    "isError": False,
    "timestamp": 2,
}
PI_USER = {"role": "user", "content": [{"type": "text", "text": "go on"}], "timestamp": 3}
HEAD = {
    "type": "session",
    "version": 3,
    "id": "p1",
    "timestamp": "2026-01-20T09:00:00.000Z",
    "cwd": "/",
}


def _found(data: bytes, fmt: str) -> list[tuple[int, Problem, str]]:
    found = check_bytes(data, registry.get(fmt), (Check.TOOL_PAIRS,)).findings
    return [(f.line, f.problem, f.detail) for f in found]


def test_pi_a_branch_that_left_the_result_behind() -> None:
    data = _lines(
        HEAD, _pi("a1", None, PI_CALL), _pi("r1", "a1", PI_RESULT), _pi("u2", "a1", PI_USER)
    )
    assert _found(data, "pi") == [(2, Problem.CALL_WITHOUT_RESULT, "c1")]


def test_pi_the_result_on_the_branch_is_no_problem() -> None:
    data = _lines(
        HEAD, _pi("a1", None, PI_CALL), _pi("r1", "a1", PI_RESULT), _pi("u2", "r1", PI_USER)
    )
    assert _found(data, "pi") == []


def test_claude_code_a_sidechain_line_is_not_the_branch_loaded() -> None:
    def line(
        uuid: str, parent: str | None, kind: str, content: Any, side: bool = False
    ) -> dict[str, Any]:
        return {
            "parentUuid": parent,
            "isSidechain": side,
            "sessionId": "s",
            "type": kind,
            "uuid": uuid,
            "message": {"role": kind, "content": content},
        }

    call = [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]
    result = [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]
    data = _lines(
        line("a1", None, "assistant", call),
        line("r1", "a1", "user", result),
        line("x1", None, "assistant", [{"type": "text", "text": "sub-agent"}], side=True),
    )
    assert _found(data, "claude-code") == []


def test_openai_chat_a_bare_array_of_messages() -> None:
    data = b'[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}]'
    found = check_bytes(data, registry.get("openai-chat"), (Check.TOOL_PAIRS,)).findings
    assert [(f.json_path, f.detail) for f in found] == [("[1].tool_calls[0]", "call_1")]


def _gemini(*records: dict[str, Any]) -> list[tuple[int, Problem, str]]:
    head = {"sessionId": "g", "projectHash": "p", "startTime": "t", "kind": "main"}
    return _found(_lines(head, *records), "gemini-cli")


def _entry(call_id: str, result: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": call_id, "name": "read_file", "args": {}, "status": "success"}
    if result:
        entry["result"] = [{"functionResponse": {"id": call_id, "name": "read_file"}}]
    return entry


def test_gemini_a_current_message_sends_the_calls_of_its_content() -> None:
    """`convertSessionToClientHistory`: once `content` holds a call, it is the calls sent;
    a `toolCalls` result for a call it does not make goes out answering nothing."""
    content = [{"text": "Reading."}, {"functionCall": {"id": "c1", "name": "read_file"}}]
    message = {
        "id": "m1",
        "type": "gemini",
        "content": content,
        "toolCalls": [_entry("c1", True), _entry("c2", True)],
    }
    assert _gemini(message) == [(2, Problem.RESULT_WITHOUT_CALL, "c2")]


def test_gemini_a_message_without_calls_in_its_content_sends_its_tool_calls() -> None:
    message = {
        "id": "m1",
        "type": "gemini",
        "content": "Reading.",
        "toolCalls": [_entry("c1", False)],
    }
    assert _gemini(message) == [(2, Problem.CALL_WITHOUT_RESULT, "c1")]


def test_gemini_a_checkpoint_starts_the_messages_again() -> None:
    """`$set.messages` clears what was loaded and loads what it lists."""
    open_call = {"id": "m1", "type": "gemini", "content": "", "toolCalls": [_entry("c1", False)]}
    kept = {"id": "m2", "type": "gemini", "content": "", "toolCalls": [_entry("c2", False)]}
    checkpoint = {"$set": {"messages": [kept]}}
    assert _gemini(open_call, checkpoint) == [(3, Problem.CALL_WITHOUT_RESULT, "c2")]


def test_copilot_chat_a_result_kept_as_null_answers_nothing() -> None:
    """`ChatToolCalls` drops an earlier turn's call whose `toolCallResults[id]` is falsy, and
    sends no result for it: a key holding null is no result."""
    rounds = [{"response": "Reading.", "toolCalls": [{"name": "f", "arguments": "{}", "id": "c1"}]}]
    result = {"metadata": {"toolCallRounds": rounds, "toolCallResults": {"c1": None}}}
    doc = {
        "version": 3,
        "requests": [{"requestId": "r", "message": {"text": "go"}, "result": result}],
    }
    found = check_bytes(orjson.dumps(doc), registry.get("copilot-chat"), (Check.TOOL_PAIRS,))
    assert [(f.problem, f.detail) for f in found.findings] == [(Problem.CALL_WITHOUT_RESULT, "c1")]
