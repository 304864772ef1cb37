"""The explicit list of scan reporters, one per `OutputFormat`, and lookup by name.

Its own module, above every reporter, so `base` (the interface the reporters import)
never has to reach back up for the registry.
"""

from __future__ import annotations

from thinkfix.reporters.base import OutputFormat, Reporter
from thinkfix.reporters.concise import ConciseReporter
from thinkfix.reporters.github import GithubReporter
from thinkfix.reporters.gitlab import GitlabReporter
from thinkfix.reporters.json import JsonReporter
from thinkfix.reporters.jsonl import JsonlReporter
from thinkfix.reporters.junit import JunitReporter
from thinkfix.reporters.markdown import MarkdownReporter
from thinkfix.reporters.openmetrics import OpenMetricsReporter
from thinkfix.reporters.sarif import SarifReporter
from thinkfix.reporters.text import TextReporter

# Explicit, so a format cannot exist without a reporter: a test checks every member is here.
REPORTERS: dict[OutputFormat, Reporter] = {
    OutputFormat.TEXT: TextReporter(),
    OutputFormat.JSON: JsonReporter(),
    OutputFormat.JSONL: JsonlReporter(),
    OutputFormat.SARIF: SarifReporter(),
    OutputFormat.JUNIT: JunitReporter(),
    OutputFormat.GITHUB: GithubReporter(),
    OutputFormat.MARKDOWN: MarkdownReporter(),
    OutputFormat.OPENMETRICS: OpenMetricsReporter(),
    OutputFormat.CONCISE: ConciseReporter(),
    OutputFormat.GITLAB: GitlabReporter(),
}


def get_reporter(name: str | OutputFormat) -> Reporter:
    """The reporter for a format name; `ValueError` naming the choices when there is none."""
    try:
        return REPORTERS[OutputFormat(name)]
    except ValueError:
        choices = ", ".join(f.value for f in OutputFormat)
        raise ValueError(f"unknown output format {name!r} (choose from {choices})") from None
