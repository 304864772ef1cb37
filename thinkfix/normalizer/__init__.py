"""The pure text core: policy, tag grammar, whole-string and streaming normalizer."""

from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.policy import DEFAULT, NativeMode, OrphanClose, Policy
from thinkfix.normalizer.spans import Delta, Finding, Label, LeakKind, Result, Span
from thinkfix.normalizer.stream import StreamNormalizer

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
