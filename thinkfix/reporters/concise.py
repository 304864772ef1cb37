"""One line per problem, `path:line:col: kind message`: the form editors' problem matchers read
(VS Code's `$eslint-compact`-style matchers, vim's errorformat, Emacs compilation mode).

The column is 1: a finding's line is its record's line, and the offset inside the stored text
is not a column of the file. A closing line says what the lines add up to; matchers skip it.
"""

from __future__ import annotations

from thinkfix.engine.report import Report
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    finding_message,
    headline,
    health_message,
    health_rule,
    shown_findings,
    shown_health,
)
from thinkfix.reporters.controls import visible_strings


def _where(path: str, line: int | None) -> str:
    return f"{path}:{line or 1}:1"


class ConciseReporter(Reporter):
    """New findings and input errors, one line each; baselined findings only when asked."""

    format = OutputFormat.CONCISE

    def document(self, report: Report, options: RenderOptions) -> str:
        # One line per problem, read in a terminal: no name or message may break a line or drive it.
        report = visible_strings(report, one_line=True)
        lines = []
        for f in shown_findings(report, options):
            message = finding_message(f).removeprefix(f"{f.kind}: ")
            lines.append(f"{_where(f.path, f.line)}: {f.kind} {message}")
        for h in shown_health(report, options):
            message = health_message(h).removeprefix(f"{h.problem.value}: ")
            lines.append(f"{_where(h.path, h.line)}: {health_rule(h)} {message}")
        for e in report.errors:
            lines.append(f"{_where(e.path, e.line)}: {e.kind} {e.message}")
        lines.append(f"{TOOL_NAME}: {headline(report)}")
        return "\n".join(lines) + "\n"
