"""What a runtime sends back of a stored session, for `tool-pairs` (docs/health.md cites each).

Here the file is not what goes to the model: Gemini CLI's log appends a message again to
rewrite it and `$rewindTo` to drop messages; Crush sends a session from its summary on;
Continue from its last `conversationSummary`; and Zed, Continue, Copilot Chat and Cursor
pair a call with the result kept in the same message (a result elsewhere answers nothing).
Each reader says, record by record, which messages the runtime keeps (`Loaded`), so the
check pairs only those, each within its scope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from thinkfix.engine.health.shapes import (
    Loaded,
    ToolEvent,
    ToolShape,
    as_dict,
    as_id,
    as_list,
    gemini_message,
)

# --- Gemini CLI -----------------------------------------------------------------------------


def _gemini(o: Any) -> Iterator[Loaded]:
    """Records as `loadConversationRecord` (packages/core/src/services/
    chatRecordingService.ts) reads the JSONL log: a message record sets its id in an
    ordered map (a rewritten message keeps its place), `$rewindTo` deletes that id and
    every later one (all of them when it is not there), `$set.messages` clears the map and
    fills it again. The older whole-file JSON is one record of `messages`."""
    o = as_dict(o)
    if isinstance(o.get("$rewindTo"), str):
        yield Loaded(cut=o["$rewindTo"])
    elif isinstance(o.get("id"), str):
        yield Loaded(o["id"], gemini_message(o, ""))
    elif isinstance(as_dict(o.get("$set")).get("messages"), list):
        yield Loaded(clear="")
        for k, m in enumerate(o["$set"]["messages"]):
            if isinstance(key := as_dict(m).get("id"), str):
                yield Loaded(key, gemini_message(m, f"$set.messages[{k}]."))
    else:  # JSON.parse keeps every entry of the array, each where it stands
        for k, m in enumerate(as_list(o.get("messages"))):
            yield Loaded("", gemini_message(m, f"messages[{k}]."))


# --- Crush ----------------------------------------------------------------------------------


#: A role's tool part in Crush (`ToolCalls()` of an assistant message, `ToolResults()` of a
#: tool message): (part type, the id's key, is it a call).
_CRUSH_PARTS = {
    "assistant": ("tool_call", "id", True),
    "tool": ("tool_result", "tool_call_id", False),
}


def _crush(o: Any) -> Iterator[Loaded]:
    """A message row of Crush's store. `preparePrompt` (internal/agent/agent.go) pairs an
    assistant message's `tool_call` parts (`id`) with a tool message's `tool_result` parts
    (`tool_call_id`) over the session; `getSessionMessages` sends the session from its
    summary message on, which goes out as a user message."""
    o = as_dict(o)
    session = o.get("sessionID") if isinstance(o.get("sessionID"), str) else ""
    role, parts = o.get("role"), as_list(o.get("parts"))
    if o.get("summary") is True and _finished(parts):
        yield Loaded(clear=f"{session}/")
        return
    found: list[ToolEvent] = []
    kind, key, is_call = _CRUSH_PARTS.get(role if isinstance(role, str) else "", ("", "", False))
    for i, part in enumerate(parts):
        data = as_dict(as_dict(part).get("data"))
        if kind and as_dict(part).get("type") == kind and (ref := as_id(data.get(key))):
            found.append((is_call, ref, f"parts[{i}]"))
    yield Loaded(f"{session}/{o.get('id')}", tuple(found), scope=session)


def _finished(parts: list[Any]) -> bool:
    """A summary Crush finished (`Summarize`: `end_turn`); one that failed keeps its row
    with an `error` finish, and the session's summary stays the one before it."""
    return any(
        as_dict(p).get("type") == "finish"
        and as_dict(as_dict(p).get("data")).get("reason") == "end_turn"
        for p in parts
    )


# --- Continue -------------------------------------------------------------------------------


def _continue(doc: Any) -> Iterator[Loaded]:
    """A session file. `constructMessages` (gui/src/redux/util/constructMessages.ts) sends
    the history after the last item with a `conversationSummary`, skips stored `tool`
    items, and after each assistant message (its `message.toolCalls`) sends one `tool`
    message per `toolCallStates` entry, answering that entry's `toolCall.id`."""
    history = as_list(as_dict(doc).get("history"))
    start = max(
        (i + 1 for i, h in enumerate(history) if as_dict(h).get("conversationSummary")), default=0
    )
    for i in range(start, len(history)):
        item = as_dict(history[i])
        if as_dict(item.get("message")).get("role") != "assistant":
            continue
        found: list[ToolEvent] = []
        for j, call in enumerate(as_list(as_dict(item.get("message")).get("toolCalls"))):
            if call_id := as_id(as_dict(call).get("id")):
                found.append((True, call_id, f"history[{i}].message.toolCalls[{j}]"))
        for j, state in enumerate(as_list(item.get("toolCallStates"))):
            if ref := as_id(as_dict(as_dict(state).get("toolCall")).get("id")):
                found.append((False, ref, f"history[{i}].toolCallStates[{j}]"))
        yield Loaded(f"history[{i}]", tuple(found), scope=f"history[{i}]")


# --- Copilot Chat ---------------------------------------------------------------------------


def _copilot_result(result: Any, base: str, index: int | None, key: str) -> Loaded:
    """A request's `result.metadata`: each `toolCallRounds[].toolCalls[].id`, answered by
    the key of that id in the same request's `toolCallResults` (`ChatToolCalls` in
    src/extension/prompts/node/panel/toolCalling.tsx looks each call's result up there; a
    request stopped by `maxToolCallsExceeded` finds its results in the next one,
    `ConversationHistory` in conversationHistory.tsx)."""
    metadata = as_dict(as_dict(result).get("metadata"))
    found: list[ToolEvent] = []
    for r, round_ in enumerate(as_list(metadata.get("toolCallRounds"))):
        for j, call in enumerate(as_list(as_dict(round_).get("toolCalls"))):
            if call_id := as_id(as_dict(call).get("id")):
                found.append((True, call_id, f"{base}.metadata.toolCallRounds[{r}].toolCalls[{j}]"))
    for ref, value in as_dict(metadata.get("toolCallResults")).items():
        if ref and value:  # `toolCallResults?.[id]` is looked up for its truth
            found.append((False, ref, f"{base}.metadata.toolCallResults.{ref}"))
    scope = key
    if index is not None and metadata.get("maxToolCallsExceeded"):
        scope = f"requests[{index + 1}]"
    return Loaded(key, tuple(found), scope=scope)


def _copilot_requests(requests: Any, base: str, first: int | None) -> Iterator[Loaded]:
    for r, request in enumerate(as_list(requests)):
        index = None if first is None else first + r
        key = f"requests[{index}]" if index is not None else str(as_dict(request).get("requestId"))
        yield _copilot_result(as_dict(request).get("result"), f"{base}[{r}].result", index, key)


def _copilot_chat(o: Any) -> Iterator[Loaded]:
    """The flat session file, or a line of the mutation log (`objectMutationLog.ts`): the
    whole session (kind 0), a request or its result set (kind 1), requests pushed (kind 2,
    cutting the list at `i` first)."""
    o = as_dict(o)
    kind, k, v = o.get("kind"), as_list(o.get("k")), o.get("v")
    if "kind" not in o:
        yield from _copilot_requests(o.get("requests"), "requests", 0)
    elif kind == 0:
        yield from _copilot_requests(as_dict(v).get("requests"), "v.requests", 0)
    elif kind == 2 and k == ["requests"]:
        at = o.get("i")
        if isinstance(at, int):
            yield Loaded(cut=f"requests[{at}]", cut_all=False)
        yield from _copilot_requests(v, "v", at if isinstance(at, int) else None)
    elif kind == 1 and k[:1] == ["requests"] and len(k) in (2, 3) and isinstance(k[1], int):
        if len(k) == 2:
            yield _copilot_result(as_dict(v).get("result"), "v.result", k[1], f"requests[{k[1]}]")
        elif k[2] == "result":
            yield _copilot_result(v, "v", k[1], f"requests[{k[1]}]")


# --- Zed, Cursor ----------------------------------------------------------------------------


def _zed(o: Any) -> Iterator[Loaded]:
    """A thread row. `AgentMessage::to_request` (crates/agent/src/thread.rs) sends a
    `ToolUse` only when the message's own `tool_results` holds its id, and every one of
    those results, whether or not a `ToolUse` of the message asked for it."""
    o = as_dict(o)
    thread = as_dict(o.get("thread")) if "thread" in o else o
    for i, m in enumerate(as_list(thread.get("messages"))):
        agent = as_dict(as_dict(m).get("Agent"))
        base = f"thread.messages[{i}].Agent" if "thread" in o else f"messages[{i}].Agent"
        found: list[ToolEvent] = []
        for j, c in enumerate(as_list(agent.get("content"))):
            if call_id := as_id(as_dict(as_dict(c).get("ToolUse")).get("id")):
                found.append((True, call_id, f"{base}.content[{j}].ToolUse"))
        for ref in as_dict(agent.get("tool_results")):
            if ref:
                found.append((False, ref, f"{base}.tool_results.{ref}"))
        if found:
            yield Loaded(f"{o.get('id')}#{i}", tuple(found), scope=f"{o.get('id')}#{i}")


def _cursor(o: Any) -> Iterator[Loaded]:
    """A bubble (or a composer's inline `conversation[]`): its `toolFormerData` is a call
    (`toolCallId`) and, once Cursor stored it, that call's `result` in the same object."""
    o = as_dict(o)
    bubbles = (
        [("bubble", o["bubble"])]
        if isinstance(o.get("bubble"), dict)
        else [(f"conversation[{i}]", b) for i, b in enumerate(as_list(o.get("conversation")))]
    )
    for base, bubble in bubbles:
        tool = as_dict(as_dict(bubble).get("toolFormerData"))
        if call_id := as_id(tool.get("toolCallId")):
            found: list[ToolEvent] = [(True, call_id, f"{base}.toolFormerData")]
            if tool.get("result") not in (None, ""):
                found.append((False, call_id, f"{base}.toolFormerData"))
            key = f"{o.get('key')}/{base}"
            yield Loaded(key, tuple(found), scope=key)


def _shape(loads: Callable[[Any], Iterator[Loaded]], within: str = "the session") -> ToolShape:
    def events(data: Any) -> Iterator[ToolEvent]:
        return (event for step in loads(data) for event in step.events)

    return ToolShape(events, loads=loads, within=within)


#: The formats whose runtime sends back less than the file holds, or pairs per message.
LOADED_SHAPES: dict[str, ToolShape] = {
    "gemini-cli": _shape(_gemini),
    "crush": _shape(_crush),
    "continue": _shape(_continue, "its history item"),
    "copilot-chat": _shape(_copilot_chat, "its request"),
    "zed": _shape(_zed, "its message"),
    "cursor": _shape(_cursor, "its bubble"),
}
