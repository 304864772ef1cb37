"""The explicit list of scan reporters, one per `OutputFormat`, and lookup by name.

Its own module, above every reporter, so `base` (the interface the reporters import)
never has to reach back up for the registry.
"""

from __future__ import annotations

from thinkfix.reporters.base import LazyTable, OutputFormat, Reporter, by_name

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


REPORTERS: LazyTable[OutputFormat, Reporter] = LazyTable("thinkfix.reporters", _WHERE)


def reporter_class(fmt: OutputFormat) -> type[Reporter]:
    """The reporter class for a format, its module imported on first use."""
    return REPORTERS.cls(fmt)


def get_reporter(name: str | OutputFormat) -> Reporter:
    """The reporter for a format name; `ValueError` naming the choices when there is none."""
    return by_name(REPORTERS, OutputFormat, name, "output format")
