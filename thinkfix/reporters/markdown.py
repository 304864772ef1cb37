"""GitHub-flavoured Markdown sized for a CI job summary (`$GITHUB_STEP_SUMMARY`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from thinkfix.engine.report import Report
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    capped,
    counts_sections,
    headline,
    label,
    listing_order,
    location,
    percent,
    plural,
    sorted_by_kind,
)
from thinkfix.reporters.controls import visible_strings

# Backslash-escaping any ASCII punctuation is valid CommonMark; these are the ones that could
# start emphasis, links, HTML (a leaked `<think>` would vanish as a tag), or end a table cell.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
_BACKTICKS = re.compile(r"`+")


def _one_line(value: str) -> str:
    return " ".join(value.split("\n")).replace("\r", " ")


def md_text(value: str) -> str:
    """Plain text for a table cell: literal, on one line."""
    return _SPECIAL.sub(r"\\\1", _one_line(value))


def md_code(value: str) -> str:
    """A code span for a table cell: literal, on one line, fenced past any backticks inside.

    GFM splits table cells on `|` even inside code spans, so pipes are escaped there too.
    """
    value = _one_line(value)
    if not value:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value.replace('|', chr(92) + '|')}{pad}{fence}"


def table(headings: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int) -> list[str]:
    """A GFM table; columns from `numeric_from` on are right-aligned numbers."""
    align = ["---" if i < numeric_from else "---:" for i in range(len(headings))]
    out = ["| " + " | ".join(headings) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _summary(report: Report) -> list[str]:
    s = report.summary
    leaking = f"{s.leaking_messages} ({percent(s.leaking_messages, s.assistant_messages)})"
    rows = [
        ("files", str(s.files)),
        ("records", str(s.records)),
        ("assistant messages", str(s.assistant_messages)),
        ("leaking messages", leaking),
        ("findings", str(s.findings)),
        ("new", str(len(report.new_findings))),
        ("baselined", str(s.baselined)),
        ("leaked chars", str(s.leaked_chars)),
        ("input errors", str(len(report.errors))),
    ]
    if report.skipped:
        rows.append(("skipped files", str(len(report.skipped))))
    if report.stale_baseline:
        rows.append(("stale baseline entries", str(len(report.stale_baseline))))
    return table(["", "total"], [list(row) for row in rows], numeric_from=1)


def _counts(report: Report, statistics: bool) -> list[str]:
    s = report.summary
    out: list[str] = []
    if s.by_kind:
        rows = [[md_code(k), str(n)] for k, n in sorted_by_kind(s)]
        out += ["", "### By kind", "", *table(["kind", "findings"], rows, numeric_from=1)]
    for title, key, counts in counts_sections(s, by_file=statistics):
        if not counts:
            continue
        headings = [key] + (["format"] if key == "file" else [])
        rows = []
        for name, c in counts.items():
            # Models are free text; formats and paths are identifiers, shown as code.
            first = md_text(label(name)) if key == "model" else md_code(label(name))
            rows.append(
                [first]
                + ([md_code(label(c.format))] if key == "file" else [])
                + [
                    str(c.assistant_messages),
                    str(c.leaking_messages),
                    percent(c.leaking_messages, c.assistant_messages),
                    str(c.findings),
                ]
            )
        headings += ["assistant messages", "leaking", "share", "findings"]
        out += ["", f"### {title}", "", *table(headings, rows, numeric_from=len(headings) - 4)]
    return out


def _findings(report: Report, limit: int | None) -> list[str]:
    shown, hidden = capped(listing_order(report.findings), limit)
    rows = [
        [
            md_code(location(f.path, f.line)),
            md_code(f.json_path),
            md_code(f.kind),
            md_code(f.tag),
            md_text(label(f.model)),
            "baselined" if f.baselined else "**new**",
            str(f.leaked_chars),
        ]
        for f in shown
    ]
    headings = ["location", "JSON path", "kind", "tag", "model", "status", "leaked chars"]
    out = ["", "### Findings", "", *table(headings, rows, numeric_from=6)]
    if hidden:
        more = plural(hidden, "more finding")
        out += ["", f"_... and {more} (the json and sarif reports list them all)_"]
    return out


def _health(report: Report, limit: int | None) -> list[str]:
    """`scan --check`'s problems, capped like the findings."""
    found = report.health.findings if report.health is not None else ()
    shown, hidden = capped(sorted(found, key=lambda h: h.baselined), limit)
    rows = [
        [
            md_code(location(h.path, h.line)),
            md_code(h.problem.value),
            md_code(h.json_path),
            "baselined" if h.baselined else "**new**",
            md_text(h.message),
        ]
        for h in shown
    ]
    headings = ["location", "problem", "JSON path", "status", "what"]
    out = ["", "### Session health", "", *table(headings, rows, numeric_from=5)]
    if hidden:
        out += ["", f"_... and {plural(hidden, 'more problem')} (the json report lists them all)_"]
    return out


def _errors(report: Report) -> list[str]:
    rows = [
        [md_code(location(e.path, e.line)), md_code(e.kind), md_text(e.message)]
        for e in report.errors
    ]
    return ["", "### Input errors", "", *table(["location", "kind", "message"], rows, 3)]


def _skipped(report: Report) -> list[str]:
    rows = [[md_code(s.path), md_text(s.reason)] for s in report.skipped]
    return ["", "### Skipped files", "", *table(["path", "reason"], rows, 2)]


def _stale(report: Report) -> list[str]:
    rows = [[md_code(x.fingerprint), md_code(x.path)] for x in report.stale_baseline]
    return ["", "### Stale baseline entries", "", *table(["fingerprint", "path"], rows, 2)]


class MarkdownReporter(Reporter):
    """A heading, the verdict, a summary table, counts, and a capped findings table."""

    format = OutputFormat.MARKDOWN
    media_type = "text/markdown; charset=utf-8"
    suffix = ".md"
    default_max_findings = 100  # a job summary is capped at 1 MiB; the full list is in json/sarif

    def document(self, report: Report, options: RenderOptions) -> str:
        report = visible_strings(report, one_line=True)  # table rows; read raw in terminals too
        failing = report.errors or report.new_findings or report.new_health
        verdict = ":x:" if failing else ":white_check_mark:"
        out = [f"## {TOOL_NAME} scan", "", f"{verdict} {md_text(headline(report))}", ""]
        out += _summary(report)
        out += _counts(report, options.statistics)
        if report.findings:
            out += _findings(report, self.finding_limit(options))
        if report.health is not None and report.health.findings:
            out += _health(report, self.finding_limit(options))
        if report.errors:
            out += _errors(report)
        if report.skipped:
            out += _skipped(report)
        if report.stale_baseline:
            out += _stale(report)
        return "\n".join(out) + "\n"
