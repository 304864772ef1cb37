"""claw-code (the Rust port) sessions: legacy `.claude/sessions/session-<ms>.json`
(compact, keys sorted, no trailing newline) and current `.claw/sessions/*.jsonl`.

claw-code keeps thinking blocks with an optional signature and sends them back
for every provider; to Anthropic an unsigned one is a 400. So a thinking block
(keys sorted, no signature) is only added when the session's model is known and
not Anthropic; otherwise the reasoning goes to a sidecar file, since unknown keys
inside the session would be dropped by claw-code's next save.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import (
    FormatBase,
    as_str,
    block_reasoning,
    block_slots,
    place_elsewhere,
)
from thinkfix.formats.detection import sample, share
from thinkfix.formats.locations import working_dir
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Context, Record
from thinkfix.formats.repairs import PlacementKind
from thinkfix.formats.turn_shapes import block_parts, split_results
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import fmt_path

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

_LEGACY_HEAD = re.compile(rb'^\s*\{\s*"messages"\s*:\s*\[\s*(?:\]|\{\s*"blocks"\s*:)')
_ANTHROPIC = re.compile(r"claude|anthropic|\bopus\b|\bsonnet\b|\bhaiku\b", re.IGNORECASE)


def is_anthropic(model: str | None) -> bool:
    """Models whose API rejects an unsigned thinking block."""
    return bool(model and _ANTHROPIC.search(model))


def _claw_message(m: Any) -> bool:
    return isinstance(m, dict) and isinstance(m.get("blocks"), list) and "role" in m


class ClawCode(FormatBase):
    id = "claw-code"
    description = (
        "claw-code sessions: legacy .claude/sessions/session-<ms>.json and "
        ".claw/sessions/session-*.jsonl"
    )
    detection = (
        "{messages: [{blocks, role}], version} documents, or JSONL with a session_meta "
        "line (session_id, created_at_ms) and {message: {blocks, role}, type: message}"
    )
    placement = (
        '{"thinking": ..., "type": "thinking"} before the text block (keys sorted, '
        "no signature) when the session's model is known and not Anthropic; otherwise "
        "a sidecar file"
    )

    locations_source = (
        "<workspace>/.claw/sessions, legacy <workspace>/.claude/sessions, where the workspace "
        "is the folder claw runs in (here $PWD): ultraworkers/claw-code "
        "rust/crates/runtime/src/session.rs and rusty-claude-cli init.rs; docs/formats.md"
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        cwd = working_dir(env)
        return [cwd / ".claw" / "sessions", cwd / ".claude" / "sessions"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        objects = s.objects
        if (
            isinstance(s.doc, dict)
            and isinstance(s.doc.get("messages"), list)
            and (
                any(_claw_message(m) for m in s.doc["messages"])
                or (not s.doc["messages"] and "version" in s.doc)
            )
        ):
            return 0.95
        if any(
            o.get("type") == "session_meta"
            and "session_id" in o
            and ("created_at_ms" in o or "updated_at_ms" in o)
            for o in objects
        ):
            return 0.95
        if (
            objects
            and share(
                objects, lambda o: o.get("type") == "message" and _claw_message(o.get("message"))
            )
            >= 0.5
        ):
            return 0.9
        if s.doc is None and _LEGACY_HEAD.match(head):
            return 0.85
        return 0.0

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        o = record.obj
        if o is not None and o.get("type") == "session_meta":
            new = Context(session_id=as_str(o.get("session_id")), model=as_str(o.get("model")))
            return new, new
        return ctx, ctx

    def messages(self, record: Record) -> Iterator[Message]:
        o = record.obj
        if o is None:
            return
        if o.get("type") == "message":
            candidates: list[tuple[tuple[str | int, ...], Any, int]] = [
                (("message",), o.get("message"), record.index)
            ]
        elif isinstance(o.get("messages"), list):
            candidates = [(("messages", j), m, j) for j, m in enumerate(o["messages"])]
        else:
            return
        for base, msg, index in candidates:
            if _claw_message(msg) and msg.get("role") == "assistant":
                yield Message(
                    base,
                    index,
                    partial(block_slots, msg["blocks"], base + ("blocks",)),
                    native=partial(block_reasoning, msg["blocks"]),
                )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        model = plan.records[draft.site.record_index].ctx.model
        if model and not is_anthropic(model):
            self.place_blocks(
                draft,
                [{"thinking": s, "type": "thinking"} for s in draft.segments],
                f"unsigned thinking block (model {model} is not Anthropic)",
            )
            return
        why = "Anthropic" if model else "unknown"
        place_elsewhere(
            draft,
            PlacementKind.SIDECAR,
            f"sidecar <session>.thinkfix.json (the model is {why}: claw-code would "
            "replay an unsigned thinking block)",
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- turns: the session as `show` reads it --------------------------------------------------
# claw-code messages as turns, from the JSONL lines or the legacy document's list.


_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM, "tool": Role.TOOL}


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
