"""OpenAI Responses API stream events (`response.*`).

Reasoning arrives as summary parts (`reasoning_summary_text`, one block per part) or,
from open-weight models behind the same API, as `reasoning_text`; the item's
`encrypted_content` is the opaque state to send back, so it travels as the signature.
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

_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


class OpenAIResponsesAdapter(StreamAdapter):
    """One Responses stream; `content_index` is the event's `output_index`."""

    name = "openai-responses"
    wire = Wire.RESPONSES

    @classmethod
    def claims(cls, event: Mapping[str, Any]) -> bool:
        return as_text(event.get("type")).startswith("response.")

    @classmethod
    def model_of(cls, event: Mapping[str, Any]) -> str | None:
        return super().model_of(as_dict(event.get("response")))

    def _parse(self, event: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        kind = as_text(event.get("type"))
        seg = self.segments
        index = event.get("output_index")
        index = index if isinstance(index, int) else 0
        item_id = event.get("item_id")
        if kind in ("response.created", "response.in_progress", *_TERMINAL):
            response = as_dict(event.get("response"))
            yield from self._start_message(
                {"id": response.get("id"), "model": response.get("model")}
            )
            if kind in _TERMINAL:
                incomplete = as_dict(response.get("incomplete_details"))
                yield from self._end_message(
                    stop_reason=incomplete.get("reason") or response.get("status"),
                    usage=response.get("usage"),
                    error=response.get("error"),
                )
        elif kind == "error":
            yield from self._end_message(
                error={k: event.get(k) for k in ("code", "message", "param")}
            )
        elif kind == "response.output_item.added":
            item = as_dict(event.get("item"))
            if item.get("type") == "function_call":
                yield from seg.open(
                    Channel.TOOL_CALL,
                    index,
                    {
                        "id": item.get("call_id"),
                        "name": item.get("name"),
                        "item_id": item.get("id"),
                    },
                )
                yield from seg.delta(Channel.TOOL_CALL, as_text(item.get("arguments")), index)
        elif kind == "response.reasoning_summary_part.added":
            # Each summary part is its own paragraph: a block of its own.
            yield from seg.close()
            yield from seg.open(
                Channel.THINKING,
                index,
                {
                    "item_id": item_id,
                    "kind": "summary",
                    "summary_index": event.get("summary_index"),
                },
            )
        elif kind == "response.reasoning_summary_text.delta":
            yield from seg.delta(Channel.THINKING, as_text(event.get("delta")), index)
        elif kind == "response.reasoning_text.delta":
            yield from seg.delta(
                Channel.THINKING,
                as_text(event.get("delta")),
                index,
                {"item_id": item_id, "kind": "reasoning_text"},
            )
        elif kind == "response.content_part.added":
            if as_dict(event.get("part")).get("type") == "output_text":
                yield from seg.open(Channel.VISIBLE, index, {"item_id": item_id})
        elif kind == "response.output_text.delta":
            yield from seg.delta(Channel.VISIBLE, as_text(event.get("delta")), index)
        elif kind == "response.function_call_arguments.delta":
            yield from seg.delta(Channel.TOOL_CALL, as_text(event.get("delta")), index)
        elif kind in ("response.reasoning_summary_part.done", "response.content_part.done"):
            yield from seg.close()
        elif kind == "response.output_item.done":
            yield from seg.close()
            item = as_dict(event.get("item"))
            if item.get("type") == "reasoning":
                yield from seg.signature(
                    as_text(item.get("encrypted_content")),
                    index,
                    {"field": "encrypted_content", "item_id": item.get("id")},
                )
