"""Whole-string normalization (placeholder until the scanner lands)."""

from __future__ import annotations

from thinkfix.normalizer.policy import DEFAULT, Policy
from thinkfix.normalizer.spans import Result


def normalize(text: str, *, native_reasoning: str | None = None, policy: Policy = DEFAULT,
              start_in_reasoning: bool = False) -> Result:
    raise NotImplementedError
