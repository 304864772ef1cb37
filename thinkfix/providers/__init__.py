"""Provider stream adapters: wire events -> `ReasoningChunk`s -> a normalized message.

`registry.resolve(provider, model)` picks an adapter, `adapter.parse(event)` turns each raw
event into chunks, and an `Accumulator` normalizes the visible text as it streams and
assembles the final message; `capture` reads saved SSE / NDJSON streams for replay.
"""

from thinkfix.providers.accumulator import (
    Accumulator,
    AssembledMessage,
    Block,
    BlockType,
    Leak,
    Replay,
    Source,
    replay_events,
)
from thinkfix.providers.base import Channel, Phase, ReasoningChunk, StreamAdapter, Wire
from thinkfix.providers.registry import ADAPTERS, Resolution, create, resolve

__all__ = [
    "ADAPTERS",
    "Accumulator",
    "AssembledMessage",
    "Block",
    "BlockType",
    "Channel",
    "Leak",
    "Phase",
    "ReasoningChunk",
    "Replay",
    "Resolution",
    "Source",
    "StreamAdapter",
    "Wire",
    "create",
    "replay_events",
    "resolve",
]
