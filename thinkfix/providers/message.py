"""The assistant message a stream assembles: its blocks in order (thinking, text, tool calls), where each came from, the leaks the normalizer cut, and its JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from thinkfix._serialize import Plain, record
from thinkfix.normalizer.kinds import LeakKind
from thinkfix.providers.base import Channel


class BlockType(str, Enum):
    """The kinds of block an assembled message holds."""

    THINKING = "thinking"
    REDACTED_THINKING = "redacted_thinking"
    TEXT = "text"
    TOOL_CALL = "tool_call"


class Source(str, Enum):
    """Where a thinking block came from."""

    NATIVE = "native"  # a reasoning field or block of the provider
    INLINE = "inline"  # extracted from tags in the visible text


BLOCK_OF: dict[Channel, BlockType] = {
    Channel.THINKING: BlockType.THINKING,
    Channel.REDACTED: BlockType.REDACTED_THINKING,
    Channel.VISIBLE: BlockType.TEXT,
    Channel.TOOL_CALL: BlockType.TOOL_CALL,
}


@dataclass(frozen=True)
class Block:
    """One block of the assembled message.

    `text` is the thinking, the answer text, the redacted `data`, or the tool call's
    arguments JSON. `signature` is exactly what the provider sent (concatenated deltas).
    """

    type: BlockType
    text: str = ""
    signature: str | None = None
    source: Source | None = None  # thinking blocks only
    content_index: int = 0
    id: str | None = None  # tool calls
    name: str | None = None  # tool calls

    def to_dict(self) -> dict[str, Any]:
        # `text` goes out under the key its block type gives it; a signature only when sent.
        key = _TEXT_KEY[self.type]
        return record(
            self,
            _BLOCK_KEYS[self.type],
            omit_none=("signature",),
            source=(self.source or Source.NATIVE).value,
            **{key: self.text},
        )


#: Where each block type keeps its text in JSON, and its keys in order.
_TEXT_KEY = {
    BlockType.THINKING: "thinking",
    BlockType.REDACTED_THINKING: "data",
    BlockType.TOOL_CALL: "arguments",
    BlockType.TEXT: "text",
}
_BLOCK_KEYS = {
    BlockType.THINKING: ("type", "thinking", "source", "signature", "content_index"),
    BlockType.REDACTED_THINKING: ("type", "data", "signature", "content_index"),
    BlockType.TOOL_CALL: ("type", "id", "name", "arguments", "signature", "content_index"),
    BlockType.TEXT: ("type", "text", "signature", "content_index"),
}


@dataclass(frozen=True)
class Leak(Plain):
    """One finding in the raw visible text of run `run` (offsets into that run's raw text)."""

    run: int
    content_index: int
    kind: LeakKind
    tag: str
    start: int
    end: int
    text: str  # the raw text the finding covers


@dataclass(frozen=True)
class AssembledMessage:
    """The final assistant message, normalized, with what its raw stream leaked."""

    provider: str
    blocks: tuple[Block, ...]
    raw_visible: tuple[str, ...] = ()  # each visible run exactly as streamed
    leaks: tuple[Leak, ...] = ()
    id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    usage: Mapping[str, Any] | None = field(default=None, hash=False)
    error: Any = field(default=None, hash=False)

    @property
    def leaked(self) -> bool:
        """True when showing the raw visible text would have shown reasoning or its delimiters."""
        return any(leak.kind.changes_text for leak in self.leaks)

    @property
    def text(self) -> str:
        """The visible answer: the text blocks joined."""
        return "".join(b.text for b in self.blocks if b.type is BlockType.TEXT)

    @property
    def thinking(self) -> tuple[str, ...]:
        """Every thinking block's text, in message order."""
        return tuple(b.text for b in self.blocks if b.type is BlockType.THINKING)

    def to_dict(self) -> dict[str, Any]:
        # usage and error are the provider's own objects, passed through as they came
        return record(
            self,
            (
                "provider",
                "id",
                "model",
                "stop_reason",
                "usage",
                "error",
                "blocks",
                "raw_visible",
                "leaked",
                "leaks",
            ),
            usage=self.usage,
            error=self.error,
        )
