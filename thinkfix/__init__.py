"""thinkfix: find, count and repair reasoning that leaked into stored LLM agent sessions."""

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

__version__ = "0.1.0"

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
