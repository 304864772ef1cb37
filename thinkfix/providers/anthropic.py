"""Anthropic Messages stream events.

The wire already has explicit blocks (`content_block_start` / `_delta` / `_stop` with an
`index`), so segments map one to one. `signature_delta` belongs to the thinking block it
arrives in and must be kept byte for byte: a thinking block whose signature changed
makes the conversation unresumable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from thinkfix.providers.base import (
    Channel,
    ReasoningChunk,
    StreamAdapter,
    Wire,
    as_dict,
    as_text,
)

EVENT_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)

# content block type -> (channel, the field that may carry initial text)
_BLOCKS: dict[str, tuple[Channel, str]] = {
    "thinking": (Channel.THINKING, "thinking"),
    "redacted_thinking": (Channel.REDACTED, "data"),
    "text": (Channel.VISIBLE, "text"),
    "tool_use": (Channel.TOOL_CALL, ""),
    "server_tool_use": (Channel.TOOL_CALL, ""),
}

# delta type -> (channel, field)
_DELTAS: dict[str, tuple[Channel, str]] = {
    "thinking_delta": (Channel.THINKING, "thinking"),
    "text_delta": (Channel.VISIBLE, "text"),
    "input_json_delta": (Channel.TOOL_CALL, "partial_json"),
}


class AnthropicAdapter(StreamAdapter):
    """Anthropic (and Bedrock/Vertex Anthropic) streams; `content_index` is the block `index`."""

    name = "anthropic"
    wire = Wire.ANTHROPIC

    @classmethod
    def claims(cls, event: Mapping[str, Any]) -> bool:
        return event.get("type") in EVENT_TYPES

    @classmethod
    def model_of(cls, event: Mapping[str, Any]) -> str | None:
        return super().model_of(as_dict(event.get("message")))

    def _parse(self, event: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        kind = event.get("type")
        seg = self.segments
        index = event.get("index")
        index = index if isinstance(index, int) else 0
        if kind == "message_start":
            message = as_dict(event.get("message"))
            yield from self._start_message({"id": message.get("id"), "model": message.get("model")})
            if message.get("usage"):
                self.end_metadata["usage"] = dict(as_dict(message.get("usage")))
        elif kind == "content_block_start":
            block = as_dict(event.get("content_block"))
            known = _BLOCKS.get(as_text(block.get("type")))
            if known is None:
                return  # server tool results, future block types: no reasoning or answer text
            channel, text_field = known
            meta = (
                {"id": block.get("id"), "name": block.get("name")}
                if channel is Channel.TOOL_CALL
                else {}
            )
            yield from seg.open(channel, index, meta)
            if text_field:
                yield from seg.delta(channel, as_text(block.get(text_field)), index)
            if channel is Channel.THINKING:
                yield from seg.signature(as_text(block.get("signature")), index)
        elif kind == "content_block_delta":
            delta = as_dict(event.get("delta"))
            dtype = as_text(delta.get("type"))
            if dtype == "signature_delta":
                yield from seg.signature(as_text(delta.get("signature")), index)
            elif dtype in _DELTAS and (seg.current is None or seg.current[1] == index):
                channel, field = _DELTAS[dtype]
                yield from seg.delta(channel, as_text(delta.get(field)), index)
        elif kind == "content_block_stop":
            if seg.current is not None and seg.current[1] == index:
                yield from seg.close()
        elif kind == "message_delta":
            delta = as_dict(event.get("delta"))
            if delta.get("stop_reason"):
                self.end_metadata["stop_reason"] = delta.get("stop_reason")
            if event.get("usage"):
                usage = dict(as_dict(self.end_metadata.get("usage")))
                usage.update(as_dict(event.get("usage")))
                self.end_metadata["usage"] = usage
        elif kind == "message_stop":
            yield from self._end_message()
        elif kind == "error":
            yield from self._end_message(error=event.get("error"))
