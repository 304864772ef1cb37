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


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def compact(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Drop null entries, so metadata only says what the wire said."""
    return {k: v for k, v in mapping.items() if v is not None}


class Segments:
    """Opens and closes segments for wires that have no explicit block events.

    Only one segment is open at a time: opening another ends the current one, which is
    what "flush when the channel switches" means at the chunk level. With `index=None`
    a new segment gets the next free number; a delta on the open channel continues it.
    """

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.current: tuple[Channel, int] | None = None
        self._next = 0

    def chunk(self, phase: Phase, channel: Channel, text: str = "", index: int = 0,
              metadata: Mapping[str, Any] | None = None, *, complete: bool = False) -> ReasoningChunk:
        return ReasoningChunk(self.provider, phase, channel, text, index, complete, compact(metadata or {}))

    def open(self, channel: Channel, index: int | None = None,
             metadata: Mapping[str, Any] | None = None) -> list[ReasoningChunk]:
        if index is None:
            if self.current is not None and self.current[0] is channel:
                return []
            index = self._next
        elif self.current == (channel, index):
            return []
        out = self.close()
        self.current = (channel, index)
        self._next = max(self._next, index + 1)
        out.append(self.chunk(Phase.START, channel, "", index, metadata))
        return out

    def delta(self, channel: Channel, text: str, index: int | None = None,
              metadata: Mapping[str, Any] | None = None) -> list[ReasoningChunk]:
        if not text:
            return []
        out = self.open(channel, index, metadata)
        assert self.current is not None
        out.append(self.chunk(Phase.DELTA, channel, text, self.current[1]))
        return out

    def close(self) -> list[ReasoningChunk]:
        if self.current is None:
            return []
        channel, index = self.current
        self.current = None
        return [self.chunk(Phase.END, channel, "", index, complete=True)]

    def signature(self, text: str, index: int | None = None,
                  metadata: Mapping[str, Any] | None = None) -> list[ReasoningChunk]:
        """A signature for the block at `index` (default: the open one)."""
        if not text:
            return []
        if index is None:
            index = self.current[1] if self.current is not None else max(self._next - 1, 0)
        return [self.chunk(Phase.DELTA, Channel.SIGNATURE, text, index, metadata)]


class StreamAdapter(ABC):
    """Turns one provider's raw stream events into `ReasoningChunk`s.

    Adapters are stateful across one message (open segments, the message start);
    `reset()` readies one for the next. Call `finish()` when the stream ends, so a
    stream cut off mid-block still closes every segment and the message.
    """

    name: ClassVar[str]
    wire: ClassVar[Wire]

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything about the previous message."""
        self.segments = Segments(self.name)
        self.started = False
        self.ended = False
        self.end_metadata: dict[str, Any] = {}

    def parse(self, event: Any) -> tuple[ReasoningChunk, ...]:
        """The chunks one raw event (dict or SDK object) stands for; unknown events give none."""
        return tuple(self._parse(event_dict(event)))

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
        out.append(self.segments.chunk(Phase.END, Channel.MESSAGE, metadata=dict(self.end_metadata),
                                       complete=True))
        return out
