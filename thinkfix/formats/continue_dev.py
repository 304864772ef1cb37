"""Continue (VS Code, JetBrains and the `cn` CLI): `~/.continue/sessions/<sessionId>.json`.

`HistoryManager.save` (continuedev/continue `core/util/history.ts`) writes each
session with `JSON.stringify(session, undefined, 2)` (no trailing newline), keys in
the order `sessionId, title, workspaceDirectory, history[, mode, chatModelTitle,
usage]`. `history` is a list of `ChatHistoryItem`s (`core/index.d.ts`):
`{message: {role, content, id, toolCalls?}, contextItems, editorState?,
promptLogs?, toolCallStates?, reasoning?}`; `content` is a string or
`[{type: "text", text}, {type: "imageUrl", ...}]`. `sessions.json` beside them is
the index (`BaseSessionMetadata[]`), recognised so the folder scans cleanly.

Continue keeps reasoning in two places. A provider's native reasoning becomes its own
history item, `message.role: "thinking"` (with `signature`, `redactedThinking`,
`reasoning_details`), which `constructMessages` (`gui/src/redux/util/
constructMessages.ts`) replays to the model. Reasoning that arrives inline as
`<think>...</think>` is cut out of the text by the GUI itself
(`gui/src/redux/slices/sessionSlice.ts`, `streamUpdate`) into the assistant item's
`reasoning: {text, startAt, endAt, active}`, which only the GUI reads
(`StepContainer`, `ThinkingBlockPeek`) and `constructMessages` never sends. That
parser catches only a `<think>` at the start of a chunk, so orphan closes, other tag
names and tags split across chunks leak into `content`: the repair finishes its
job, into the same `reasoning` object.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str, block_slots, join_texts, place_nothing
from thinkfix.formats.detection import base_name, has_keys, sample
from thinkfix.formats.jsonedit import SetKey, SetValue
from thinkfix.formats.locations import env_dir
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import PlacementKind, TextSlot
from thinkfix.formats.turn_shapes import output_text, text_parts, tool_call, tool_result
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import UnexpectedShape, fmt_path, get_path

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

INDEX = "sessions.json"
_SESSION_KEYS = ("sessionId", "workspaceDirectory", "history")
_INDEX_KEYS = ("sessionId", "dateCreated", "workspaceDirectory")
_OPENER = re.compile(rb'^\s*\{\s*"(?:sessionId|history|title|workspaceDirectory)"\s*:')
_ROLES = {"user", "assistant", "thinking", "system", "tool"}


def _item(value: Any) -> bool:
    """A `ChatHistoryItem`: a chat message with its context items."""
    if not isinstance(value, dict) or "contextItems" not in value:
        return False
    message = value.get("message")
    return isinstance(message, dict) and message.get("role") in _ROLES and "content" in message


#: What a history entry is (`ChatHistoryItem` in continuedev/continue core/index.d.ts).
_ITEM = "a ChatHistoryItem {message: {role, content}, contextItems}"


def _session(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("history"), list)
        and "sessionId" in doc
        and "workspaceDirectory" in doc
        and all(_item(h) for h in doc["history"][:200])
    )


def _index(doc: Any) -> bool:
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(e, dict) and all(k in e for k in _INDEX_KEYS) for e in doc[:50])
    )


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return join_texts(p.get("text") for p in content if isinstance(p, dict))
    return None


def _own_reasoning(item: dict[str, Any]) -> str | None:
    reasoning = item.get("reasoning")
    return as_str(reasoning.get("text")) if isinstance(reasoning, dict) else None


def _native(history: list[Any], i: int) -> str | None:
    """The item's own `reasoning.text`, and the `thinking` items right before it."""
    thinking = []
    j = i - 1
    while j >= 0 and _item(history[j]) and history[j]["message"].get("role") == "thinking":
        thinking.append(_text(history[j]["message"].get("content")))
        j -= 1
    return join_texts([*reversed(thinking), _own_reasoning(history[i])])


def _slots(message: dict[str, Any], base: Path) -> list[TextSlot]:
    content = message.get("content")
    if isinstance(content, str):
        # the message's toolCalls follow its text: rule 4's evidence
        return [TextSlot(base + ("content",), content, tool_after=bool(message.get("toolCalls")))]
    return block_slots(content, base + ("content",))


def _model(item: dict[str, Any], doc: dict[str, Any]) -> str | None:
    logs = item.get("promptLogs")
    if isinstance(logs, list) and logs and isinstance(logs[-1], dict):
        title = as_str(logs[-1].get("modelTitle"))
        if title:
            return title
    return as_str(doc.get("chatModelTitle"))


#: The stamp of a new reasoning object when the session has none to copy: Continue keeps no
#: time per message, and its GUI only asks whether `endAt` is set (unset: "Thinking...").
NO_TIME = 1


def session_stamp(records: Iterable[Record]) -> int:
    """The latest `reasoning.endAt` the GUI wrote into this session, else NO_TIME: a repair
    stamps its reasoning objects with it, so that its output is the same on every run."""
    stamps = [
        r["endAt"]
        for record in records
        if record.error is None and isinstance(record.data, dict)
        for item in record.data.get("history") or ()
        if isinstance(item, dict)
        and isinstance(r := item.get("reasoning"), dict)
        and type(r.get("endAt")) is int
    ]
    return max(stamps, default=NO_TIME)


class Continue(FormatBase):
    id = "continue"
    description = (
        "Continue sessions: ~/.continue/sessions/<sessionId>.json (sessionId, title, "
        "workspaceDirectory, history[] of {message: {role, content}, contextItems, "
        "reasoning}); the sessions.json index beside them"
    )
    detection = (
        "a JSON object with sessionId, workspaceDirectory and history[] of items "
        "{message: {role, content}, contextItems}; sessions.json (sessionId, dateCreated, "
        "workspaceDirectory entries) is recognised and holds no message"
    )
    placement = (
        "the assistant history item's `reasoning` {text, startAt, endAt, active} (appended "
        "when present): where Continue's own GUI puts <think> reasoning it cuts from the "
        "text, shown by the GUI and never replayed to the model"
    )
    locations_source = (
        "$CONTINUE_GLOBAL_DIR, else ~/.continue (continuedev/continue core/util/paths.ts "
        "CONTINUE_GLOBAL_DIR, getSessionsFolderPath, getSessionFilePath); "
        "core/util/history.ts HistoryManager.save"
    )
    shapes = (dict, list)
    doc_shapes = (dict, list)

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [env_dir(env, ("CONTINUE_GLOBAL_DIR",), home, ".continue") / "sessions"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        if s.doc is not None:
            if _session(s.doc):
                return 0.95
            if _index(s.doc) and (base_name(path) == INDEX or not path):
                return 0.95
            if _index(s.doc):
                return 0.9
            return 0.0
        if (
            s.pretty
            and _OPENER.match(head)
            and has_keys(head, *_SESSION_KEYS)
            and has_keys(head, "contextItems")
        ):
            return 0.9
        return 0.0

    def messages(self, record: Record) -> Iterator[Message]:
        doc = record.data
        if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
            return
        history = doc["history"]
        session = as_str(doc.get("sessionId"))
        for i, item in enumerate(history):
            if not _item(item):  # skipped, a leak in it was counted clean
                raise UnexpectedShape(("history", i), item, _ITEM)
            if item["message"].get("role") == "assistant":
                base: Path = ("history", i, "message")
                yield Message(
                    base,
                    i,
                    partial(_slots, item["message"], base),
                    native=partial(_native, history, i),
                    message_id=as_str(item["message"].get("id")),
                    model=_model(item, doc),
                    session_id=session,
                )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        site = draft.site
        if not draft.segments:
            place_nothing(draft)
            return
        item_path = site.path[:2]
        item = get_path(plan.records[site.record_index].data, item_path)
        before = _own_reasoning(item)
        if before is not None:
            text_path = item_path + ("reasoning", "text")

            def append(drafts: list[Draft]) -> SetValue:
                joined = "\n\n".join(seg for d in drafts for seg in d.segments)
                return SetValue(text_path, f"{before}\n\n{joined}" if before.strip() else joined)

            plan.shared_edit(draft, site.record_index, item_path, append)
            draft.place(
                PlacementKind.FIELD,
                f"appended to {fmt_path(text_path)}",
                field=(site.record_index, text_path),
            )
            return
        stamp = plan.fact("continue:stamp", lambda: session_stamp(plan.records_with(b'"endAt"')))

        def create(drafts: list[Draft]) -> SetKey:
            joined = "\n\n".join(seg for d in drafts for seg in d.segments)
            # the key order of sessionSlice.streamUpdate's one-piece branch
            value = {"text": joined, "startAt": stamp, "endAt": stamp, "active": False}
            return SetKey(item_path, "reasoning", value)

        plan.shared_edit(draft, site.record_index, item_path, create)
        draft.place(
            PlacementKind.FIELD,
            f"new {fmt_path(item_path + ('reasoning',))} (text, startAt, endAt, active)",
            field=(site.record_index, item_path + ("reasoning", "text")),
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- turns: the session as `show` reads it --------------------------------------------------


def _calls(message: dict[str, Any]) -> list[Part]:
    parts = []
    for call in message.get("toolCalls") or ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            parts.append(tool_call(fn.get("arguments"), fn.get("name"), call.get("id")))
    return parts


def _results(item: dict[str, Any]) -> list[Part]:
    """Tool outputs: Continue keeps them on the assistant item (`toolCallStates`)."""
    parts = []
    for state in item.get("toolCallStates") or ():
        if not isinstance(state, dict):
            continue
        call = state.get("toolCall")
        fn = call.get("function") if isinstance(call, dict) else None
        name = as_str(fn.get("name")) if isinstance(fn, dict) else None
        output = state.get("output")
        text = (
            "\n".join(output_text(o.get("content")) for o in output if isinstance(o, dict))
            if isinstance(output, list)
            else ""
        )
        parts.append(
            Part(
                PartKind.TOOL_RESULT,
                text,
                name=name or "",
                call_id=as_str(state.get("toolCallId")),
                error=state.get("status") in ("errored", "canceled"),
            )
        )
    return parts


def turns(record: Record) -> Iterator[Turn]:
    doc = record.obj
    if doc is None or not isinstance(doc.get("history"), list):
        return
    thinking: list[Part] = []
    for i, item in enumerate(doc["history"]):
        if not _item(item):
            continue
        message = item["message"]
        role = message.get("role")
        base: Path = ("history", i, "message")
        where = fmt_path(("history", i))
        if role == "thinking":
            text = _text(message.get("content")) or ""
            signed = bool(message.get("signature") or message.get("redactedThinking"))
            thinking.append(
                Part(
                    PartKind.THINKING,
                    text,
                    signed=signed,
                    redacted=bool(message.get("redactedThinking")),
                )
            )
            continue
        if role == "assistant":
            own = _own_reasoning(item)
            parts = thinking + ([Part(PartKind.THINKING, own)] if own and own.strip() else [])
            parts += text_parts(message.get("content"), base, ("imageUrl",))
            yield Turn(
                Role.ASSISTANT,
                tuple(parts + _calls(message)),
                model=_model(item, doc),
                message_id=as_str(message.get("id")),
                where=where,
            )
            results = _results(item)
            if results:
                yield Turn(Role.TOOL, tuple(results), where=where)
        elif role == "tool":
            yield Turn(
                Role.TOOL,
                (tool_result(message.get("content"), None, message.get("toolCallId")),),
                where=where,
            )
        elif role in ("user", "system"):
            content = message.get("content")
            yield Turn(
                Role.USER if role == "user" else Role.SYSTEM,
                tuple(text_parts(content, base, ("imageUrl",))),
                message_id=as_str(message.get("id")),
                where=where,
            )
        thinking = []
