"""Cline, Roo Code and Kilo Code `tasks/<id>/ui_messages.json`: what the task view shows.

Beside the API history (`cline.py`) each task folder keeps the list of `ClineMessage`s the
webview renders when the task is reopened, written whole and compact on every change: Cline
`saveClineMessages` (cline/cline src/core/storage/disk.ts, `JSON.stringify`, the name from
`GlobalFileNames.uiMessages`), Roo Code and Kilo Code `saveTaskMessages`
(RooCodeInc/Roo-Code src/core/task-persistence/taskMessages.ts, `safeWriteJson`). A message
is `{ts, type: "ask"|"say", ask?, say?, text?, images?, files?, partial?, ...}` (Cline
src/shared/ExtensionMessage.ts `ClineMessage`; Roo packages/types/src/message.ts
`clineMessageSchema`): `ts` a number (`Date.now()`), `text` a string. Any other shape is an
error for the file, never a clean count. Cline's SDK builds (apps/vscode/src/sdk, 2026-06 on)
write no new one and still show an old task's (`readUiMessages` in legacy-state-reader.ts,
called by sdk-task-history.ts).

What is read: the model's answer texts, `say: "text"` (Cline `presentAssistantMessage` in
src/core/task/index.ts and `ActModeRespondHandler`; Roo
src/core/assistant-message/presentAssistantMessage.ts) and `say: "completion_result"` (Cline
`AttemptCompletionHandler`, Roo src/core/tools/AttemptCompletionTool.ts). Message 0 is never
one: it is the task the user typed (`startTask`: `say("text", task)` in Roo, Kilo and Cline
before its `say("task")`; the webview takes `messages.at(0)` as the task). A message's model
is its `modelInfo.modelId` (Cline's `say`); Roo's and Kilo's messages name none, nor does
`api_req_started`'s `ClineApiReqInfo`. Native reasoning of an answer: the `say: "reasoning"`
messages of its request (since the last `api_req_started`). Rule 4's evidence: a tool
message (`ask`/`say` `tool`, `command`, ...) after the text in the same request.

What a leak looks like here: the runtimes strip tags before `say("text")`. Cline removes
`<thinking>`/`</thinking>` and, since #7144 (2025-10-28), `<think>`/`</think>` (the tags
only: the reasoning between them stays as plain text, which no rule can tell from an answer);
Roo Code and Kilo Code remove only `<thinking>`. So a DeepSeek/Qwen `<think>` reaches the
file in Roo, Kilo and older Cline, and other forms (`<thought>`, `◁think▷`, `<seed:think>`,
Harmony channels, a cased `<Think>`) in all of them.

Placement: where the runtime itself puts reasoning, a `say: "reasoning"` message right
before the answer, with the fields the runtime gives a finished one (`say()` then
`finalizePendingReasoningMessage` in Cline, `partial` false; `addToClineMessages` in
src/core/task/message-state.ts adds `conversationHistoryIndex` and
`conversationHistoryDeletedRange`, copied from the answer, which the same request gave the
same values; `modelInfo` likewise). `ts` is the message's id (found by `ts ===`: Cline's
hook messages in src/core/task/index.ts and src/core/task/multifile-diff.ts; Roo's
`findMessageIndices` in src/core/webview/webviewMessageHandler.ts for edit and delete), so
the new message takes `ts` one millisecond before the answer's only when no message has it
and it stays after the message before; else the reasoning stays in the repair manifest. Roo's
`resumeTaskFromHistory` drops only trailing reasoning messages, never one before an answer.
A `say: "text"` that was all reasoning becomes that `say: "reasoning"` message in place (its
`ts` and every other field kept), which is what the runtime writes when the provider sends
the reasoning natively; an all-reasoning `completion_result` is refused (the completion
flow looks it up by `say`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import as_str, join_texts, place_elsewhere, refusal
from thinkfix.formats.jsonedit import InsertItems, SetValue
from thinkfix.formats.repairs import PlacementKind, TextSlot
from thinkfix.formats.turn_shapes import iso
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import UnexpectedShape, fmt_path, text_value

if TYPE_CHECKING:
    from thinkfix.formats.planner import Draft, Plan
    from thinkfix.formats.records import Record

NAME = "ui_messages.json"
#: Bytes every ui_messages document holding an answer contains (`"type":"say"`).
MARKER = b'"say"'
#: The answers the task view shows as the model's text.
ANSWERS = frozenset({"text", "completion_result"})
#: `ask`/`say` types that are a tool call of the request (Cline `ClineAsk`/`ClineSay`).
TOOLS = frozenset(
    {
        "tool",
        "command",
        "browser_action_launch",
        "use_mcp_server",
        "new_task",
        "use_subagents",
        "mcp_server_request_started",
    }
)
#: The start of a truncated head: `[{"ts":<number>,"type":"ask"|"say"` as both runtimes write.
_OPENER = rb'^\s*\[\s*\{\s*"ts"\s*:\s*\d+(?:\.\d+)?\s*,\s*"type"\s*:\s*"(?:ask|say)"'


@cache
def _opener() -> re.Pattern[bytes]:
    """`_OPENER`, compiled on first use: only a cut-off head needs it, and compiling it on
    import cost every scan's start-up (as `places`' patterns did)."""
    return re.compile(_OPENER)


def _message(m: Any) -> bool:
    return isinstance(m, dict) and m.get("type") in ("ask", "say") and "ts" in m


def is_ui(doc: Any) -> bool:
    """Is a parsed document a list of `ClineMessage`s (judged by its first message)?"""
    return isinstance(doc, list) and bool(doc) and _message(doc[0])


def detects(doc: Any, head: bytes, name: str) -> bool:
    """Does a head hold a ui_messages list: every sampled item a `ClineMessage` (under the
    file's own name, the first: a later odd one is then the file's error), or, when the
    document is cut off, the runtimes' opening bytes under that name."""
    if isinstance(doc, list):
        return is_ui(doc) and (name == NAME or all(_message(m) for m in doc[:50]))
    return doc is None and name == NAME and _opener().match(head) is not None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _checked(doc: list[Any]) -> None:
    """UnexpectedShape at the first message the runtime never writes."""
    for j, m in enumerate(doc):
        if not isinstance(m, dict):
            raise UnexpectedShape((j,), m, "a ClineMessage object")
        if not _number(m.get("ts")):
            raise UnexpectedShape((j, "ts"), m.get("ts"), "a number (Date.now())")
        kind = m.get("type")
        if kind not in ("ask", "say"):
            raise UnexpectedShape((j, "type"), kind, '"ask" or "say"')
        if not isinstance(m.get(kind), str):
            raise UnexpectedShape((j, kind), m.get(kind), f"the {kind} type's name")
        text_value(m.get("text"), (j, "text"))


def _kind(m: dict[str, Any]) -> str:
    return str(m.get(m["type"]))


def messages(doc: list[Any]) -> Iterator[Message]:
    """The answers of a ui_messages list (checked whole first), each with its request's
    reasoning as native and rule 4's evidence from its request's later tool messages."""
    _checked(doc)
    tool_after = [False] * len(doc)
    seen = False
    for j in range(len(doc) - 1, -1, -1):
        tool_after[j] = seen
        kind = _kind(doc[j])
        if kind == "api_req_started":
            seen = False
        elif kind in TOOLS:
            seen = True
    reasoning: list[str] = []
    for j, m in enumerate(doc):
        kind = _kind(m)
        if kind == "api_req_started":
            reasoning = []
        elif m["type"] != "say":
            continue
        elif kind == "reasoning":
            reasoning.append(m.get("text") or "")
        elif kind in ANSWERS and j > 0 and isinstance(m.get("text"), str):
            info = m.get("modelInfo")
            yield Message(
                (j,),
                j,
                [TextSlot((j, "text"), m["text"], tool_after=tool_after[j])],
                native=join_texts(reasoning),
                message_id=str(m["ts"]),
                model=as_str(info.get("modelId")) if isinstance(info, dict) else None,
            )


#: Fields of the answer a reasoning message of the same request has too (`addToClineMessages`).
_SHARED = ("modelInfo", "conversationHistoryIndex", "conversationHistoryDeletedRange")


def _free_ts(plan: Plan, doc: list[Any], j: int) -> int | float | None:
    """A `ts` for a message right before message `j`: one millisecond before its own, when no
    message has it and it stays after message `j - 1`'s."""
    taken: set[Any] = plan.fact("cline-ui:ts", lambda: {m.get("ts") for m in doc})
    ts = doc[j]["ts"] - 1
    if ts in taken or (j > 0 and not ts > doc[j - 1]["ts"]):
        return None
    taken.add(ts)
    return ts  # type: ignore[no-any-return]


def plan_repair(plan: Plan, draft: Draft) -> None:
    """A `say: "reasoning"` message before the answer (the text edit is already made)."""
    site = draft.site
    if not draft.segments:
        draft.place(PlacementKind.NONE, "no reasoning to place (only delimiters were removed)")
        return
    doc = plan.records[site.record_index].data
    j = site.path[0]
    assert isinstance(j, int)
    ts = _free_ts(plan, doc, j)
    if ts is None:
        place_elsewhere(
            draft,
            PlacementKind.MANIFEST,
            "repair manifest only (no free millisecond before the answer's ts, the id "
            "the runtime finds a message by, for a say: reasoning message)",
        )
        return
    answer = doc[j]
    new: dict[str, Any] = {"ts": ts, "type": "say", "say": "reasoning"}
    new["text"] = "\n\n".join(draft.segments)
    new["partial"] = False
    new.update((k, answer[k]) for k in _SHARED if k in answer)
    draft.edit(site.record_index, InsertItems((), j, (new,)))
    draft.place(  # an item of the document's list, not a record (line) of its own
        PlacementKind.BLOCK,
        f"say: reasoning message before {fmt_path((j,))}",
        block=(site.record_index, (), j),
    )


def plan_emptied(plan: Plan, draft: Draft) -> None:
    """An answer that was all reasoning: a `say: "text"` becomes the reasoning message in
    place; a completion result, or a text with no reasoning to keep, is refused."""
    site = draft.site
    j = site.path[0]
    assert isinstance(j, int)
    if not draft.segments or plan.records[site.record_index].data[j].get("say") != "text":
        draft.failure = refusal(draft)
        return
    draft.edit(site.record_index, SetValue((j, "say"), "reasoning"))
    draft.edit(site.record_index, SetValue((j, "text"), "\n\n".join(draft.segments)))
    draft.dropped = True
    draft.place(
        PlacementKind.BLOCK,
        f"{fmt_path((j,))} (all reasoning) is now a say: reasoning message",
        block=(site.record_index, (), j),
    )


def turns(record: Record) -> Iterator[Turn]:
    """The task view as `show` prints it: the task and feedback, reasoning, answers."""
    doc = record.data
    if record.error is not None or not isinstance(doc, list):
        return
    for j, m in enumerate(doc):
        if not isinstance(m, dict) or not isinstance(m.get("text"), str) or not m["text"]:
            continue
        kind, text, when, where = m.get("say"), m["text"], iso(m.get("ts")), fmt_path((j,))
        if j == 0 or kind == "user_feedback":
            yield Turn(Role.USER, (Part(PartKind.TEXT, text),), when, where=where)
        elif m.get("type") != "say":
            continue
        elif kind == "reasoning":
            yield Turn(Role.ASSISTANT, (Part(PartKind.THINKING, text),), when, where=where)
        elif kind in ANSWERS:
            info = m.get("modelInfo")
            yield Turn(
                Role.ASSISTANT,
                (Part(PartKind.TEXT, text, path=(j, "text")),),
                when,
                as_str(info.get("modelId")) if isinstance(info, dict) else None,
                str(m.get("ts")),
                where=where,
            )
