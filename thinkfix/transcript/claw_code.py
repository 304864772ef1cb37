"""claw-code messages as turns, from the JSONL lines or the legacy document's list."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from thinkfix.formats.base import Record
from thinkfix.formats.common import as_str, fmt_path
from thinkfix.transcript.common import block_parts, split_results
from thinkfix.transcript.model import Part, PartKind, Role, Turn

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM,
          "tool": Role.TOOL}


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    if o.get("type") == "compaction" and as_str(o.get("summary")):
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, o["summary"]),), note="compaction")
        return
    if o.get("type") == "message":
        candidates: list[tuple[tuple[str | int, ...], Any]] = [(("message",), o.get("message"))]
        document = False
    elif isinstance(o.get("messages"), list):
        candidates = [(("messages", j), m) for j, m in enumerate(o["messages"])]
        document = True
    else:
        return
    for base, msg in candidates:
        if not isinstance(msg, dict) or msg.get("role") not in _ROLES:
            continue
        role = _ROLES[msg["role"]]
        parts = block_parts(msg.get("blocks"), base + ("blocks",))
        where = fmt_path(base) if document else ""
        if role is Role.ASSISTANT:
            yield Turn(role, tuple(parts), model=record.ctx.model, where=where)
        else:
            yield from split_results(role, parts, where=where)
