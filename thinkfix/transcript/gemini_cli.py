"""Gemini CLI messages as turns: prompts, model replies with their thoughts and tool calls.

Gemini CLI stores a tool call's result inside the call, on the model's message; it is
shown as a tool turn right after that message, as in the other formats.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from thinkfix.formats.base import Path, Record
from thinkfix.formats.common import as_str, fmt_path
from thinkfix.transcript.common import args_text, output_text
from thinkfix.transcript.model import Part, PartKind, Role, Turn

_NOTICES = {"info", "error", "warning"}


def _thoughts(m: dict[str, Any]) -> list[Part]:
    parts = []
    for t in m.get("thoughts") or ():
        if not isinstance(t, dict):
            continue
        subject, description = as_str(t.get("subject")), as_str(t.get("description")) or ""
        text = f"{subject}\n{description}" if subject else description
        if text.strip():
            parts.append(Part(PartKind.THINKING, text))
    return parts


def _content(m: dict[str, Any], base: Path) -> list[Part]:
    content = m.get("content")
    if isinstance(content, str):
        return [Part(PartKind.TEXT, content, path=base + ("content",))] if content else []
    parts = []
    for i, c in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(c, dict) or not isinstance(c.get("text"), str):
            continue
        signed = bool(c.get("thoughtSignature") or c.get("thought_signature"))
        if c.get("thought"):
            parts.append(Part(PartKind.THINKING, c["text"], signed=signed))
        else:
            parts.append(Part(PartKind.TEXT, c["text"], path=base + ("content", i, "text")))
    return parts


def _result(call: dict[str, Any]) -> Part:
    outputs = []
    for r in call.get("result") or ():
        response = r.get("functionResponse", {}).get("response") if isinstance(r, dict) else None
        if isinstance(response, dict):
            outputs.append(output_text(response.get("output") or response.get("error")))
    text = "\n".join(o for o in outputs if o) or output_text(call.get("resultDisplay"))
    return Part(PartKind.TOOL_RESULT, text, name=as_str(call.get("name")) or "",
                call_id=as_str(call.get("id")), error=call.get("status") in ("error", "cancelled"))


def _message(m: dict[str, Any], base: Path, where: str) -> Iterator[Turn]:
    kind = m.get("type")
    timestamp = as_str(m.get("timestamp"))
    if kind == "user":
        yield Turn(Role.USER, tuple(_content(m, base)), timestamp, where=where)
    elif kind in _NOTICES:
        yield Turn(Role.SYSTEM, tuple(_content(m, base)), timestamp, note=kind, where=where)
    elif kind == "gemini":
        calls = [c for c in m.get("toolCalls") or () if isinstance(c, dict)]
        parts = _thoughts(m) + _content(m, base) + [
            Part(PartKind.TOOL_CALL, args_text(c.get("args")), name=as_str(c.get("name")) or "",
                 call_id=as_str(c.get("id"))) for c in calls]
        yield Turn(Role.ASSISTANT, tuple(parts), timestamp, as_str(m.get("model")),
                   as_str(m.get("id")), where=where)
        results = [_result(c) for c in calls if c.get("result") or c.get("resultDisplay")]
        if results:
            yield Turn(Role.TOOL, tuple(results), timestamp, where=where)


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    if isinstance(o.get("messages"), list):
        for j, m in enumerate(o["messages"]):
            if isinstance(m, dict):
                yield from _message(m, ("messages", j), fmt_path(("messages", j)))
    elif "type" in o and "$set" not in o:
        yield from _message(o, (), "")
