"""OpenMetrics text exposition, so a metrics pipeline can chart leak rates per model and format.

Message counts by format and by model are separate families: every message has one format and
one model, so summing either family gives the total, and summing one family never double counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from thinkfix.engine.report import SCHEMA_VERSION, ErrorKind, MessageCounts, Report
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    refused_messages,
)

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


def _by_day(
    by_day: Mapping[str, Mapping[str, MessageCounts]], value: Callable[[MessageCounts], int]
) -> list[tuple[Labels, int]]:
    return [
        ((("day", day), ("model", model)), value(counts))
        for day, models in by_day.items()
        for model, counts in models.items()
    ]


class OpenMetricsReporter(Reporter):
    """Families in a fixed order, samples sorted by labels, `# EOF` last."""

    format = OutputFormat.OPENMETRICS
    media_type = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    def document(self, report: Report, options: RenderOptions) -> str:
        s = report.summary
        leaks: Counter[Labels] = Counter()
        chars: Counter[Labels] = Counter()
        for f in report.findings:
            labels = (("kind", f.kind), ("format", f.format))
            leaks[labels] += 1
            chars[labels] += f.leaked_chars
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
        lines += _family(
            "thinkfix_assistant_messages",
            "gauge",
            "Assistant messages scanned, by session format.",
            _by("format", {k: v.assistant_messages for k, v in s.by_format.items()}),
        )
        lines += _family(
            "thinkfix_leaking_messages",
            "gauge",
            "Assistant messages with leaked reasoning, by session format.",
            _by("format", {k: v.leaking_messages for k, v in s.by_format.items()}),
        )
        lines += _family(
            "thinkfix_assistant_messages_by_model",
            "gauge",
            "Assistant messages scanned, by model.",
            _by("model", {k: v.assistant_messages for k, v in s.by_model.items()}),
        )
        lines += _family(
            "thinkfix_leaking_messages_by_model",
            "gauge",
            "Assistant messages with leaked reasoning, by model.",
            _by("model", {k: v.leaking_messages for k, v in s.by_model.items()}),
        )
        lines += _family(
            "thinkfix_assistant_messages_by_day",
            "gauge",
            "Assistant messages scanned, by day (UTC, of each message's time) and model.",
            _by_day(s.by_day, lambda c: c.assistant_messages),
        )
        lines += _family(
            "thinkfix_leaking_messages_by_day",
            "gauge",
            "Assistant messages with leaked reasoning, by day (UTC) and model.",
            _by_day(s.by_day, lambda c: c.leaking_messages),
        )
        lines += _family(
            "thinkfix_leaks",
            "counter",
            "Leaks found, by leak kind and session format.",
            leaks.items(),
        )
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
