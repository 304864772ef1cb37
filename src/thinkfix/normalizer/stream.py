"""Streaming normalization (placeholder until the scanner lands)."""

from __future__ import annotations

from thinkfix.normalizer.policy import DEFAULT, Policy
from thinkfix.normalizer.spans import Delta


class StreamNormalizer:
    def __init__(self, policy: Policy = DEFAULT, *, start_in_reasoning: bool = False,
                 holdback: int | None = None, native_reasoning: str | None = None) -> None:
        raise NotImplementedError

    def feed(self, chunk: str) -> Delta:
        raise NotImplementedError

    def finish(self) -> Delta:
        raise NotImplementedError
