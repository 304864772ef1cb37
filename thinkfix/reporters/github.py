"""GitHub Actions workflow commands: each finding becomes an annotation on the file and line."""

from __future__ import annotations

from thinkfix.engine.report import Report
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    error_message,
    finding_message,
    finding_title,
    headline,
    health_message,
    health_title,
    shown_findings,
    shown_health,
)
from thinkfix.reporters.controls import visible_strings


def escape_data(value: str) -> str:
    """The message part of a workflow command, as the Actions runner unescapes it."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """A `key=value` property, where `:` and `,` would end the value early."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties: str | int | None) -> str:
    """One `::level key=value,...::message` line; properties that are None are left out."""
    props = ",".join(
        f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None
    )
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}"


class GithubReporter(Reporter):
    """New findings and input errors are errors; baselined findings are notices, so they stay out
    of the way of the warning and error budget GitHub shows per step."""

    format = OutputFormat.GITHUB

    def document(self, report: Report, options: RenderOptions) -> str:
        # One line per annotation, and the log a terminal shows: no name may break either.
        report = visible_strings(report, one_line=True)
        lines = []
        for f in shown_findings(report, options):
            lines.append(
                command(
                    "notice" if f.baselined else "error",
                    finding_message(f),
                    file=f.path,
                    line=f.line or None,
                    title=f"{TOOL_NAME}: {finding_title(f)}",
                )
            )
        for h in shown_health(report, options):
            lines.append(
                command(
                    "notice" if h.baselined else "error",
                    health_message(h),
                    file=h.path,
                    line=h.line or None,
                    title=f"{TOOL_NAME}: {health_title(h)}",
                )
            )
        for e in report.errors:
            lines.append(
                command(
                    "error",
                    error_message(e),
                    file=e.path,
                    line=e.line or None,
                    title=f"{TOOL_NAME}: input error ({e.kind})",
                )
            )
        for s in report.stale_baseline:
            lines.append(
                command(
                    "notice",
                    f"baseline entry {s.fingerprint} matches no finding",
                    file=s.path,
                    title=f"{TOOL_NAME}: stale baseline entry",
                )
            )
        # A plain line (not a command) so the log says what the annotations add up to.
        lines.append(f"{TOOL_NAME}: {headline(report)}")
        return "\n".join(lines) + "\n"
