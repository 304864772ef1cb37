"""Factory Droid sessions: `~/.factory/sessions/<cwd slug>/<id>.jsonl`, `<id>.settings.json` beside.

Droid is closed source; the shape is the one the public cross-runtime readers parse
(jazzyalex/agent-sessions' stage0 droid fixtures, the `cass` Factory connector): a
`{"type": "session_start", "id", "title", "owner", "version", "cwd"}` line, then
`{"type": "message", "id", "timestamp", "message": {"role", "content": [...]}, "parentId"}`
lines whose content blocks are Anthropic's (`text`, `thinking` with its `signature`,
`tool_use`, `tool_result`). The `.settings.json` beside it (model, provider lock, token
totals) holds no message and is not read.

Placement: Droid resumes a session by sending these blocks back to the provider, Anthropic
included, where an unsigned thinking block is rejected; so, as for Claude Code and Cline,
the visible text is repaired and the reasoning kept in the repair manifest only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import (
    FormatBase,
    as_str,
    block_reasoning,
    content_slots,
    place_elsewhere,
)
from thinkfix.formats.detection import sample, share
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Context, Record
from thinkfix.formats.repairs import PlacementKind
from thinkfix.formats.turn_shapes import block_parts, split_results
from thinkfix.formats.turns import Role, Turn
from thinkfix.formats.values import UnexpectedShape

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

#: Anthropic block types pi never writes (it has toolCall/toolResult): Droid's evidence.
_CLAUDE_BLOCKS = frozenset({"tool_use", "tool_result", "redacted_thinking"})


def _header(o: dict[str, Any]) -> bool:
    return (
        o.get("type") == "session_start"
        and "id" in o
        and any(k in o for k in ("cwd", "owner", "title", "version"))
    )


def _message(o: dict[str, Any]) -> dict[str, Any] | None:
    m = o.get("message")
    if o.get("type") == "message" and isinstance(m, dict) and "role" in m and "content" in m:
        return m
    return None


def _claude_blocks(m: dict[str, Any]) -> bool:
    content = m.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict)
        and (b.get("type") in _CLAUDE_BLOCKS or (b.get("type") == "thinking" and "signature" in b))
        for b in content
    )


class FactoryDroid(FormatBase):
    id = "factory-droid"
    description = (
        "Factory Droid sessions: ~/.factory/sessions/<cwd slug>/<id>.jsonl (a session_start "
        "line, then {type: message, message: {role, content: [Anthropic blocks]}})"
    )
    detection = (
        "a session_start line with id and cwd/owner/title, or {type: message} lines whose "
        "content holds Anthropic blocks pi never writes (tool_use, tool_result, a signed "
        "thinking block), or that lie under a .factory folder"
    )
    placement = (
        "the repair manifest only: Droid replays the blocks to the provider on resume "
        "(Anthropic included), where an unsigned thinking block is rejected"
    )
    locations_source = (
        "~/.factory/sessions/<cwd slug>/ (Factory docs and the public readers: "
        "jazzyalex/agent-sessions, the cass Factory connector); no override variable is "
        "documented"
    )
    jsonl_only = True
    context_markers = (b'"session_start"',)

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [home / ".factory" / "sessions"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        objects = s.objects
        if not s.values or not objects:
            return 0.0
        if any(_header(o) for o in objects[:3]):
            return 0.95
        messages = [m for m in (_message(o) for o in objects) if m is not None]
        if not messages or share(objects, lambda o: _message(o) is not None) < 0.5:
            return 0.0
        factory = "/.factory/" in path.replace("\\", "/")
        if factory or any(_claude_blocks(m) for m in messages):
            return 0.95
        return 0.0

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        o = record.obj
        if o is not None and _header(o):
            new = Context(session_id=as_str(o.get("id")))
            return new, new
        return ctx, ctx

    def messages(self, record: Record) -> Iterator[Message]:
        o = record.obj
        m = _message(o) if o is not None else None
        if o is not None and m is None and o.get("type") == "message" and "message" in o:
            # Droid writes `message: {role, content}` (or a role without content): another
            # shape was skipped, its leak counted clean
            said = o["message"]
            if not isinstance(said, dict) or "role" not in said:
                raise UnexpectedShape(("message",), said, "a message object with its role")
        if o is None or m is None or m.get("role") != "assistant":
            return
        yield Message(
            ("message",),
            record.index,
            partial(content_slots, m, ("message",)),
            native=partial(block_reasoning, m.get("content")),
            message_id=as_str(o.get("id")),
            model=as_str(m.get("model")),
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        place_elsewhere(
            draft,
            PlacementKind.MANIFEST,
            "repair manifest only (Droid replays the blocks on resume, where an unsigned "
            "thinking block is rejected)",
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        o = record.obj
        m = _message(o) if o is not None else None
        if o is None or m is None:
            return
        timestamp = as_str(o.get("timestamp"))
        parts = block_parts(m.get("content"), ("message", "content"))
        if m.get("role") == "user":
            yield from split_results(Role.USER, parts, timestamp=timestamp)
        elif m.get("role") == "assistant":
            yield Turn(Role.ASSISTANT, tuple(parts), timestamp, message_id=as_str(o.get("id")))
