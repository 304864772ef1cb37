"""thinkfix: find, count and repair reasoning that leaked into stored LLM agent sessions."""

from __future__ import annotations

from thinkfix._version import __version__

# typing's TYPE_CHECKING without importing typing: the facade runs first in every run, and
# `thinkfix.cli` imports typing (with click) with the cyclic collector off (#26 item 3).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


#: Where each public name is defined, imported on first use: a command that never normalizes
#: text (a scan of clean sessions) does not pay for compiling its grammar (#13 start-up).
_DEFINED_IN = {
    "DEFAULT": "thinkfix.normalizer.policy",
    "NativeMode": "thinkfix.normalizer.policy",
    "OrphanClose": "thinkfix.normalizer.policy",
    "Policy": "thinkfix.normalizer.policy",
    "Delta": "thinkfix.normalizer.spans",
    "Finding": "thinkfix.normalizer.spans",
    "Label": "thinkfix.normalizer.kinds",
    "LeakKind": "thinkfix.normalizer.kinds",
    "Result": "thinkfix.normalizer.spans",
    "Span": "thinkfix.normalizer.spans",
    "normalize": "thinkfix.normalizer.batch",
    "StreamNormalizer": "thinkfix.normalizer.stream",
}


def __getattr__(name: str) -> Any:
    module = _DEFINED_IN.get(name)
    if module is None:
        raise AttributeError(f"module 'thinkfix' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
