"""OpenAI Chat Completions chunks, and every host that speaks them.

Hosts disagree on where native reasoning goes: DeepSeek and vLLM use
`reasoning_content`, OpenRouter and newer vLLM `reasoning` (with `reasoning_details`
beside it), a few `thinking`. Some mirror the same text into two fields, so equal
values in one delta count once.
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

NATIVE_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning", "thinking")


def native_texts(delta: Mapping[str, Any]) -> list[str]:
    """The native reasoning of one delta, each distinct text once, in field priority order."""
    texts: list[str] = []
    for name in NATIVE_FIELDS:
        text = as_text(delta.get(name))
        if text and text not in texts:
            texts.append(text)
    if not texts:
        # reasoning_details alone (no mirrored plain field): take its readable text.
        for detail in as_list(delta.get("reasoning_details")):
            detail = as_dict(detail)
            text = as_text(detail.get("text")) or as_text(detail.get("summary"))
            if text and text not in texts:
                texts.append(text)
    return texts


class OpenAIChatAdapter(StreamAdapter):
    """`choices[0].delta` of `chat.completion.chunk` events; other choices are ignored."""

    name = "openai"
    wire = Wire.CHAT
    parallel = True

    @classmethod
    def claims(cls, event: Mapping[str, Any]) -> bool:
        if event.get("object") == "chat.completion.chunk":
            return True
        choices = as_list(event.get("choices"))
        return bool(choices) and isinstance(as_dict(choices[0]).get("delta"), Mapping)

    def _error(self, event: Mapping[str, Any]) -> Any:
        return None if event.get("choices") else event.get("error")

    def _parse(self, event: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        yield from self._start_message(
            {
                "id": event.get("id"),
                "model": event.get("model"),
                "system_fingerprint": event.get("system_fingerprint"),
            }
        )
        for choice in as_list(event.get("choices")):
            choice = as_dict(choice)
            if choice.get("index", 0) != 0:
                continue
            yield from self._delta(as_dict(choice.get("delta")))
            reason = choice.get("finish_reason")
            if reason:
                self.end_metadata["stop_reason"] = reason
                yield from self.segments.close()
        usage = event.get("usage")
        if usage:
            self.end_metadata["usage"] = usage

    def _delta(self, delta: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        seg = self.segments
        for text in native_texts(delta):
            yield from seg.delta(Channel.THINKING, text, 0)
        for detail in as_list(delta.get("reasoning_details")):
            detail = as_dict(detail)
            if detail.get("type") == "reasoning.encrypted" and as_text(detail.get("data")):
                index = seg.new_index()
                yield from seg.open(Channel.REDACTED, index, {"field": "reasoning_details"})
                yield from seg.delta(Channel.REDACTED, as_text(detail.get("data")), index)
                yield from seg.close(Channel.REDACTED, index)
            elif as_text(detail.get("signature")):
                yield from seg.signature(
                    as_text(detail.get("signature")), 0, {"field": "reasoning_details"}
                )
        content = delta.get("content")
        if isinstance(content, str):
            yield from seg.delta(Channel.VISIBLE, content, 0)
        else:
            # Mistral's Magistral streams content as typed parts, thinking among them.
            for part in as_list(content):
                part = as_dict(part)
                if part.get("type") == "thinking":
                    for inner in as_list(part.get("thinking")):
                        yield from seg.delta(
                            Channel.THINKING, as_text(as_dict(inner).get("text")), 0
                        )
                else:
                    yield from seg.delta(Channel.VISIBLE, as_text(part.get("text")), 0)
        for call in as_list(delta.get("tool_calls")):
            call = as_dict(call)
            index = call.get("index", 0)
            index = index if isinstance(index, int) else 0
            function = as_dict(call.get("function"))
            yield from seg.open(
                Channel.TOOL_CALL, index, {"id": call.get("id"), "name": function.get("name")}
            )
            arguments = function.get("arguments")
            if isinstance(arguments, Mapping):  # a few hosts send the object, not its JSON text
                arguments = json.dumps(arguments, ensure_ascii=False)
            yield from seg.delta(Channel.TOOL_CALL, as_text(arguments), index)
