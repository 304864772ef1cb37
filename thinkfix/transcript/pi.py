"""pi / OpenClaw entries as turns: messages by role, plus compaction and branch summaries."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from thinkfix.formats.base import Record
from thinkfix.formats.common import as_str
from thinkfix.formats.pi import entry_message
from thinkfix.transcript.common import Signed, block_parts, iso, output_text, split_results
from thinkfix.transcript.model import Part, PartKind, Role, Turn

_NORMAL_STOPS = {None, "stop", "toolUse"}
_SUMMARIES = {"compaction": "compaction", "branch_summary": "branch summary"}


def _signed(api: Any) -> Signed:
    # For openai-completions `thinkingSignature` names a wire field; elsewhere it signs.
    if api == "openai-completions":
        return lambda block: False
    return lambda block: bool(block.get("thinkingSignature"))


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    if o.get("type") in _SUMMARIES and as_str(o.get("summary")):
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, o["summary"]),), iso(o.get("timestamp")),
                   note=_SUMMARIES[o["type"]])
        return
    if o.get("type") == "custom_message" and o.get("display"):
        text = output_text(o.get("content"))
        if text:
            yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, text),), iso(o.get("timestamp")),
                       note=as_str(o.get("customType")))
        return
    msg, base = entry_message(o)
    if msg is None:
        return
    role = msg.get("role")
    timestamp = iso(o.get("timestamp")) or iso(msg.get("timestamp"))
    content = base + ("content",)
    if role == "assistant":
        stop = msg.get("stopReason")
        note = None if stop in _NORMAL_STOPS else f"stop: {stop}"
        if as_str(msg.get("errorMessage")):
            note = f"{note or 'error'}: {msg['errorMessage']}"
        yield Turn(Role.ASSISTANT,
                   tuple(block_parts(msg.get("content"), content, signed=_signed(msg.get("api")))),
                   timestamp, as_str(msg.get("model")), as_str(o.get("id")), note=note)
    elif role == "user":
        yield from split_results(Role.USER, block_parts(msg.get("content"), content),
                                 timestamp=timestamp)
    elif role == "toolResult":
        yield Turn(Role.TOOL, (Part(PartKind.TOOL_RESULT, output_text(msg.get("content")),
                                    name=as_str(msg.get("toolName")) or "",
                                    call_id=as_str(msg.get("toolCallId")),
                                    error=bool(msg.get("isError"))),), timestamp)
    elif role == "bashExecution":
        command = as_str(msg.get("command")) or ""
        output = output_text(msg.get("output"))
        failed = msg.get("exitCode") not in (None, 0) or bool(msg.get("cancelled"))
        yield Turn(Role.TOOL, (Part(PartKind.TOOL_RESULT, f"$ {command}\n{output}".rstrip(),
                                    name="bash", error=failed),), timestamp)
    elif role in ("branchSummary", "compactionSummary") and as_str(msg.get("summary")):
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, msg["summary"]),), timestamp,
                   note="compaction" if role == "compactionSummary" else "branch summary")
