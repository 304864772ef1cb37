"""Fakes and small helpers for the provider tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from thinkfix.providers.base import ReasoningChunk, StreamAdapter


def summary(chunks: Iterable[ReasoningChunk]) -> list[tuple[str, str, str, int]]:
    """(phase, channel, text, content_index) per chunk: what most assertions need."""
    return [(c.phase.value, c.channel.value, c.text, c.content_index) for c in chunks]


def run(
    adapter: StreamAdapter, events: Iterable[Any], *, finish: bool = True
) -> list[ReasoningChunk]:
    out: list[ReasoningChunk] = []
    for event in events:
        out.extend(adapter.parse(event))
    if finish:
        out.extend(adapter.finish())
    return out


class SdkEvent:
    """Stands in for a pydantic SDK event: only `model_dump()` is used."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def model_dump(self) -> dict[str, Any]:
        return dict(self._data)


@pytest.fixture
def sdk_event() -> type[SdkEvent]:
    return SdkEvent
