"""OpenMetrics text exposition, so a metrics pipeline can chart leak rates per model and format.

Message counts by format and by model are separate families: every message has one format and
one model, so summing either family gives the total, and summing one family never double counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from thinkfix.engine.report import SCHEMA_VERSION, Report, Summary
from thinkfix.engine.telemetry.metrics import ASSISTANT_MESSAGES, FINDINGS, LEAKING_MESSAGES, Family
from thinkfix.io.errors import ErrorKind
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    refused_messages,
)
from thinkfix.reporters.controls import visible_strings

Labels = tuple[tuple[str, str], ...]


def escape_label_value(value: str) -> str:
    """A label value as OpenMetrics quotes it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: Labels, value: int) -> str:
    if not labels:
        return f"{name} {value}"
    body = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels)
    return f"{name}{{{body}}} {value}"


def _family(
    name: str, kind: str, help_text: str, samples: Iterable[tuple[Labels, int]]
) -> list[str]:
    suffix = {"counter": "_total", "info": "_info"}.get(kind, "")
    lines = [f"# TYPE {name} {kind}", f"# HELP {name} {help_text}"]
    lines += [_sample(name + suffix, labels, value) for labels, value in sorted(samples)]
    return lines


def _by(key: str, counts: Mapping[str, int]) -> list[tuple[Labels, int]]:
    return [(((key, name),), value) for name, value in counts.items()]


#: The message-count gauges beside the shared counters, in order: (name, help, breakdown,
#: MessageCounts field). By model alone, for a pipeline that does not sum over formats, and
#: by day, for the trend.
_MESSAGE_FAMILIES = (
    (
        "thinkfix_assistant_messages_by_model",
        "Assistant messages scanned, by model.",
        "model",
        "assistant_messages",
    ),
    (
        "thinkfix_leaking_messages_by_model",
        "Assistant messages with leaked reasoning, by model.",
        "model",
        "leaking_messages",
    ),
    (
        "thinkfix_assistant_messages_by_day",
        "Assistant messages scanned, by day (UTC, of each message's time) and model.",
        "day",
        "assistant_messages",
    ),
    (
        "thinkfix_leaking_messages_by_day",
        "Assistant messages with leaked reasoning, by day (UTC) and model.",
        "day",
        "leaking_messages",
    ),
)


def _message_counts(s: Summary, breakdown: str, field: str) -> list[tuple[Labels, int]]:
    """One count of every model, or (day, model) of the summary."""
    if breakdown == "day":
        return [
            ((("day", day), ("model", model)), getattr(counts, field))
            for day, models in s.by_day.items()
            for model, counts in models.items()
        ]
    return _by(breakdown, {k: getattr(v, field) for k, v in s.by_model.items()})


def _counters(report: Report) -> dict[Family, list[tuple[Labels, int]]]:
    """The samples of the counter families `watch` exports too (engine/telemetry/metrics.py)."""
    by_pair = report.summary.by_format_and_model
    findings: Counter[Labels] = Counter(
        (("kind", f.kind), ("format", f.format), ("model", f.model or "")) for f in report.findings
    )
    return {
        ASSISTANT_MESSAGES: [
            ((("format", fmt), ("model", model)), c.assistant_messages)
            for fmt, models in by_pair.items()
            for model, c in models.items()
        ],
        LEAKING_MESSAGES: [
            ((("format", fmt), ("model", model)), c.leaking_messages)
            for fmt, models in by_pair.items()
            for model, c in models.items()
        ],
        FINDINGS: list(findings.items()),
    }


class OpenMetricsReporter(Reporter):
    """Families in a fixed order, samples sorted by labels, `# EOF` last."""

    format = OutputFormat.OPENMETRICS
    media_type = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    def document(self, report: Report, options: RenderOptions) -> str:
        report = visible_strings(report, one_line=True)  # a label value is one line of text
        s = report.summary
        chars: Counter[Labels] = Counter()
        for f in report.findings:
            chars[(("kind", f.kind), ("format", f.format))] += f.leaked_chars
        # Every error kind is present, at 0 when clean, so an alert on it never sees "no data".
        errors: Counter[str] = Counter({k.value: 0 for k in ErrorKind})
        errors.update(e.kind for e in report.errors)

        lines: list[str] = []
        lines += _family(
            f"{TOOL_NAME}_build",
            "info",
            "The tool and report schema that produced these metrics.",
            [((("schema_version", str(SCHEMA_VERSION)), ("version", report.tool_version)), 1)],
        )
        lines += _family("thinkfix_files", "gauge", "Session files scanned.", [((), s.files)])
        lines += _family(
            "thinkfix_records", "gauge", "Records (lines or documents) read.", [((), s.records)]
        )
        for family, samples in _counters(report).items():
            lines += _family(family.name, "counter", family.help, samples)
        for name, help_text, breakdown, field in _MESSAGE_FAMILIES:
            lines += _family(name, "gauge", help_text, _message_counts(s, breakdown, field))
        lines += _family(
            "thinkfix_leaked_chars",
            "counter",
            "Characters of leaked reasoning, by leak kind and session format.",
            chars.items(),
        )
        lines += _family(
            "thinkfix_baselined_leaks",
            "gauge",
            "Leaks covered by the baseline (they do not fail the run).",
            [((), s.baselined)],
        )
        lines += _family(
            "thinkfix_refused_messages",
            "gauge",
            "Leaking texts `thinkfix repair` leaves as they are (all reasoning, nothing else "
            "shown).",
            [((), refused_messages(report))],
        )
        lines += _family(
            "thinkfix_errors", "gauge", "Input errors, by error kind.", _by("kind", errors)
        )
        if report.health is not None:  # `scan --check`: only then, so a plain scan's is as before
            problems: Counter[Labels] = Counter(
                (("check", h.check.value), ("problem", h.problem.value))
                for h in report.health.findings
            )
            lines += _family(
                "thinkfix_health_findings",
                "gauge",
                "Session health problems (`scan --check`), by check and problem.",
                problems.items(),
            )
        lines += _family(
            "thinkfix_skipped_files",
            "gauge",
            "Files found but not scanned (not a session format, empty, disabled).",
            [((), len(report.skipped))],
        )
        lines += _family(
            "thinkfix_stale_baseline_entries",
            "gauge",
            "Baseline entries that match no finding.",
            [((), len(report.stale_baseline))],
        )
        lines.append("# EOF")
        return "\n".join(lines) + "\n"
