"""OpenAI Chat Completions messages as turns: lists, `{messages}`, responses, or one per line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from thinkfix.formats.base import Path, Record
from thinkfix.formats.common import as_str, fmt_path
from thinkfix.formats.openai_chat import REASONING_FIELDS, conversations, is_chat_message
from thinkfix.transcript.common import IMAGE, args_text, output_text
from thinkfix.transcript.model import Part, PartKind, Role, Turn

_ROLES = {"system": Role.SYSTEM, "developer": Role.SYSTEM, "user": Role.USER,
          "assistant": Role.ASSISTANT, "tool": Role.TOOL, "function": Role.TOOL}


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
    content = m.get("content")
    if isinstance(content, str):
        return [Part(PartKind.TEXT, content, path=path + ("content",))]
    parts = []
    for i, c in enumerate(content if isinstance(content, list) else ()):
        if isinstance(c, dict) and isinstance(c.get("text"), str):
            parts.append(Part(PartKind.TEXT, c["text"], path=path + ("content", i, "text")))
        elif isinstance(c, dict) and c.get("type") in ("image_url", "input_image"):
            parts.append(Part(PartKind.TEXT, IMAGE))
    return parts


def _calls(m: dict[str, Any]) -> list[Part]:
    calls = list(m.get("tool_calls") or ())
    if isinstance(m.get("function_call"), dict):  # the pre-tools API
        calls.append({"function": m["function_call"]})
    parts = []
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            parts.append(Part(PartKind.TOOL_CALL, args_text(fn.get("arguments")),
                              name=as_str(fn.get("name")) or "", call_id=as_str(call.get("id"))))
    return parts


def _turn(m: dict[str, Any], path: Path, top: Any, document: bool) -> Turn | None:
    role = _ROLES.get(m.get("role", ""))
    if role is None:
        return None
    where = fmt_path(path) if document else ""
    if role is Role.TOOL:
        return Turn(role, (Part(PartKind.TOOL_RESULT, output_text(m.get("content")),
                                name=as_str(m.get("name")) or "",
                                call_id=as_str(m.get("tool_call_id"))),), where=where)
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
