"""Claude Code lines as turns: prompts, responses (one block per line), tool results, notices."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from thinkfix.formats.base import Record
from thinkfix.formats.common import as_str
from thinkfix.transcript.common import args_text, block_parts, output_text, split_results
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
        stop = msg.get("stop_reason") if kind == "assistant" else None
        note = _note(entry, None if stop in _NORMAL_STOPS else f"stop: {stop}")
        if kind == "user":
            yield from split_results(Role.USER, parts, timestamp=timestamp, note=note)
            return
        yield Turn(Role.ASSISTANT, tuple(parts), timestamp, as_str(msg.get("model")),
                   as_str(msg.get("id")) or as_str(entry.get("uuid")), note=note)


def _note(entry: dict[str, Any], stop: str | None) -> str | None:
    """Sub-agent lines (older builds interleave them) and injected meta prompts, marked."""
    notes = [n for n, on in (("sidechain", entry.get("isSidechain")), ("meta", entry.get("isMeta")),
                             (stop, stop)) if on]
    return ", ".join(n for n in notes if n) or None
