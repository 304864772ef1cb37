"""thinkfix: find, count and repair reasoning that leaked into stored LLM agent sessions."""

from thinkfix._version import __version__
from thinkfix.normalizer import (
    DEFAULT,
    Delta,
    Finding,
    Label,
    LeakKind,
    NativeMode,
    OrphanClose,
    Policy,
    Result,
    Span,
    StreamNormalizer,
    normalize,
)

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
    "__version__",
    "normalize",
]
