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


class MarkdownReporter(Reporter):
    """A heading, the verdict, a summary table, counts, and a capped findings table."""

    format = OutputFormat.MARKDOWN
    media_type = "text/markdown"
    suffix = ".md"
    default_max_findings = 100  # a job summary is capped at 1 MiB; the full list is in json/sarif

    def document(self, report: Report, options: RenderOptions) -> str:
        s = report.summary
        verdict = ":x:" if report.errors or report.new_findings else ":white_check_mark:"
        out = [f"## {TOOL_NAME} scan", "", f"{verdict} {md_text(headline(report))}", ""]
        out += table(
            [
                "files",
                "records",
                "assistant messages",
                "leaking messages",
                "share",
                "findings",
                "new",
                "baselined",
                "leaked chars",
                "errors",
            ],
            [
                [
                    str(s.files),
                    str(s.records),
                    str(s.assistant_messages),
                    str(s.leaking_messages),
                    percent(s.leaking_messages, s.assistant_messages),
                    str(s.findings),
                    str(len(report.new_findings)),
                    str(s.baselined),
                    str(s.leaked_chars),
                    str(len(report.errors)),
                ]
            ],
            numeric_from=0,
        )
        if s.by_kind:
            out += ["", "### By kind", ""]
            out += table(
                ["kind", "findings"],
                [[md_code(k), str(n)] for k, n in sorted_by_kind(s)],
                numeric_from=1,
            )
        for title, key, counts in counts_sections(s, by_file=options.statistics):
            if not counts:
                continue
            headings = [key] + (["format"] if key == "file" else [])
            rows = []
            for name, c in counts.items():
                first = md_text(label(name)) if key == "model" else md_code(label(name))
                row = [first] + ([md_code(label(c.format))] if key == "file" else [])
                row += [
                    str(c.assistant_messages),
                    str(c.leaking_messages),
                    percent(c.leaking_messages, c.assistant_messages),
                    str(c.findings),
                ]
                rows.append(row)
            out += ["", f"### {title}", ""]
            out += table(
                headings + ["assistant messages", "leaking", "share", "findings"],
                rows,
                numeric_from=len(headings),
            )
        if report.findings:
            shown, hidden = capped(listing_order(report.findings), self.finding_limit(options))
            out += ["", "### Findings", ""]
            out += table(
                ["location", "JSON path", "kind", "tag", "model", "status", "leaked chars"],
                [
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
                ],
                numeric_from=6,
            )
            if hidden:
                out += [
                    "",
                    (
                        f"_... and {plural(hidden, 'more finding')}"
                        " (the json and sarif reports list them all)_"
                    ),
                ]
        if report.errors:
            out += ["", "### Input errors", ""]
            out += table(
                ["location", "kind", "message"],
                [
                    [md_code(location(e.path, e.line)), md_code(e.kind), md_text(e.message)]
                    for e in report.errors
                ],
                numeric_from=3,
            )
        if report.stale_baseline:
            out += ["", "### Stale baseline entries", ""]
            out += table(
                ["fingerprint", "path"],
                [[md_code(x.fingerprint), md_code(x.path)] for x in report.stale_baseline],
                numeric_from=2,
            )
        return "\n".join(out) + "\n"
