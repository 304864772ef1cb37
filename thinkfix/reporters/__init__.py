"""Scan reporters: one module per output format, looked up through `registry`.

Reporter classes are imported on first use (PEP 562 `__getattr__`), so importing this
package does not import rich or any reporter a run does not use.
"""

from __future__ import annotations

from typing import Any

from thinkfix.reporters.base import DEFAULT_OPTIONS, OutputFormat, RenderOptions, Reporter
from thinkfix.reporters.registry import REPORTERS, get_reporter


def __getattr__(name: str) -> Any:
    return REPORTERS.class_named(__name__, name)


__all__ = [
    "DEFAULT_OPTIONS",
    "REPORTERS",
    "ConciseReporter",
    "GithubReporter",
    "GitlabReporter",
    "HtmlReporter",
    "JsonReporter",
    "JsonlReporter",
    "JunitReporter",
    "MarkdownReporter",
    "OpenMetricsReporter",
    "OutputFormat",
    "RenderOptions",
    "Reporter",
    "SarifReporter",
    "TextReporter",
    "get_reporter",
]
