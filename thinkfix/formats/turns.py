"""A session as a reader sees it: turns of people, model and tools, each made of parts.

Scan and repair only need where assistant-visible text lives; a transcript also needs
the user's prompts, tool calls and results and the native thinking, so each format's
`turns(record)` yields these values. Below `base`, which names `Turn` in the contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

#: A JSON path inside a record: keys and list indexes from its root.
Path = tuple[str | int, ...]


class Role(str, Enum):
    """Who speaks in a turn."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"  # system prompts, summaries, compaction and runtime notices
    TOOL = "tool"  # tool results (Claude Code stores them on user lines)


class PartKind(str, Enum):
    """What one piece of a turn is."""

    TEXT = "text"
    THINKING = "thinking"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"


@dataclass(frozen=True)
class Part:
    """One piece of a turn.

    `text` is the text, the thinking, a tool call's arguments (as stored) or a tool
    result's output. `path` locates a TEXT part inside its record exactly as the
    format's `Site.path` does, which is how `--normalized` finds the site (and so the
    native reasoning and signature) that repair would use for it.
    """

    kind: PartKind
    text: str = ""
    name: str = ""  # tool name of a call or result
    call_id: str | None = None  # joins a result to its call
    signed: bool = False  # thinking that carries a provider signature
    redacted: bool = False  # thinking stored only as opaque or encrypted data
    recovered: bool = False  # thinking recovered from leaked visible text (--normalized)
    error: bool = False  # a tool result that reports failure
    path: Path | None = None


@dataclass(frozen=True)
class Turn:
    """One message on screen: a role, where it was stored, and its parts in order.

    Consecutive turns of one role with the same `message_id` are one message (Claude
    Code writes each block of a response on its own line, Codex each item), so the
    builder merges them; `lines` then spans their first and last line. Turns without a
    `message_id` stand alone.
    """

    role: Role
    parts: tuple[Part, ...]
    timestamp: str | None = None  # ISO 8601 as stored (or converted from epoch ms)
    model: str | None = None
    message_id: str | None = None
    note: str | None = None  # why a message ended unusually (max_tokens, error), a subtype
    lines: tuple[int, int] = (0, 0)
    where: str = ""  # the message's JSON path inside a whole-document record
