"""The one chunk shape every provider stream becomes, and the adapter interface that makes it.

Providers put reasoning in different places (a `reasoning_content` field, Anthropic
`thinking` blocks, Responses summary events, Gemini `thought` parts, or inline tags in
the text). An adapter turns one raw wire event into zero or more `ReasoningChunk`s so
the accumulator, `thinkfix replay` and a live runtime handle every provider the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar


class Phase(str, Enum):
    """Where a chunk sits in its segment: a segment is START, DELTA*, END."""

    START = "start"
    DELTA = "delta"
    END = "end"


class Channel(str, Enum):
    """What a chunk carries.

    SIGNATURE chunks are DELTA only and attach to a block (see the accumulator);
    MESSAGE chunks carry message-level metadata (id, model on START; stop reason,
    usage, error on END) and no text.
    """

    THINKING = "thinking"
    VISIBLE = "visible"
    SIGNATURE = "signature"
    REDACTED = "redacted_thinking"  # opaque reasoning (Anthropic `data`, encrypted details)
    TOOL_CALL = "tool_call"  # text is a fragment of the arguments JSON
    MESSAGE = "message"


class Wire(str, Enum):
    """The event shape an adapter reads; capture detection and the registry key on it."""

    CHAT = "chat"  # OpenAI Chat Completions chunks and their many compatible hosts
    RESPONSES = "responses"  # OpenAI Responses API events
    ANTHROPIC = "anthropic"  # Anthropic Messages stream events
    OLLAMA = "ollama"  # Ollama NDJSON (/api/chat, /api/generate)
    GEMINI = "gemini"  # Gemini generateContent stream chunks
    TEXT = "text"  # anything that only carries text


@dataclass(frozen=True)
class ReasoningChunk:
    """One normalized piece of a provider stream.

    `content_index` is the block's position as the wire numbers it (Anthropic `index`,
    Responses `output_index`, a tool call's `index`), or a running segment number where
    the wire has none. `text` is raw, never transformed, so masking can happen later.
    """

    provider: str
    phase: Phase
    channel: Channel
    text: str = ""
    content_index: int = 0
    is_complete: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)


def event_dict(event: Any) -> Mapping[str, Any]:
    """A raw event as a mapping: plain dicts pass, SDK objects go through `model_dump()`."""
    if isinstance(event, Mapping):
        return event
    dump = getattr(event, "model_dump", None)
    if callable(dump):
        data = dump()
        if isinstance(data, Mapping):
            return data
    raise TypeError(f"cannot read a stream event of type {type(event).__name__}")


def as_dict(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else empty: wire fields are often null or absent."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_text(value: Any) -> str:
    """A wire field's text, or "" when it is absent or not a string (a stream goes on)."""
    return value if isinstance(value, str) else ""


def compact(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Drop null entries, so metadata only says what the wire said."""
    return {k: v for k, v in mapping.items() if v is not None}


class Segments:
    """Opens and closes segments for the adapters, so every wire yields START, DELTA*, END.

    Two wire models exist. Sequential wires (Anthropic blocks, Responses items, Gemini
    parts) have one block at a time: opening a segment ends the open one, which is where
    a block is flushed because the channel switched. Parallel wires (Chat Completions,
    Ollama) carry reasoning and answer as two fields of one message, often interleaved
    delta by delta: each field is one segment, open until the message ends.

    With `index=None` a delta continues the open segment of its channel, or opens one
    with the next free number.
    """

    def __init__(self, provider: str, *, parallel: bool = False) -> None:
        self.provider = provider
        self.parallel = parallel
        self.open_keys: list[tuple[Channel, int]] = []
        self._next = 0

    @property
    def current(self) -> tuple[Channel, int] | None:
        """The most recently opened segment still open."""
        return self.open_keys[-1] if self.open_keys else None

    def new_index(self) -> int:
        """A content index no segment has used yet."""
        index = self._next
        self._next += 1
        return index

    def chunk(
        self,
        phase: Phase,
        channel: Channel,
        text: str = "",
        index: int = 0,
        metadata: Mapping[str, Any] | None = None,
        *,
        complete: bool = False,
    ) -> ReasoningChunk:
        return ReasoningChunk(
            self.provider, phase, channel, text, index, complete, compact(metadata or {})
        )

    def _key(self, channel: Channel, index: int | None) -> tuple[Channel, int] | None:
        """The open segment a delta on `channel` continues, if any."""
        if index is not None:
            return (channel, index) if (channel, index) in self.open_keys else None
        return next((k for k in reversed(self.open_keys) if k[0] is channel), None)

    def open(
        self, channel: Channel, index: int | None = None, metadata: Mapping[str, Any] | None = None
    ) -> list[ReasoningChunk]:
        if self._key(channel, index) is not None:
            return []
        index = self._next if index is None else index
        out = [] if self.parallel else self.close()
        self.open_keys.append((channel, index))
        self._next = max(self._next, index + 1)
        out.append(self.chunk(Phase.START, channel, "", index, metadata))
        return out

    def delta(
        self,
        channel: Channel,
        text: str,
        index: int | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[ReasoningChunk]:
        if not text:
            return []
        out = self.open(channel, index, metadata)
        key = self._key(channel, index)
        assert key is not None
        out.append(self.chunk(Phase.DELTA, channel, text, key[1]))
        return out

    def close(
        self, channel: Channel | None = None, index: int | None = None
    ) -> list[ReasoningChunk]:
        """End every open segment, or only the given one."""
        keys = [k for k in self.open_keys if channel is None or k == (channel, index)]
        for key in keys:
            self.open_keys.remove(key)
        return [self.chunk(Phase.END, c, "", i, complete=True) for c, i in keys]

    def signature(
        self, text: str, index: int | None = None, metadata: Mapping[str, Any] | None = None
    ) -> list[ReasoningChunk]:
        """A signature for the block at `index` (default: the segment opened last)."""
        if not text:
            return []
        if index is None:
            current = self.current
            index = current[1] if current is not None else max(self._next - 1, 0)
        return [self.chunk(Phase.DELTA, Channel.SIGNATURE, text, index, metadata)]


class StreamAdapter(ABC):
    """Turns one provider's raw stream events into `ReasoningChunk`s.

    Adapters are stateful across one message (open segments, the message start);
    `reset()` readies one for the next. Call `finish()` when the stream ends, so a
    stream cut off mid-block still closes every segment and the message.
    """

    name: ClassVar[str]
    wire: ClassVar[Wire]
    parallel: ClassVar[bool] = False  # see `Segments`
    #: The key of an event that reports an error in place of content (None: no such event).
    error_key: ClassVar[str | None] = None

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything about the previous message."""
        self.segments = Segments(self.name, parallel=self.parallel)
        self.started = False
        self.ended = False
        self.end_metadata: dict[str, Any] = {}

    def parse(self, event: Any) -> tuple[ReasoningChunk, ...]:
        """The chunks one raw event (dict or SDK object) stands for; unknown events give none.
        An event that reports an error instead of content (`_error`) ends the message with it."""
        data = event_dict(event)
        error = self._error(data)
        if error is not None:
            return tuple(self._end_message(error=error))
        return tuple(self._parse(data))

    def _error(self, event: Mapping[str, Any]) -> Any:
        """The error an event carries instead of content, or None: the value of its
        `error_key` where the wire reports errors so."""
        return event.get(self.error_key) if self.error_key else None

    def finish(self) -> tuple[ReasoningChunk, ...]:
        """Close what the stream left open; after this the message is complete."""
        out = self.segments.close()
        if self.started and not self.ended:
            out.extend(self._end_message())
        return tuple(out)

    @abstractmethod
    def _parse(self, event: Mapping[str, Any]) -> Iterable[ReasoningChunk]: ...

    @classmethod
    @abstractmethod
    def claims(cls, event: Mapping[str, Any]) -> bool:
        """True when `event` has this adapter's wire shape (capture detection)."""

    @classmethod
    def model_of(cls, event: Mapping[str, Any]) -> str | None:
        """The model an event names, if it names one."""
        model = event.get("model")
        return model if isinstance(model, str) and model else None

    def _start_message(self, metadata: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        if not self.started:
            self.started = True
            yield self.segments.chunk(Phase.START, Channel.MESSAGE, metadata=compact(metadata))

    def _end_message(self, **metadata: Any) -> list[ReasoningChunk]:
        if self.ended:
            return []
        out = list(self._start_message({}))  # an error event can be the first thing we see
        out.extend(self.segments.close())
        self.ended = True
        self.end_metadata.update(compact(metadata))
        out.append(
            self.segments.chunk(
                Phase.END, Channel.MESSAGE, metadata=dict(self.end_metadata), complete=True
            )
        )
        return out
