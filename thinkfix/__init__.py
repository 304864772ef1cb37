"""thinkfix: find, count and repair reasoning that leaked into stored LLM agent sessions."""

from typing import Any

from thinkfix._version import __version__

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


def __getattr__(name: str) -> Any:
    """The normalizer's names, imported on first use: a command that never normalizes text
    (a scan of clean sessions) does not pay for compiling its grammar (#13 start-up)."""
    if name in __all__ and name != "__version__":
        from thinkfix import normalizer

        return getattr(normalizer, name)
    raise AttributeError(f"module 'thinkfix' has no attribute {name!r}")
