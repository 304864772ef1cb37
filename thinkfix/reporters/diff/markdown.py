"""GitHub-flavoured Markdown: summary tables, then each message in fenced blocks.

Session text goes only into fenced code blocks (fenced past any backtick run it
holds), so a leaked `<think>` or a stray `|` can never turn into markup.
"""

from __future__ import annotations

import re

from thinkfix.engine.repair.audit import DiffReport, MessageDiff
from thinkfix.reporters.base import RenderOptions, label, plural
from thinkfix.reporters.controls import visible_strings
from thinkfix.reporters.diff.base import (
    DiffFormat,
    DiffRenderer,
    by_path,
    fix_rows,
    headline,
    kinds_cell,
    message_facts,
    message_title,
    verb,
)
from thinkfix.reporters.markdown import md_code, md_text, table

_FENCE_RUN = re.compile(r"^[ \t]*(`{3,})", re.MULTILINE)


def fenced(text: str, info: str = "text") -> list[str]:
    """A fenced code block holding `text` literally (its fence longer than any fence inside)."""
    longest = max((len(m.group(1)) for m in _FENCE_RUN.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, text.replace("\r\n", "\n"), fence]


def _message(m: MessageDiff) -> list[str]:
    out = ["", f"### {md_text(message_title(m))}", ""]
    out += [f"- **{md_text(name)}**: {md_text(value)}" for name, value in message_facts(m)]
    out += ["", "**Before**", "", *fenced(m.before)]
    if m.applied:
        out += ["", "**After**", "", *fenced(m.after)]
        for i, (segment, size) in enumerate(zip(m.extracted, m.sizes, strict=True), 1):
            count = f" {i} of {len(m.extracted)}" if len(m.extracted) > 1 else ""
            summary = f"Extracted reasoning{count} ({plural(size, 'char')})"
            out += [
                "",
                "<details>",
                f"<summary>{md_text(summary)}</summary>",
                "",
                *fenced(segment),
                "",
                "</details>",
            ]
    return out


def _files(report: DiffReport) -> list[str]:
    rows = [
        [
            md_code(f.path),
            md_code(label(f.format)),
            md_text(f.status),
            md_text(kinds_cell(f.by_kind)),
            str(f.messages),
            str(f.refused),
            str(f.removed_chars),
        ]
        for f in report.files
    ]
    return table(
        ["file", "format", "status", "kinds", "messages", "refused", "chars removed"],
        rows,
        numeric_from=4,
    )


def _totals(report: DiffReport) -> list[str]:
    t = report.totals
    rows = [
        ["files", str(t.files)],
        ["files changed", str(t.files_changed)],
        ["messages changed", str(t.messages)],
        ["messages refused", str(t.refused)],
        ["chars removed", str(t.removed_chars)],
        ["reasoning segments", str(t.extracted_segments)],
        ["reasoning chars", str(t.extracted_chars)],
    ]
    rows += [[f"kind {md_code(k)}", str(n)] for k, n in sorted(t.by_kind.items())]
    rows += [[f"placed: {md_code(k)}", str(n)] for k, n in sorted(t.by_placement.items())]
    return table(["", "count"], rows, numeric_from=1)


class MarkdownDiffRenderer(DiffRenderer):
    format = DiffFormat.MARKDOWN
    media_type = "text/markdown; charset=utf-8"
    suffix = ".md"

    def document(self, report: DiffReport, options: RenderOptions) -> str:
        report = visible_strings(report)  # names on one line; text never drives a terminal
        out = ["# thinkfix diff", "", md_text(headline(report)), ""]
        if report.redaction != "none":
            out += [f"_Session text redacted ({md_text(report.redaction)})._", ""]
        out += ["## Totals", "", *_totals(report)]
        if report.files:
            out += ["", "## Files", "", *_files(report)]
        for path, messages in by_path(report).items():
            out += [
                "",
                f"## {md_code(path)}",
                "",
                f"{plural(len(messages), 'message')} {verb(report)}.",
            ]
            for m in messages:
                out += _message(m)
        if report.fixes:
            rows = [
                [md_code(where), md_code(fix), md_code(problem), md_text(what)]
                for where, fix, problem, what in fix_rows(report)
            ]
            out += ["", "## Fixes", "", *table(["location", "fix", "problem", "what"], rows, 4)]
        if report.errors:
            rows = [
                [
                    md_code(e.path + (f":{e.line}" if e.line else "")),
                    md_code(e.kind),
                    md_text(e.message),
                ]
                for e in report.errors
            ]
            out += ["", "## Errors", "", *table(["location", "kind", "message"], rows, 3)]
        if report.manifest:
            out += ["", f"Undo manifest: {md_code(report.manifest)}"]
        return "\n".join(out) + "\n"
