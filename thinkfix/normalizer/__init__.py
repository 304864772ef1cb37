"""The pure text core: policy, tag grammar, whole-string and streaming normalizer."""

from typing import Any

from thinkfix.normalizer.policy import DEFAULT, NativeMode, OrphanClose, Policy
from thinkfix.normalizer.spans import Delta, Finding, Label, LeakKind, Result, Span

__all__ = [
    "DEFAULT",
    "Delta",
    "Finding",
    "Label",
    "LeakKind",
    "NativeMode",
    "OrphanClose",
    "Policy",
    "Result",
    "Span",
    "StreamNormalizer",
    "normalize",
]


def __getattr__(name: str) -> Any:
    """`normalize` and `StreamNormalizer` load the scanner on first use, not on import."""
    if name == "normalize":
        from thinkfix.normalizer.batch import normalize

        return normalize
    if name == "StreamNormalizer":
        from thinkfix.normalizer.stream import StreamNormalizer

        return StreamNormalizer
    raise AttributeError(f"module 'thinkfix.normalizer' has no attribute {name!r}")
