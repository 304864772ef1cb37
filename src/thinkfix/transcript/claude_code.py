"""Claude Code lines as turns: prompts, responses (one block per line), tool results, notices."""

from __future__ import annotations

from collections.abc import Iterator

from thinkfix.formats.base import Record
from thinkfix.transcript.common import args_text, as_str, block_parts, output_text, split_results
from thinkfix.transcript.model import Part, PartKind, Role, Turn

#: Stop reasons that end a response normally; any other one is worth a note in the header.
_NORMAL_STOPS = {None, "end_turn", "tool_use", "stop_sequence", "pause_turn"}


def turns(record: Record) -> Iterator[Turn]:
    entry = record.obj
    if entry is None:
        return
    kind = entry.get("type")
    timestamp = as_str(entry.get("timestamp"))
    if kind == "summary" and as_str(entry.get("summary")):
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, entry["summary"]),), note="summary")
    elif kind == "system" and (as_str(entry.get("content")) or "").strip():
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, entry["content"]),), timestamp,
                   note=as_str(entry.get("subtype")))
    elif kind == "tool_use":  # early builds wrote calls and results as lines of their own
        yield Turn(Role.ASSISTANT, (Part(PartKind.TOOL_CALL, args_text(entry.get("input")),
                                         name=as_str(entry.get("name")) or ""),), timestamp)
    elif kind == "tool_result":
        yield Turn(Role.TOOL, (Part(PartKind.TOOL_RESULT, output_text(entry.get("output")),
                                    name=as_str(entry.get("name")) or ""),), timestamp)
    elif kind in ("user", "assistant") and isinstance(entry.get("message"), dict):
        msg = entry["message"]
        parts = block_parts(msg.get("content"), ("message", "content"))
        if kind == "user":
            yield from split_results(Role.USER, parts, timestamp=timestamp)
            return
        stop = msg.get("stop_reason")
        yield Turn(Role.ASSISTANT, tuple(parts), timestamp, as_str(msg.get("model")),
                   as_str(msg.get("id")) or as_str(entry.get("uuid")),
                   note=None if stop in _NORMAL_STOPS else f"stop: {stop}")
