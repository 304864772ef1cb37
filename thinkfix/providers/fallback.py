"""Tag fallback: for models with no native reasoning field, only the text is read.

Reasoning then exists only as inline tags, and the accumulator's `StreamNormalizer`
separates it; this adapter does no tag handling of its own, so there is one tag grammar.
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
    as_list,
)


def event_text(event: Mapping[str, Any]) -> str | None:
    """The text of the commonest streaming shapes, or None when the event has none."""
    choices = as_list(event.get("choices"))
    if choices:
        choice = as_dict(choices[0])
        for value in (as_dict(choice.get("delta")).get("content"), choice.get("text")):
            if isinstance(value, str):
                return value
    candidates: tuple[Any, ...] = (
        as_dict(event.get("message")).get("content"),  # Ollama /api/chat
        event.get("response"),  # Ollama /api/generate
        as_dict(event.get("token")).get("text"),  # Hugging Face TGI
        as_dict(event.get("delta")).get("text"),
        event.get("text"),
        event.get("content"),
    )
    for value in candidates:
        if isinstance(value, str):
            return value
    return None


class TagFallbackAdapter(StreamAdapter):
    """Any stream whose events carry text; native reasoning fields are not read."""

    name = "fallback"
    wire = Wire.TEXT

    @classmethod
    def claims(cls, event: Mapping[str, Any]) -> bool:
        return event_text(event) is not None

    def _parse(self, event: Mapping[str, Any]) -> Iterator[ReasoningChunk]:
        yield from self._start_message({"id": event.get("id"), "model": self.model_of(event)})
        yield from self.segments.delta(Channel.VISIBLE, event_text(event) or "", 0)
