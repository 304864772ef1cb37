"""Codex rollout lines as turns, from the `response_item`s (what the model saw).

The `event_msg` lines are the UI's copies of the same messages and reasoning, so they
are left out rather than shown twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from thinkfix.formats.base import Path, Record
from thinkfix.formats.codex import reasoning_text
from thinkfix.formats.common import as_str
from thinkfix.transcript.common import IMAGE, args_text, exit_failed, output_text
from thinkfix.transcript.model import Part, PartKind, Role, Turn

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "developer": Role.SYSTEM,
          "system": Role.SYSTEM}
_BARE = {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
         "custom_tool_call_output", "local_shell_call", "web_search_call"}
#: Tool calls other than function calls: (name shown, key holding the arguments).
_CALLS = {"custom_tool_call": (None, "input"), "local_shell_call": ("shell", "action"),
          "web_search_call": ("web_search", "action"), "tool_search_call": ("tool_search",
                                                                            "arguments"),
          "image_generation_call": ("image_generation", "revised_prompt")}
_OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}


def _item(o: dict[str, Any]) -> tuple[dict[str, Any] | None, Path]:
    if o.get("type") == "response_item":
        payload = o.get("payload")
        return (payload, ("payload",)) if isinstance(payload, dict) else (None, ())
    if "payload" not in o and o.get("type") in _BARE:  # early rollouts: bare items
        return o, ()
    return None, ()


def _content(item: dict[str, Any], base: Path) -> list[Part]:
    content = item.get("content")
    if isinstance(content, str):
        return [Part(PartKind.TEXT, content, path=base + ("content",))]
    parts = []
    for i, c in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("text"), str):
            parts.append(Part(PartKind.TEXT, c["text"], path=base + ("content", i, "text")))
        elif c.get("type") == "input_image":
            parts.append(Part(PartKind.TEXT, IMAGE))
    return parts


def _group(item: dict[str, Any]) -> str:
    """What makes consecutive items one message on screen: a response's reasoning,
    text and calls are separate items, sharing a turn id only in newer rollouts."""
    for key in ("metadata", "internal_chat_message_metadata_passthrough"):
        meta = item.get(key)
        if isinstance(meta, dict) and as_str(meta.get("turn_id")):
            return str(meta["turn_id"])
    return "turn"


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    timestamp = as_str(o.get("timestamp"))
    if o.get("type") == "compacted" and isinstance(o.get("payload"), dict):
        message = as_str(o["payload"].get("message")) or "(earlier history replaced)"
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, message),), timestamp, note="compacted")
        return
    item, base = _item(o)
    if item is None:
        return
    kind = item.get("type", "message")
    model = record.ctx.model
    if kind == "message" and item.get("role") in _ROLES:
        role = _ROLES[item["role"]]
        yield Turn(role, tuple(_content(item, base)), timestamp,
                   model if role is Role.ASSISTANT else None, _group(item))
    elif kind == "reasoning":
        text = reasoning_text(item) or ""
        sealed = bool(item.get("encrypted_content"))
        yield Turn(Role.ASSISTANT, (Part(PartKind.THINKING, text, signed=sealed,
                                         redacted=sealed and not text),), timestamp, model,
                   _group(item))
    elif kind == "function_call" or kind in _CALLS:
        name, key = _CALLS.get(kind, (None, "arguments"))
        call = Part(PartKind.TOOL_CALL, args_text(item.get(key)),
                    name=as_str(item.get("name")) or name or kind,
                    call_id=as_str(item.get("call_id")))
        yield Turn(Role.ASSISTANT, (call,), timestamp, model, _group(item))
    elif kind in _OUTPUTS:
        output = item.get("output")
        yield Turn(Role.TOOL, (Part(PartKind.TOOL_RESULT, output_text(output),
                                    call_id=as_str(item.get("call_id")),
                                    error=exit_failed(output)),), timestamp)
