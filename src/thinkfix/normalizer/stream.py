"""Streaming normalization: the same pipeline as `normalize`, fed chunk by chunk."""

from __future__ import annotations

from thinkfix.normalizer.pipeline import Pipeline, clean_native
from thinkfix.normalizer.policy import DEFAULT, Policy
from thinkfix.normalizer.spans import Delta, Finding, Label
from thinkfix.normalizer.stages import Piece


class StreamNormalizer:
    """Feed answer text as it streams; get visible and reasoning deltas back.

    With `holdback=None` (the default) the output equals `normalize` on the whole
    text for every chunking. A live runtime that cannot wait for the first
    delimiter sets a finite `holdback` (visible text is withheld for at most that
    many characters), and `start_in_reasoning=True` when its chat template opened
    the reasoning block in the prompt.
    """

    def __init__(self, policy: Policy = DEFAULT, *, start_in_reasoning: bool = False,
                 holdback: int | None = None, native_reasoning: str | None = None) -> None:
        self._pipeline = Pipeline(policy, native=clean_native(native_reasoning, policy),
                                  start_in_reasoning=start_in_reasoning, holdback=holdback)
        self._enabled = policy.enabled
        self._last_block: int | None = None
        self._thinking_out = False
        self._segments: list[list[str]] = []

    def feed(self, chunk: str) -> Delta:
        if self._pipeline.finished:
            raise RuntimeError("feed() after finish()")
        if not self._enabled:
            return Delta(chunk)
        return self._delta(self._pipeline.feed(chunk))

    def finish(self) -> Delta:
        """Flush everything held back; the stream is over."""
        if self._pipeline.finished:
            return Delta()
        return self._delta(self._pipeline.finish())

    @property
    def segments(self) -> tuple[str, ...]:
        """The extracted reasoning released so far, one string per block (as `Result.extracted`)."""
        return tuple("".join(parts) for parts in self._segments)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The leaks found so far (complete after `finish`)."""
        return self._pipeline.findings()

    def _delta(self, pieces: list[Piece]) -> Delta:
        visible: list[str] = []
        thinking: list[str] = []
        for p in pieces:
            if p.label is Label.VISIBLE:
                visible.append(p.text)
            elif p.label is Label.THINKING:
                if p.block != self._last_block:
                    if self._thinking_out:
                        thinking.append("\n\n")
                    self._last_block = p.block
                    self._segments.append([])
                self._segments[-1].append(p.text)
                thinking.append(p.text)
                self._thinking_out = True
        return Delta("".join(visible), "".join(thinking))
