"""The terminal view: a summary table, then each changed message before and after."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from thinkfix.engine.repair.audit import DiffReport, FileDiff, MessageDiff
from thinkfix.engine.repair.model import FileStatus
from thinkfix.reporters.base import RenderOptions, label, plural
from thinkfix.reporters.console import report_console, report_table
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
)

# How each removed piece of the old text is shown in colour.
_SEGMENT_STYLES = {
    "visible": "",
    "thinking": "red",
    "delimiter": "bold red",
    "duplicate": "magenta",
    "trimmed": "dim",
}


def _block(title: str, body: Text, style: str) -> list[RenderableType]:
    return [Text(title, style=style), Padding(body, (0, 0, 0, 4))]


def _before(m: MessageDiff, color: bool) -> Text:
    if not color or not m.segments:
        return Text(m.before)
    out = Text()
    for label_, text in m.segments:
        out.append(text, style=_SEGMENT_STYLES.get(label_, "red"))
    return out


def _message(m: MessageDiff, color: bool) -> RenderableType:
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column(overflow="fold")
    for name, value in message_facts(m):
        facts.add_row(Text(name), Text(value))
    parts: list[RenderableType] = [
        Text(message_title(m), style="bold"),
        Padding(facts, (0, 0, 0, 2)),
    ]
    parts += _block("  - before", _before(m, color), "red")
    if m.applied:
        parts += _block("  + after", Text(m.after), "green")
        for i, (segment, size) in enumerate(zip(m.extracted, m.sizes, strict=True), 1):
            title = "  reasoning" + (f" {i}/{len(m.extracted)}" if len(m.extracted) > 1 else "")
            parts += _block(f"{title} ({plural(size, 'char')})", Text(segment), "cyan")
    return Group(*parts)


def _files(report: DiffReport) -> Table:
    table = report_table(
        "Files",
        ("file", "left"),
        ("format", "left"),
        ("status", "left"),
        ("messages", "right"),
        ("refused", "right"),
        ("chars removed", "right"),
        ("kinds", "left"),
    )
    for f in listed(report):
        table.add_row(
            Text(f.path),
            Text(label(f.format)),
            Text(f.status),
            str(f.messages),
            str(f.refused),
            str(f.removed_chars),
            Text(kinds_cell(f.by_kind)),
        )
    return table


def listed(report: DiffReport) -> Iterator[FileDiff]:
    """The files the text view's table lists: those with something to show. A clean file
    (or one copied as it is) is only counted: the table is what a reader scans for changes."""
    return (f for f in report.files if f.messages or f.refused or f.status not in _UNLISTED)


_UNLISTED = frozenset({FileStatus.CLEAN.value, FileStatus.COPIED.value})


def _totals(report: DiffReport) -> Table:
    t = report.totals
    table = report_table("Totals", ("", "left"), ("count", "right"))
    for name, value in (
        ("files", t.files),
        ("files changed", t.files_changed),
        ("messages changed", t.messages),
        ("messages refused", t.refused),
        ("chars removed", t.removed_chars),
        ("reasoning segments", t.extracted_segments),
        ("reasoning chars", t.extracted_chars),
    ):
        table.add_row(Text(name), str(value))
    for kind, n in sorted(t.by_kind.items()):
        table.add_row(Text(f"kind {kind}"), str(n))
    for kind, n in sorted(t.by_placement.items()):
        table.add_row(Text(f"placed: {kind}"), str(n))
    return table


class TextDiffRenderer(DiffRenderer):
    """Readable in a terminal or a log; colour marks what left the text when asked for."""

    format = DiffFormat.TEXT

    def document(self, report: DiffReport, options: RenderOptions) -> str:
        report = visible_strings(report)  # session text never drives the terminal
        console, buffer = report_console(options)
        for path, messages in by_path(report).items():
            console.print(Text(path, style="bold cyan"))
            for m in messages:
                console.print(Padding(_message(m, options.color), (0, 0, 1, 2)))
        if report.fixes:
            fixes = Table.grid(padding=(0, 2))
            for _ in range(4):
                fixes.add_column(overflow="fold")
            for row in fix_rows(report):
                fixes.add_row(*(Text(cell) for cell in row))
            console.print(Text("Fixes", style="bold yellow"))
            console.print(Padding(fixes, (0, 0, 1, 2)))
        if report.errors:
            errors = Table.grid(padding=(0, 2))
            errors.add_column(style="cyan", overflow="fold")
            errors.add_column(overflow="fold")
            for e in report.errors:
                errors.add_row(
                    Text(e.path + (f":{e.line}" if e.line else "")), Text(f"{e.kind}: {e.message}")
                )
            console.print(Text("Errors", style="bold red"))
            console.print(Padding(errors, (0, 0, 1, 2)))
        if any(True for _ in listed(report)):
            console.print(_files(report))
        unlisted = len(report.files) - sum(1 for _ in listed(report))
        if unlisted:
            # rich lays a table out whole (~7 KB a row): 100,000 clean rows took 700 MB.
            console.print(
                Text(
                    f"{plural(unlisted, 'file')} with nothing to repair not listed "
                    "(the json view lists every file).",
                    style="dim",
                )
            )
        if report.files:
            console.print()
        console.print(_totals(report))
        console.print()
        if report.redaction != "none":
            console.print(Text(f"Session text redacted ({report.redaction}).", style="dim"))
        if report.manifest:
            console.print(Text(f"Undo manifest: {report.manifest}", style="dim"))
        style = "bold red" if report.errors else ("bold yellow" if report.applied else "bold green")
        console.print(Text(headline(report), style=style))
        text = buffer.getvalue()
        if not options.color:
            text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
        return text
