"""Scan reporters: one module per output format, looked up through `registry`.

Reporter classes are imported on first use (PEP 562 `__getattr__`), so importing this
package does not import rich or any reporter a run does not use.
"""

from __future__ import annotations

from typing import Any

from thinkfix.reporters.base import DEFAULT_OPTIONS, OutputFormat, RenderOptions, Reporter
from thinkfix.reporters.registry import REPORTERS, get_reporter, reporter_class

_CLASSES = {
    "ConciseReporter": OutputFormat.CONCISE,
    "GithubReporter": OutputFormat.GITHUB,
    "GitlabReporter": OutputFormat.GITLAB,
    "HtmlReporter": OutputFormat.HTML,
    "JsonReporter": OutputFormat.JSON,
    "JsonlReporter": OutputFormat.JSONL,
    "JunitReporter": OutputFormat.JUNIT,
    "MarkdownReporter": OutputFormat.MARKDOWN,
    "OpenMetricsReporter": OutputFormat.OPENMETRICS,
    "SarifReporter": OutputFormat.SARIF,
    "TextReporter": OutputFormat.TEXT,
}


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return reporter_class(_CLASSES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
