"""The default, human output: rich tables of findings and errors, and a summary panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rich import box
from rich.console import Group, JustifyMethod, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from thinkfix.engine.report import LeakFinding, Report
from thinkfix.reporters.base import (
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
    shown_findings,
    sorted_by_kind,
)
from thinkfix.reporters.console import report_console, report_table
from thinkfix.reporters.controls import visible_strings

# line, JSON path, kind, tag, model, chars. Only the model may wrap at spaces, so a narrow
# terminal squeezes it before it breaks a JSON path or a tag in two.
_FINDING_COLUMNS: tuple[tuple[JustifyMethod, bool], ...] = (
    ("right", False),
    ("left", False),
    ("left", False),
    ("left", False),
    ("left", True),
    ("right", False),
)


def _by_file(findings: Sequence[LeakFinding], style: str) -> list[RenderableType]:
    # Grouped by file, like eslint's "stylish": a session path is often longer than a terminal
    # is wide, so it gets a line of its own and the columns keep their width for the findings.
    by_path: dict[str, list[LeakFinding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    out: list[RenderableType] = []
    for path, group in by_path.items():
        grid = Table.grid(padding=(0, 2))
        for justify, wrap in _FINDING_COLUMNS:
            # fold, never an ellipsis: a report written to a file keeps every value whole.
            grid.add_column(justify=justify, no_wrap=not wrap, overflow="fold")
        for f in group:
            # Text() keeps data literal: no rich markup or emoji codes from file names or tags.
            grid.add_row(
                Text(f"line {f.line}"),
                Text(f.json_path),
                Text(f.kind, style=style or "bold red"),
                Text(f.tag),
                Text(label(f.model)),  # the one word for a missing model, as in every format
                Text(plural(f.leaked_chars, "char")),
                style=style,
            )
        out += [Text(""), Text(path, style=style or "bold cyan"), Padding(grid, (0, 0, 0, 2))]
    return out


def _findings(report: Report, options: RenderOptions, limit: int | None) -> RenderableType:
    shown, hidden = capped(listing_order(shown_findings(report, options)), limit)
    new = [f for f in shown if not f.baselined]
    old = [f for f in shown if f.baselined]
    out: list[RenderableType] = []
    if new:
        out += [Text("Leaked reasoning", style="bold"), *_by_file(new, "")]
    if old:
        # Apart from the new ones, so what fails the run is never mixed with what does not.
        if out:
            out.append(Text(""))
        out += [Text("Covered by the baseline", style="bold"), *_by_file(old, "dim")]
    if hidden:
        out += [Text(""), Text(f"... and {plural(hidden, 'more finding')}", style="dim")]
    unlisted = len(report.findings) - len(shown_findings(report, options))
    if unlisted:
        out += [
            Text(""),
            Text(
                f"{plural(unlisted, 'finding')} covered by the baseline not listed "
                "(--show-baselined lists them)",
                style="dim",
            ),
        ]
    return Group(*out)


def _errors(report: Report) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, overflow="fold", style="cyan")
    grid.add_column(no_wrap=True, style="bold red")
    grid.add_column(overflow="fold")
    for e in report.errors:
        grid.add_row(Text(location(e.path, e.line)), Text(e.kind), Text(e.message))
    return Group(Text("Input errors", style="bold"), Text(""), Padding(grid, (0, 0, 0, 2)))


def _skipped(report: Report) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, overflow="fold", style="cyan")
    grid.add_column(overflow="fold")
    for s in report.skipped:
        grid.add_row(Text(s.path), Text(s.reason))
    title = Text("Skipped files (not scanned)", style="bold")
    return Group(title, Text(""), Padding(grid, (0, 0, 0, 2)))


def _stale(report: Report) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, overflow="fold")
    grid.add_column(overflow="fold")
    for entry in report.stale_baseline:
        grid.add_row(Text(entry.fingerprint), Text(entry.path))
    title = Text("Stale baseline entries (they match no finding)", style="bold")
    return Group(title, Text(""), Padding(grid, (0, 0, 0, 2)))


def _statistics(report: Report) -> list[RenderableType]:
    s = report.summary
    out: list[RenderableType] = []
    if s.by_kind:
        kinds = report_table("By kind", ("kind", "left"), ("findings", "right"))
        for kind, n in sorted_by_kind(s):
            kinds.add_row(Text(kind), str(n))
        out.append(kinds)
    for title, key, counts in counts_sections(s, by_file=True):
        if not counts:
            continue
        columns: list[tuple[str, JustifyMethod]] = [(key, "left")]
        if key == "file":
            columns.append(("format", "left"))
        columns += [
            ("messages", "right"),
            ("leaking", "right"),
            ("share", "right"),
            ("findings", "right"),
        ]
        table = report_table(title, *columns)
        for name, c in counts.items():
            cells = [Text(label(name))]
            if key == "file":
                cells.append(Text(label(c.format)))
            cells += [
                Text(str(c.assistant_messages)),
                Text(str(c.leaking_messages)),
                Text(percent(c.leaking_messages, c.assistant_messages)),
                Text(str(c.findings)),
            ]
            table.add_row(*cells)
        out.append(table)
    return out


def _summary(report: Report) -> Panel:
    s = report.summary
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(justify="right")
    rows = [
        ("Files", str(s.files)),
        ("Records", str(s.records)),
        ("Assistant messages", str(s.assistant_messages)),
        (
            "Leaking messages",
            f"{s.leaking_messages} ({percent(s.leaking_messages, s.assistant_messages)})",
        ),
        ("Findings", str(s.findings)),
        ("  new", str(len(report.new_findings))),
        ("  baselined", str(s.baselined)),
        ("Leaked chars", str(s.leaked_chars)),
        ("Input errors", str(len(report.errors))),
    ]
    if report.skipped:
        rows.append(("Skipped files", str(len(report.skipped))))
    if report.stale_baseline:
        rows.append(("Stale baseline entries", str(len(report.stale_baseline))))
    for name, value in rows:
        grid.add_row(name, value)
    return Panel(grid, title="thinkfix scan", title_align="left", box=box.ROUNDED, expand=False)


def _verdict(report: Report) -> Text:
    # Last, so it is the line a CI log or a terminal leaves in view.
    if report.errors:
        style = "bold red"
    elif report.new_findings:
        style = "bold yellow"
    else:
        style = "bold green"
    return Text(headline(report), style=style)


class TextReporter(Reporter):
    """Tables for a terminal or a log; colour only when the options ask for it."""

    format = OutputFormat.TEXT

    def document(self, report: Report, options: RenderOptions) -> str:
        if not options.statistics:
            # Per-file counts are shown only with --statistics: without them, a scan of
            # 100k clean files must not copy 100k entries just to print a summary.
            report = replace(report, summary=replace(report.summary, by_file={}))
        report = visible_strings(report)  # session text never drives the terminal
        console, buffer = report_console(options)
        parts: list[RenderableType] = []
        if report.findings:
            parts.append(_findings(report, options, self.finding_limit(options)))
        if report.errors:
            parts.append(_errors(report))
        if report.skipped:
            parts.append(_skipped(report))
        if report.stale_baseline:
            parts.append(_stale(report))
        if options.statistics:
            parts += _statistics(report)
        parts.append(_summary(report))
        for i, part in enumerate(parts):
            if i:
                console.print()
            console.print(part)
        console.print(_verdict(report))
        text = buffer.getvalue()
        if not options.color:
            # rich pads cells to the column width; trailing blanks only make diffs noisy.
            text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
        return text
