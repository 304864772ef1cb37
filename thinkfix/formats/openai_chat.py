"""OpenAI Chat Completions message lists and chat-log exports.

A JSON array of messages, `{"messages": [...]}` (fine-tune / dataset style), a
`chat.completion` response (`choices[].message`), or JSONL with one of those per
line or one message per line. Reasoning goes into the message's reasoning field:
the one it already has, else the one the file already uses, else
`reasoning_content`. `reasoning_details` (signed, opaque) is never touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str, block_slots, join_texts
from thinkfix.formats.detection import has_keys, sample, share
from thinkfix.formats.jsonedit import SetKey
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import PlacementKind, TextSlot
from thinkfix.formats.turn_shapes import text_parts, tool_call, tool_result
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import fmt_path, get_path

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
# Block types that only Anthropic-shaped histories have (those belong to `anthropic`).
ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking"}


def is_chat_message(m: Any) -> bool:
    return isinstance(m, dict) and as_str(m.get("role")) in _ROLES and "content" in m


def _anthropic_blocks(m: dict[str, Any]) -> bool:
    content = m.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and as_str(b.get("type")) in ANTHROPIC_BLOCKS for b in content
    )


def conversations(value: Any) -> Iterator[tuple[Path, list[Any]]]:
    """The message lists a record holds, with their paths."""
    if isinstance(value, list):
        yield (), value
    elif isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            yield ("messages",), value["messages"]
        if isinstance(value.get("choices"), list):
            for k, choice in enumerate(value["choices"]):
                if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                    yield ("choices", k), [choice["message"]]


def _slots(m: dict[str, Any], path: Path) -> list[TextSlot]:
    content = m.get("content")
    if isinstance(content, str):
        # the message's `tool_calls` come after its content: rule 4's evidence
        return [TextSlot(path + ("content",), content, tool_after=bool(m.get("tool_calls")))]
    return block_slots(content, path + ("content",), types=("text", "output_text"))


def _native(m: dict[str, Any]) -> str | None:
    for field in REASONING_FIELDS:
        if isinstance(m.get(field), str) and m[field].strip():
            return str(m[field])
    details = m.get("reasoning_details")
    if isinstance(details, list):
        return join_texts(d.get("text") or d.get("summary") for d in details if isinstance(d, dict))
    return None


class OpenAIChat(FormatBase):
    id = "openai-chat"
    description = (
        'OpenAI Chat Completions message lists: a JSON array, {"messages": [...]}, '
        "chat.completion responses, or JSONL of those or of single messages"
    )
    detection = (
        "messages {role: system|user|assistant|tool, content: string|parts} with "
        "tool_calls or reasoning_content/reasoning fields; not Anthropic block types"
    )
    placement = (
        "the message's reasoning field: the one it has, else the one the file uses "
        "(reasoning_content, reasoning, reasoning_text), else reasoning_content; "
        "reasoning_details is never touched"
    )
    shapes = (dict, list)
    doc_shapes = (dict, list)
    #: The reasoning field created when neither the message nor the file uses one
    #: (None: the `openai_reasoning_field` option).
    default_field: str | None = None
    #: The key of a document's session id.
    session_key = "id"
    #: The Chat Completions API returns `content: null` for a message that only calls tools
    #: (and logs of it, the fixtures' included, keep that).
    no_content: str | None = None

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        values: list[Any] = list(s.values) if s.values else ([s.doc] if s.doc is not None else [])
        messages = [m for v in values for _, conv in conversations(v) for m in conv]
        single = [v for v in values if is_chat_message(v)]
        messages += single
        if messages:
            if not all(is_chat_message(m) for m in messages[:200]):
                return 0.0
            if any(_anthropic_blocks(m) for m in messages):
                return 0.2
            score = 0.6
            if any(
                k in m for m in messages for k in ("tool_calls", "tool_call_id") + REASONING_FIELDS
            ) or any(isinstance(v, dict) and "choices" in v for v in values):
                score = 0.8
            if (
                single
                and values
                and share([v for v in values if isinstance(v, dict)], is_chat_message) < 0.8
            ):
                return 0.0
            return score
        if (
            s.partial
            and has_keys(head, "role", "content")
            and (has_keys(head, "messages") or head.lstrip().startswith(b"["))
        ):
            return 0.5 if not any(f'"{t}"'.encode() in head for t in ANTHROPIC_BLOCKS) else 0.2
        return 0.0

    def messages(self, record: Record) -> Iterator[Message]:
        value = record.data
        if is_chat_message(value):
            if value.get("role") == "assistant":
                yield self._message(value, (), record.index, value)
            return
        for base, conv in conversations(value):
            for j, m in enumerate(conv):
                if is_chat_message(m) and m.get("role") == "assistant":
                    path = base + ((j,) if base[:1] != ("choices",) else ("message",))
                    index = j if base[:1] != ("choices",) else int(base[1])
                    yield self._message(m, path, index, value)

    def _message(self, m: dict[str, Any], path: Path, index: int, top: Any) -> Message:
        top_model = top.get("model") if isinstance(top, dict) else None
        session = top.get(self.session_key) if isinstance(top, dict) and path else None
        return Message(
            path,
            index,
            partial(_slots, m, path),
            native=partial(_native, m),
            message_id=as_str(m.get("id")),
            model=as_str(m.get("model")) or as_str(top_model),
            session_id=as_str(session),
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        site = draft.site
        msg_path = site.path[:-1] if site.path[-1] == "content" else site.path[:-3]
        msg = get_path(plan.records[site.record_index].data, msg_path)
        if not draft.segments:
            draft.place(PlacementKind.NONE, "no reasoning to place (only delimiters were removed)")
            return
        field = next(
            (
                f
                for f in REASONING_FIELDS
                if f in msg and (msg[f] is None or isinstance(msg[f], str))
            ),
            None,
        )
        if field is None:
            field = (
                plan.fact("openai-chat:field", lambda: self._field_in_use(plan))
                or self.default_field
                or plan.options.openai_reasoning_field
            )
        before = msg.get(field) if isinstance(msg.get(field), str) else None

        def build(drafts: list[Draft]) -> SetKey:
            joined = "\n\n".join(seg for d in drafts for seg in d.segments)
            value = f"{before}\n\n{joined}" if before and before.strip() else joined
            return SetKey(msg_path, field, value, after="content")

        plan.shared_edit(draft, site.record_index, msg_path, build)
        draft.place(
            PlacementKind.FIELD,
            f"{field} field of {fmt_path(msg_path) or 'the message'}"
            + (" (appended)" if before else ""),
            field=(site.record_index, msg_path + (field,)),
        )

    def _field_in_use(self, plan: Plan) -> str | None:
        for record in plan.records:
            if not any(f.encode() in record.raw for f in REASONING_FIELDS):
                continue
            for message in self._messages(record):
                msg = get_path(record.data, message.path)
                for field in REASONING_FIELDS:
                    if isinstance(msg, dict) and isinstance(msg.get(field), str):
                        return field
        return None

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- turns: the session as `show` reads it --------------------------------------------------
# OpenAI Chat Completions messages as turns: lists, `{messages}`, responses, or one per line.


_TURN_ROLES = {
    "system": Role.SYSTEM,
    "developer": Role.SYSTEM,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "tool": Role.TOOL,
    "function": Role.TOOL,
}


def _reasoning(m: dict[str, Any]) -> list[Part]:
    """The native reasoning field, else the readable or encrypted `reasoning_details`."""
    for field in REASONING_FIELDS:
        if isinstance(m.get(field), str) and m[field].strip():
            return [Part(PartKind.THINKING, m[field])]
    parts = []
    for d in m.get("reasoning_details") or ():
        if not isinstance(d, dict):
            continue
        text = as_str(d.get("text")) or as_str(d.get("summary"))
        if text:
            parts.append(Part(PartKind.THINKING, text, signed=bool(d.get("signature"))))
        elif d.get("data"):
            parts.append(Part(PartKind.THINKING, "", signed=True, redacted=True))
    return parts


def _content(m: dict[str, Any], path: Path) -> list[Part]:
    return text_parts(m.get("content"), path, ("image_url", "input_image"))


def _calls(m: dict[str, Any]) -> list[Part]:
    calls = list(m.get("tool_calls") or ())
    if isinstance(m.get("function_call"), dict):  # the pre-tools API
        calls.append({"function": m["function_call"]})
    parts = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            parts.append(tool_call(fn.get("arguments"), fn.get("name"), call.get("id")))
    return parts


def _turn(m: dict[str, Any], path: Path, top: Any, document: bool) -> Turn | None:
    role = _TURN_ROLES.get(m.get("role", ""))
    if role is None:
        return None
    where = fmt_path(path) if document else ""
    if role is Role.TOOL:
        return Turn(
            role,
            (tool_result(m.get("content"), m.get("name"), m.get("tool_call_id")),),
            where=where,
        )
    if role is not Role.ASSISTANT:
        return Turn(role, tuple(_content(m, path)), where=where)
    model = as_str(m.get("model")) or (as_str(top.get("model")) if isinstance(top, dict) else None)
    parts = _reasoning(m) + _content(m, path) + _calls(m)
    return Turn(role, tuple(parts), model=model, where=where)


def turns(record: Record) -> Iterator[Turn]:
    value = record.data
    if record.error is not None:
        return
    if is_chat_message(value):
        turn = _turn(value, (), value, False)
        if turn is not None:
            yield turn
        return
    for base, conv in conversations(value):
        response = base[:1] == ("choices",)
        for j, m in enumerate(conv):
            if not is_chat_message(m):
                continue
            path = base + (("message",) if response else (j,))
            turn = _turn(m, path, value, not response and len(conv) > 1)
            if turn is not None:
                yield turn
