"""`tool-pairs`' invariant over the formats whose runtime pairs per message or loads less
than the file holds: a session whose every call is answered gives nothing; taking one
result out gives exactly one `call-without-result` with that id, taking one call out
exactly one `result-without-call` (where a result is kept apart from its call).

Sessions are built in each runtime's shape (the health data's), as the bytes the format
reads; the stores (Crush, Zed, Cursor) as the records their readers make of a row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.health.run import check_bytes
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import Problem
from thinkfix.formats import registry

#: Each turn: the ids of the calls one assistant message makes.
Turns = list[list[str]]
#: (turns, the call whose result is left out, the call that is left out).
Build = Callable[[Turns, str | None, str | None], bytes]


def _lines(*docs: Any) -> bytes:
    return b"".join(json.dumps(d, separators=(",", ":")).encode() + b"\n" for d in docs)


def _continue(turns: Turns, no_result: str | None, no_call: str | None) -> bytes:
    history: list[dict[str, Any]] = []
    for n, ids in enumerate(turns):
        history.append({"message": {"role": "user", "content": f"step {n}"}, "contextItems": []})
        calls = [
            {"id": c, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
            for c in ids
        ]
        history.append(
            {
                "message": {
                    "role": "assistant",
                    "content": "Reading.",
                    "toolCalls": [c for c in calls if c["id"] != no_call],
                },
                "contextItems": [],
                "toolCallStates": [
                    {"toolCallId": c["id"], "toolCall": c, "status": "done", "parsedArgs": {}}
                    for c in calls
                    if c["id"] != no_result
                ],
            }
        )
    doc = {"sessionId": "s", "title": "t", "workspaceDirectory": "file:///w", "history": history}
    return json.dumps(doc, indent=2).encode()


def _copilot_chat(turns: Turns, no_result: str | None, no_call: str | None) -> bytes:
    requests = []
    for n, ids in enumerate(turns):
        rounds = [
            {
                "response": "Reading.",
                "toolCalls": [
                    {"name": "read_file", "arguments": "{}", "id": c} for c in ids if c != no_call
                ],
                "toolInputRetry": 0,
                "id": f"round_{n}",
            }
        ]
        results = {c: {"content": [{"value": "ok"}]} for c in ids if c != no_result}
        requests.append(
            {
                "requestId": f"request_{n}",
                "message": {"text": f"step {n}", "parts": []},
                "response": [{"value": "Reading."}],
                "result": {"metadata": {"toolCallRounds": rounds, "toolCallResults": results}},
            }
        )
    doc = {"version": 3, "requesterUsername": "dev", "requests": requests, "sessionId": "s"}
    return json.dumps(doc).encode()


def _gemini(turns: Turns, no_result: str | None, no_call: str | None) -> bytes:
    """Each message written while its calls ran, then again with their results (as Gemini
    CLI's log holds it): only the last version counts."""
    out: list[Any] = [{"sessionId": "s", "projectHash": "p", "startTime": "t", "kind": "main"}]
    for n, ids in enumerate(turns):
        out.append({"id": f"u{n}", "type": "user", "content": [{"text": f"step {n}"}]})
        thought = {"text": "Reading them.", "thought": True}  # a current session's content
        parts = [thought] + [
            {"functionCall": {"id": c, "name": "f", "args": {}}} for c in ids if c != no_call
        ]
        running = [{"id": c, "name": "f", "args": {}, "status": "executing"} for c in ids]
        out.append({"id": f"g{n}", "type": "gemini", "content": parts, "toolCalls": running})
        done = [
            {**r, "status": "success", "result": [{"functionResponse": {"id": r["id"]}}]}
            if r["id"] != no_result
            else r
            for r in running
        ]
        out.append({"id": f"g{n}", "type": "gemini", "content": parts, "toolCalls": done})
    return _lines(*out)


def _zed(turns: Turns, no_result: str | None, no_call: str | None) -> bytes:
    messages: list[Any] = []
    for n, ids in enumerate(turns):
        messages.append({"User": {"id": f"u{n}", "content": [{"Text": f"step {n}"}]}})
        content = [{"ToolUse": {"id": c, "name": "f", "input": {}}} for c in ids if c != no_call]
        results = {c: {"tool_use_id": c, "content": {"Text": "ok"}} for c in ids if c != no_result}
        messages.append({"Agent": {"content": content, "tool_results": results}})
    return _lines(
        {"id": "thread-1", "summary": "t", "dataType": "zstd", "thread": {"messages": messages}}
    )


def _crush(turns: Turns, no_result: str | None, no_call: str | None) -> bytes:
    rows: list[Any] = []
    for n, ids in enumerate(turns):
        calls = [{"type": "tool_call", "data": {"id": c}} for c in ids if c != no_call]
        results = [
            {"type": "tool_result", "data": {"tool_call_id": c}} for c in ids if c != no_result
        ]
        for role, parts in (("user", []), ("assistant", calls), ("tool", results)):
            rows.append(
                {
                    "role": role,
                    "id": f"{role}{n}",
                    "sessionID": "s",
                    "summary": False,
                    "parts": parts,
                }
            )
    return _lines(*rows)


def _cursor(turns: Turns, no_result: str | None, no_call: str | None) -> bytes:
    bubbles = []
    for ids in turns:
        for c in ids:
            tool = {"toolCallId": c, "name": "read_file", "status": "completed"}
            if c != no_result:
                tool["result"] = "{}"
            bubbles.append(
                {
                    "key": f"bubbleId:k:{c}",
                    "bubbleId": c,
                    "bubble": {"type": 2, "toolFormerData": tool},
                }
            )
    return _lines(*bubbles)


BUILDS: dict[str, tuple[Build, bool]] = {  # format -> (builder, can a result outlive its call)
    "continue": (_continue, True),
    "copilot-chat": (_copilot_chat, True),
    "gemini-cli": (_gemini, True),
    "zed": (_zed, True),
    "crush": (_crush, True),
    "cursor": (_cursor, False),
}

TURNS = st.lists(st.integers(1, 3), min_size=1, max_size=4).map(
    lambda counts: [[f"call_{n}_{j}" for j in range(k)] for n, k in enumerate(counts)]
)


def _found(fmt: str, data: bytes) -> list[tuple[Problem, str]]:
    found = check_bytes(data, registry.get(fmt), (Check.TOOL_PAIRS,)).findings
    return [(f.problem, f.detail) for f in found]


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(sorted(BUILDS)), turns=TURNS, data=st.data())
def test_one_result_taken_out_is_one_call_without_result(
    fmt: str, turns: Turns, data: st.DataObject
) -> None:
    build, _ = BUILDS[fmt]
    assert _found(fmt, build(turns, None, None)) == []
    gone = data.draw(st.sampled_from([c for ids in turns for c in ids]))
    assert _found(fmt, build(turns, gone, None)) == [(Problem.CALL_WITHOUT_RESULT, gone)]


@settings(max_examples=40, deadline=None)
@given(
    fmt=st.sampled_from(sorted(f for f, (_, apart) in BUILDS.items() if apart)),
    turns=TURNS,
    data=st.data(),
)
def test_one_call_taken_out_is_one_result_without_call(
    fmt: str, turns: Turns, data: st.DataObject
) -> None:
    build, _ = BUILDS[fmt]
    gone = data.draw(st.sampled_from([c for ids in turns for c in ids]))
    assert _found(fmt, build(turns, None, gone)) == [(Problem.RESULT_WITHOUT_CALL, gone)]


@settings(max_examples=40, deadline=None)
@given(turns=TURNS, data=st.data())
def test_gemini_a_rewind_takes_its_findings_with_it(turns: Turns, data: st.DataObject) -> None:
    """`$rewindTo` a user message drops it and every later message
    (`loadConversationRecord`): an open call after it is gone, one before it stays."""
    gone = data.draw(st.sampled_from([c for ids in turns for c in ids]))
    to = data.draw(st.integers(0, len(turns) - 1))
    rewound = _gemini(turns, gone, None) + _lines({"$rewindTo": f"u{to}"})
    before = int(gone.split("_")[1]) < to
    assert _found("gemini-cli", rewound) == (
        [(Problem.CALL_WITHOUT_RESULT, gone)] if before else []
    )
