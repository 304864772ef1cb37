"""Qwen Code (QwenLM/qwen-code, a Gemini CLI fork): `<runtime dir>/projects/<cwd>/chats/<id>.jsonl`.

One record per line (`ChatRecordingService`, packages/core/src/services/chatRecordingService.ts):
`{uuid, parentUuid, sessionId, timestamp, type: user|assistant|tool_result|system, cwd,
version, gitBranch, ...}`; a conversation record carries the Gemini `Content` it sent or
received as `message: {role: "user"|"model", parts: [...]}`, an assistant record also
`model`, `usageMetadata` and `contextWindowSize`. Reasoning is a part `{text, thought: true}`
(the OpenAI converter makes one from `reasoning_content`); answers are `{text}` parts, tool
calls `{functionCall}`. `system` records hold UI telemetry, among them the
`api_error` events of responses Qwen Code rejected ("Model response leaked thinking
tags."): they are read as records with no assistant message.

Placement: Qwen Code rebuilds the request from these records on resume, and its OpenAI
converter (`processContent` in core/openaiContentGenerator/converter.ts) sends the thought
parts of a model turn as that message's `reasoning_content` and the other text parts as its
`content`. So the reasoning goes into a `{text, thought: true}` part right before the text
part it came from: where Qwen Code keeps its own, and what it replays as reasoning.

Older builds saved `/chat save` checkpoints as `tmp/<project hash>/checkpoint-<tag>.json`, a
pretty-printed array of the same `Content`s; they are read the same way (`logs.json` beside
them holds only the user's prompts and is not a session).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, TypeGuard

from thinkfix.formats.base import Message
from thinkfix.formats.common import (
    FormatBase,
    as_str,
    join_texts,
    part_at,
    place_nothing,
    refusal,
)
from thinkfix.formats.detection import base_name, sample
from thinkfix.formats.jsonedit import RemoveItem, SetValue
from thinkfix.formats.locations import env_dir
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import PlacementKind, TextSlot
from thinkfix.formats.turn_shapes import output_text, tool_call
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import UnexpectedShape, fmt_path, get_path, text_value

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

_RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})


def _content(m: Any) -> TypeGuard[dict[str, Any]]:
    """A Gemini `Content`: a role and a list of parts."""
    return (
        isinstance(m, dict)
        and m.get("role") in ("user", "model")
        and isinstance(m.get("parts"), list)
    )


def _record(o: Any) -> bool:
    """A chat record: its type, a session id, and a `Content` when it is a conversation one."""
    return (
        isinstance(o, dict)
        and o.get("type") in _RECORD_TYPES
        and "sessionId" in o
        and ("uuid" in o or "parentUuid" in o)
        and (_content(o.get("message")) or (o.get("type") == "system" and "message" not in o))
    )


def part_slots(parts: Any, base: Path) -> list[TextSlot]:
    """Visible text parts of a `Content`'s parts (thought parts are reasoning), each marked
    signed when it carries a thought signature and `tool_after` when a call follows it. A
    string part is text too: Qwen Code's `processContent` (core/openaiContentGenerator/
    converter.ts) replays it as content. Any other part, or a `text` that is no string
    (`Part.text?: string` in @google/genai), raises `UnexpectedShape`."""
    if not isinstance(parts, list):
        return []
    for i, p in enumerate(parts):
        if not isinstance(p, (dict, str)):
            raise UnexpectedShape((*base, i), p, "a part object or a string")
        if isinstance(p, dict):
            text_value(p.get("text"), (*base, i, "text"))
    last_call = max(
        (i for i, p in enumerate(parts) if isinstance(p, dict) and p.get("functionCall")),
        default=-1,
    )
    return [
        TextSlot((*base, i), p, tool_after=i < last_call)
        if isinstance(p, str)
        else TextSlot(
            base + (i, "text"),
            p["text"],
            bool(p.get("thoughtSignature") or p.get("thought_signature")),
            tool_after=i < last_call,
        )
        for i, p in enumerate(parts)
        if isinstance(p, str)
        or (isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought"))
    ]


def part_reasoning(parts: Any) -> str | None:
    """The thought parts' text."""
    if not isinstance(parts, list):
        return None
    return join_texts(p.get("text") for p in parts if isinstance(p, dict) and p.get("thought"))


def _thought(part: Any) -> bool:
    return isinstance(part, dict) and bool(part.get("thought"))


def _empty_text(part: Any) -> bool:
    return isinstance(part, dict) and set(part) <= {"text"} and not str(part.get("text")).strip()


def drop_emptied_part(
    fmt: FormatBase, plan: Plan, draft: Draft, reasoning: Callable[[Any], bool], calls: bool
) -> None:
    """A text part that was all reasoning: removed when its message still shows something
    besides reasoning parts (another part, or tool calls kept beside the parts: `calls`),
    else refused. The shared rule counts any part without a known reasoning `type` as
    visible, which a thought or think part is not."""
    site = draft.site
    array, at = part_at(site.path) if len(site.path) >= 2 else ((), None)
    items = get_path(plan.records[site.record_index].data, array)
    if not isinstance(at, int) or not isinstance(items, list):
        draft.failure = refusal(draft)
        return
    others = [p for i, p in enumerate(items) if i != at and not reasoning(p) and not _empty_text(p)]
    if not others and not calls:
        draft.failure = refusal(draft)
        return
    draft.edit(site.record_index, RemoveItem(array, at))
    draft.dropped = True
    fmt.plan_repair(plan, draft)


def _unsigned_thought(part: Any) -> bool:
    return (
        _thought(part)
        and isinstance(part.get("text"), str)
        and not (part.get("thoughtSignature") or part.get("thought_signature"))
    )


def place_part(
    fmt: FormatBase,
    plan: Plan,
    draft: Draft,
    part: dict[str, Any],
    key: str,
    unsigned: Callable[[Any], bool],
    what: str,
) -> None:
    """A reasoning part before the text part, or, when an unsigned reasoning part already
    stands right before it, the reasoning appended to that one: both runtimes join a turn's
    reasoning parts with no separator on replay (Qwen Code's `processContent`, kosong's
    `_convert_message`), and Kimi merges adjacent unsigned think parts itself
    (`ThinkPart.merge_in_place`)."""
    site = draft.site
    array, at = part_at(site.path)
    items = get_path(plan.records[site.record_index].data, array)
    before = items[at - 1] if isinstance(at, int) and at > 0 else None
    if not unsigned(before):
        fmt.place_blocks(draft, [part], what)
        return
    assert isinstance(at, int) and isinstance(before, dict)
    path = (*array, at - 1, key)
    draft.value = part[key]

    def build(drafts: list[Draft]) -> SetValue:
        return SetValue(path, "\n\n".join([before[key], *(d.value for d in drafts)]))

    plan.shared_edit(draft, site.record_index, path, build)
    draft.place(
        PlacementKind.BLOCK,
        f"appended to the unsigned reasoning part {fmt_path(path[:-1])} before the text",
        block=(site.record_index, array, at - 1),
    )


class QwenCode(FormatBase):
    id = "qwen-code"
    description = (
        "Qwen Code chats: ~/.qwen/projects/<cwd>/chats/<session>.jsonl (records with "
        "uuid/parentUuid/sessionId and a Gemini Content message), and older "
        "tmp/<hash>/checkpoint-*.json"
    )
    detection = (
        "JSONL records of type user/assistant/tool_result/system with sessionId and uuid "
        "whose message is {role: user|model, parts: [...]}; a checkpoint is a JSON array "
        "of such Contents (decided by its .qwen path or name)"
    )
    placement = (
        "a {text, thought: true} part before the text part (or appended to an unsigned one "
        "right before it): Qwen Code's own reasoning part, replayed on resume as the "
        "message's reasoning_content"
    )
    locations_source = (
        "$QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen (QwenLM/qwen-code "
        "packages/core/src/config/storage.ts Storage.getRuntimeBaseDir, getProjectDir: "
        "projects/<sanitized cwd>/chats; getProjectTempDir: tmp/<hash> for checkpoints)"
    )
    assistant_marker = b'"model"'
    shapes = (dict, list)
    doc_shapes = (dict, list)

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        root = env_dir(env, ("QWEN_RUNTIME_DIR", "QWEN_HOME"), home, ".qwen")
        return [root / "projects", root / "tmp"]

    def detect(self, head: bytes, path: str = "") -> float:
        if b'"parts"' not in head:
            return 0.0
        s = sample(head)
        objects = s.objects[:50]
        if s.values and any(_record(o) for o in objects):
            # a Claude Code message (`content`, not `parts`) beside them: the file is Claude
            # Code's, whose reader reports the records it cannot read
            if any(
                isinstance(o.get("message"), dict) and "content" in o["message"] for o in objects
            ):
                return 0.0
            return 0.95
        doc = s.doc
        if isinstance(doc, list) and doc and all(_content(m) for m in doc[:200]):
            qwen = ".qwen" in path.replace("\\", "/").split("/")
            named = base_name(path).startswith("checkpoint")
            return 0.95 if qwen else 0.6 if named else 0.0
        return 0.0

    def messages(self, record: Record) -> Iterator[Message]:
        data = record.data
        if isinstance(data, list):  # a checkpoint: the Contents themselves
            for j, m in enumerate(data):
                if _content(m) and m["role"] == "model":
                    yield self._message(m, (j,), j, None)
            return
        if not isinstance(data, dict) or data.get("type") != "assistant":
            return
        m = data.get("message")
        if _content(m) and m["role"] == "model":
            yield self._message(m, ("message",), record.index, data)

    @staticmethod
    def _message(m: dict[str, Any], base: Path, index: int, rec: dict[str, Any] | None) -> Message:
        return Message(
            base,
            index,
            partial(part_slots, m["parts"], base + ("parts",)),
            native=partial(part_reasoning, m["parts"]),
            message_id=as_str(rec.get("uuid")) if rec else None,
            model=as_str(rec.get("model")) if rec else None,
            session_id=as_str(rec.get("sessionId")) if rec else None,
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        if not draft.segments:
            place_nothing(draft)
            return
        place_part(
            self,
            plan,
            draft,
            {"text": "\n\n".join(draft.segments), "thought": True},
            "text",
            _unsigned_thought,
            "thought part (replayed as reasoning_content)",
        )

    def plan_emptied(self, plan: Plan, draft: Draft) -> None:
        drop_emptied_part(self, plan, draft, _thought, calls=False)

    def turns(self, record: Record) -> Iterator[Turn]:
        data = record.data
        if isinstance(data, list):
            for j, m in enumerate(data):
                if _content(m):
                    yield from _content_turns(m, (j,), None, None, f"[{j}]")
            return
        if not isinstance(data, dict):
            return
        kind = data.get("type")
        timestamp = as_str(data.get("timestamp"))
        m = data.get("message")
        if _content(m):
            yield from _content_turns(m, ("message",), timestamp, data, "")
        elif kind == "system":
            event = data.get("systemPayload")
            ui = event.get("uiEvent") if isinstance(event, dict) else None
            error = ui.get("error_message") or ui.get("error") if isinstance(ui, dict) else None
            if isinstance(error, str) and error.strip():
                yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, error),), timestamp, note="error")


def _content_turns(
    m: dict[str, Any], base: Path, timestamp: str | None, rec: dict[str, Any] | None, where: str
) -> Iterator[Turn]:
    parts: list[Part] = []
    results: list[Part] = []
    for i, p in enumerate(m["parts"]):
        if not isinstance(p, dict):
            continue
        if isinstance(p.get("text"), str):
            if p.get("thought"):
                parts.append(Part(PartKind.THINKING, p["text"]))
            elif p["text"]:
                parts.append(Part(PartKind.TEXT, p["text"], path=base + ("parts", i, "text")))
        call, response = p.get("functionCall"), p.get("functionResponse")
        if isinstance(call, dict):
            parts.append(tool_call(call.get("args"), call.get("name"), call.get("id")))
        if isinstance(response, dict):
            out = response.get("response")
            text = out.get("output") or out.get("error") if isinstance(out, dict) else out
            results.append(
                Part(
                    PartKind.TOOL_RESULT,
                    output_text(text),
                    name=as_str(response.get("name")) or "",
                    call_id=as_str(response.get("id")),
                    error=isinstance(out, dict) and "error" in out,
                )
            )
    model = m["role"] == "model"
    if parts:
        yield Turn(
            Role.ASSISTANT if model else Role.USER,
            tuple(parts),
            timestamp,
            as_str(rec.get("model")) if rec and model else None,
            as_str(rec.get("uuid")) if rec else None,
            where=where,
        )
    if results:
        yield Turn(Role.TOOL, tuple(results), timestamp, where=where)
