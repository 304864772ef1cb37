"""Ollama NDJSON streams: `/api/chat` (`message.thinking`, `message.content`) and `/api/generate`.

With `think` on, Ollama parses the model's tags into `thinking`; with it off, or on a
version or model it cannot parse, the same `<think>` text arrives in `content`.
Tool calls come whole (arguments as an object), never as fragments.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from thinkfix.providers.base import (
    Channel,
    ReasoningChunk,
    StreamAdapter,
    Wire,
    as_dict,
    as_list,
    as_text,
)

_USAGE_FIELDS = (
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)


class OllamaAdapter(StreamAdapter):
    """One Ollama response: `thinking` and `content` are fields (index 0), tool calls after."""

    name = "ollama"
    wire = Wire.OLLAMA
    error_key = "error"
    parallel = True

    @classmethod
    def claims(cls, event: Mapping[str, Any]) -> bool:
        return (
            "done" in event
            and "created_at" in event
            and ("message" in event or "response" in event)
        )

    def _parse(self, event: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        yield from self._start_message(
            {"model": event.get("model"), "created_at": event.get("created_at")}
        )
        seg = self.segments
        message = as_dict(event.get("message"))
        thinking = as_text(message.get("thinking")) or as_text(event.get("thinking"))
        content = as_text(message.get("content")) or as_text(event.get("response"))
        yield from seg.delta(Channel.THINKING, thinking, 0)
        yield from seg.delta(Channel.VISIBLE, content, 0)
        for call in as_list(message.get("tool_calls")):
            call = as_dict(call)
            function = as_dict(call.get("function"))
            arguments = function.get("arguments")
            text = (
                arguments
                if isinstance(arguments, str)
                else json.dumps(arguments or {}, ensure_ascii=False)
            )
            index = seg.new_index()
            yield from seg.open(
                Channel.TOOL_CALL, index, {"id": call.get("id"), "name": function.get("name")}
            )
            yield from seg.delta(Channel.TOOL_CALL, text, index)
            yield from seg.close(Channel.TOOL_CALL, index)
        if event.get("done"):
            usage = {k: event[k] for k in _USAGE_FIELDS if k in event}
            yield from self._end_message(stop_reason=event.get("done_reason"), usage=usage or None)
