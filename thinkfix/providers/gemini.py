"""Gemini `generateContent` stream chunks (`candidates[0].content.parts[]`).

Thought summaries are parts with `thought: true`. A `thoughtSignature` rides on the part
it was issued with (often a text or `functionCall` part, sometimes an empty one at the
end), and must go back on that part, so it attaches to that part's block.
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


class GeminiAdapter(StreamAdapter):
    """Gemini API / Vertex AI streams; segments are numbered in order of appearance."""

    name = "gemini"
    wire = Wire.GEMINI
    error_key = "error"

    @classmethod
    def claims(cls, event: Mapping[str, Any]) -> bool:
        return isinstance(event.get("candidates"), list) or (
            "usageMetadata" in event and "modelVersion" in event
        )

    @classmethod
    def model_of(cls, event: Mapping[str, Any]) -> str | None:
        model = event.get("modelVersion")
        return model if isinstance(model, str) and model else None

    def _parse(self, event: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        yield from self._start_message(
            {"id": event.get("responseId"), "model": event.get("modelVersion")}
        )
        seg = self.segments
        if event.get("usageMetadata"):
            self.end_metadata["usage"] = event.get("usageMetadata")
        candidates = as_list(event.get("candidates"))
        candidate = as_dict(candidates[0]) if candidates else {}
        for part in as_list(as_dict(candidate.get("content")).get("parts")):
            part = as_dict(part)
            signature = as_text(part.get("thoughtSignature"))
            if "functionCall" in part:
                call = as_dict(part.get("functionCall"))
                yield from seg.close()
                yield from seg.open(
                    Channel.TOOL_CALL, None, {"id": call.get("id"), "name": call.get("name")}
                )
                yield from seg.delta(
                    Channel.TOOL_CALL, json.dumps(call.get("args") or {}, ensure_ascii=False)
                )
                yield from seg.signature(signature, None, {"field": "thoughtSignature"})
                yield from seg.close()
                continue
            if "text" not in part:
                continue  # inline data, code execution and other parts carry no text to normalize
            channel = Channel.THINKING if part.get("thought") else Channel.VISIBLE
            if signature:
                yield from seg.open(
                    channel
                )  # the signature belongs to this part even when its text is empty
            yield from seg.delta(channel, as_text(part.get("text")))
            yield from seg.signature(signature, None, {"field": "thoughtSignature"})
        reason = candidate.get("finishReason")
        if reason:
            yield from self._end_message(stop_reason=reason)
