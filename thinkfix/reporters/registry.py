"""The explicit list of scan reporters, one per `OutputFormat`, and lookup by name.

Its own module, above every reporter, so `base` (the interface the reporters import)
never has to reach back up for the registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from thinkfix.reporters.base import OutputFormat, Reporter, by_name

# Explicit, so a format cannot exist without a reporter: a test checks every member is here.
# Named, not imported: the text reporter pulls in rich, which `scan --format json` (or a
# pre-commit hook's `scan --help`) should not pay for at start-up.
_WHERE: dict[OutputFormat, tuple[str, str]] = {
    OutputFormat.TEXT: ("text", "TextReporter"),
    OutputFormat.JSON: ("json", "JsonReporter"),
    OutputFormat.JSONL: ("jsonl", "JsonlReporter"),
    OutputFormat.SARIF: ("sarif", "SarifReporter"),
    OutputFormat.JUNIT: ("junit", "JunitReporter"),
    OutputFormat.GITHUB: ("github", "GithubReporter"),
    OutputFormat.MARKDOWN: ("markdown", "MarkdownReporter"),
    OutputFormat.OPENMETRICS: ("openmetrics", "OpenMetricsReporter"),
    OutputFormat.CONCISE: ("concise", "ConciseReporter"),
    OutputFormat.GITLAB: ("gitlab", "GitlabReporter"),
    OutputFormat.HTML: ("html", "HtmlReporter"),
}


def reporter_class(fmt: OutputFormat) -> type[Reporter]:
    """The reporter class for a format, its module imported on first use."""
    module, name = _WHERE[fmt]
    cls: type[Reporter] = getattr(importlib.import_module(f"thinkfix.reporters.{module}"), name)
    return cls


class _Reporters(Mapping[OutputFormat, Reporter]):
    """Format -> reporter instance, each built (and its module imported) when first asked for."""

    def __init__(self) -> None:
        self._built: dict[OutputFormat, Reporter] = {}

    def __getitem__(self, fmt: OutputFormat) -> Reporter:
        if fmt not in self._built:
            self._built[fmt] = reporter_class(fmt)()
        return self._built[fmt]

    def __iter__(self) -> Iterator[OutputFormat]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


REPORTERS: Mapping[OutputFormat, Reporter] = _Reporters()


def get_reporter(name: str | OutputFormat) -> Reporter:
    """The reporter for a format name; `ValueError` naming the choices when there is none."""
    return by_name(REPORTERS, OutputFormat, name, "output format")
