"""The default, human output: findings grouped by file, errors, a summary panel, the verdict.

The report is laid out once as plain data (`layout`); `plainwriter` writes it when it needs
nothing but columns (no colour, every value fits: a pipe, a CI log, a pre-commit hook), so
those runs never import rich, and rich (`richwriter`) draws everything else. Both give the
same bytes wherever the plain writer answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from thinkfix.engine.report import LeakFinding, Report
from thinkfix.reporters import plainwriter
from thinkfix.reporters.base import (
    OutputFormat,
    RenderOptions,
    Reporter,
    capped,
    counts_sections,
    headline,
    health_message,
    label,
    listing_order,
    location,
    percent,
    plural,
    shown_findings,
    shown_health,
    sorted_by_kind,
)
from thinkfix.reporters.controls import visible_strings
from thinkfix.reporters.layout import (
    DEFAULT_WIDTH,
    Block,
    Column,
    Document,
    Grid,
    Justify,
    Panel,
    Paragraph,
    Table,
)

# line, JSON path, kind, tag, model, chars. Only the model may wrap at spaces, so a narrow
# terminal squeezes it before it breaks a JSON path or a tag in two; fold, never an
# ellipsis: a report written to a file keeps every value whole.
#: A finding's columns in a file or pipe: every character kept (long values fold).
_FINDING_COLUMNS = (
    Column("right", no_wrap=True, overflow="fold"),
    Column("left", no_wrap=True, overflow="fold"),
    Column("left", no_wrap=True, overflow="fold"),
    Column("left", no_wrap=True, overflow="fold"),
    Column("left", overflow="fold"),
    Column("right", no_wrap=True, overflow="fold"),
)
_FINDING_HEADER = ("line", "field", "kind", "tag", "model", "leaked")


def _by_file(findings: Sequence[LeakFinding], style: str, width: int | None) -> list[Block]:
    # Grouped by file, like eslint's "stylish": a session path is often longer than a terminal
    # is wide, so it gets a line of its own and the columns keep their width for the findings.
    by_path: dict[str, list[LeakFinding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    out: list[Block] = []
    for path, group in by_path.items():
        rows = [
            [
                str(f.line),
                f.json_path,
                f.kind,
                f.tag,
                label(f.model),
                plural(f.leaked_chars, "char"),
            ]
            for f in group
        ]
        if width is not None:
            _fit(rows, width - 2)
        grid = Grid(_FINDING_COLUMNS)
        grid.add_row(*((name, "dim") for name in _FINDING_HEADER), style=style)
        for row in rows:
            grid.add_row(
                (row[0], ""),
                (row[1], ""),
                (row[2], style or "bold red"),
                (row[3], ""),
                (row[4], ""),  # the one word for a missing model, as in every format
                (row[5], ""),
                style=style,
            )
        out += [Paragraph(""), Paragraph(path, style or "bold cyan"), grid]
    return out


def _fit(rows: list[list[str]], width: int) -> None:
    """Cut the field and the model (columns 1 and 4) with an ellipsis so each finding is one
    line of a terminal `width` wide; the line, kind, tag and size always show whole. Done here,
    not by the table, so every writer (and every rich version) draws the same line (at 80
    columns the model folded into `clau`/`de-s`/`onne`, one column of characters a line)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_FINDING_HEADER)]
    room = width - 2 * (len(widths) - 1) - sum(w for i, w in enumerate(widths) if i not in (1, 4))
    field, model = widths[1], widths[4]
    if field + model <= room:
        return
    model = min(model, max(len(_FINDING_HEADER[4]), room * 2 // 5))
    field = max(len(_FINDING_HEADER[1]), room - model)
    for row in rows:
        for i, most in ((1, field), (4, model)):
            if len(row[i]) > most:
                row[i] = row[i][: most - 1] + "…"


def _findings(report: Report, options: RenderOptions, limit: int | None) -> list[Block]:
    shown, hidden = capped(listing_order(shown_findings(report, options)), limit)
    new = [f for f in shown if not f.baselined]
    old = [f for f in shown if f.baselined]
    out: list[Block] = []
    if new:
        out += [Paragraph("Leaked reasoning", "bold"), *_by_file(new, "", options.width)]
    if old:
        # Apart from the new ones, so what fails the run is never mixed with what does not.
        if out:
            out.append(Paragraph(""))
        out += [Paragraph("Covered by the baseline", "bold"), *_by_file(old, "dim", options.width)]
    if hidden:
        out += [Paragraph(""), Paragraph(f"... and {plural(hidden, 'more finding')}", "dim")]
    unlisted = len(report.findings) - len(shown_findings(report, options))
    if unlisted:
        out += [
            Paragraph(""),
            Paragraph(
                f"{plural(unlisted, 'finding')} covered by the baseline not listed "
                "(--show-baselined lists them)",
                "dim",
            ),
        ]
    return out


def _errors(report: Report) -> list[Block]:
    grid = Grid(
        (
            Column(no_wrap=True, overflow="fold", style="cyan"),
            Column(no_wrap=True, style="bold red"),
            Column(overflow="fold"),
        )
    )
    for e in report.errors:
        grid.add_row((location(e.path, e.line), ""), (e.kind, ""), (e.message, ""))
    return [Paragraph("Input errors", "bold"), Paragraph(""), grid]


def _health(report: Report, options: RenderOptions) -> list[Block]:
    """`scan --check`'s problems grouped by file, one row each: line, problem, what it is."""
    out: list[Block] = [Paragraph("Session health", "bold")]
    shown = shown_health(report, options)
    for path in sorted({h.path for h in shown}):
        grid = Grid(
            (
                Column("right", no_wrap=True),
                Column(no_wrap=True, style="bold yellow"),
                Column(overflow="fold"),
            )
        )
        for h in (h for h in shown if h.path == path):
            what = health_message(h).removeprefix(f"{h.problem.value}: ")
            grid.add_row(
                (str(h.line), ""), (h.problem.value, "dim" if h.baselined else ""), (what, "")
            )
        out += [Paragraph(""), Paragraph(path, "cyan"), grid]
    return out


def _skipped(report: Report) -> list[Block]:
    grid = Grid((Column(no_wrap=True, overflow="fold", style="cyan"), Column(overflow="fold")))
    for s in report.skipped:
        grid.add_row((s.path, ""), (s.reason, ""))
    return [Paragraph("Skipped files (not scanned)", "bold"), Paragraph(""), grid]


def _stale(report: Report) -> list[Block]:
    grid = Grid((Column(no_wrap=True, overflow="fold"), Column(overflow="fold")))
    for entry in report.stale_baseline:
        grid.add_row((entry.fingerprint, ""), (entry.path, ""))
    title = "Stale baseline entries (they match no finding)"
    return [Paragraph(title, "bold"), Paragraph(""), grid]


def _statistics(report: Report) -> list[Table]:
    s = report.summary
    out: list[Table] = []
    if s.by_kind:
        kinds = Table("By kind", (("kind", "left"), ("findings", "right")))
        for kind, n in sorted_by_kind(s):
            kinds.add_row(kind, str(n))
        out.append(kinds)
    for title, key, counts in counts_sections(s, by_file=True):
        if not counts:
            continue
        columns: list[tuple[str, Justify]] = [(key, "left")]
        if key == "file":
            columns.append(("format", "left"))
        columns += [
            ("messages", "right"),
            ("leaking", "right"),
            ("share", "right"),
            ("findings", "right"),
        ]
        table = Table(title, columns)
        for name, c in counts.items():
            cells = [label(name)]
            if key == "file":
                cells.append(label(c.format))
            cells += [
                str(c.assistant_messages),
                str(c.leaking_messages),
                percent(c.leaking_messages, c.assistant_messages),
                str(c.findings),
            ]
            table.add_row(*cells)
        out.append(table)
    return out


def _summary(report: Report) -> Panel:
    s = report.summary
    grid = Grid((Column(style="bold"), Column("right")), indent=0)
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
        grid.add_row((name, ""), (value, ""))
    return Panel(grid, "thinkfix scan")


def _verdict(report: Report) -> Paragraph:
    # Last, so it is the line a CI log or a terminal leaves in view.
    if report.errors:
        style = "bold red"
    elif report.new_findings:
        style = "bold yellow"
    else:
        style = "bold green"
    return Paragraph(headline(report), style)


class TextReporter(Reporter):
    """Tables for a terminal or a log; colour only when the options ask for it."""

    format = OutputFormat.TEXT

    def layout(self, report: Report, options: RenderOptions) -> Document:
        """What the text shows, in order: one part per section, the verdict last."""
        parts: Document = []
        if report.findings:
            parts.append(_findings(report, options, self.finding_limit(options)))
        if shown_health(report, options):
            parts.append(_health(report, options))
        if report.errors:
            parts.append(_errors(report))
        if report.skipped:
            parts.append(_skipped(report))
        if report.stale_baseline:
            parts.append(_stale(report))
        if options.statistics:
            parts += [[table] for table in _statistics(report)]
        parts.append(
            [_summary(report), _verdict(report)] if options.summary else [_verdict(report)]
        )
        return parts

    def document(self, report: Report, options: RenderOptions) -> str:
        if not options.statistics:
            # Per-file counts are shown only with --statistics: without them, a scan of
            # 100k clean files must not copy 100k entries just to print a summary.
            report = replace(report, summary=replace(report.summary, by_file={}))
        report = visible_strings(report)  # session text never drives the terminal
        document = self.layout(report, options)
        if not options.color:
            try:
                return plainwriter.draw(document, options.width or DEFAULT_WIDTH)
            except plainwriter.NotPlain:
                pass
        from thinkfix.reporters import richwriter

        text = richwriter.draw(document, options)
        if not options.color:
            # rich pads cells to the column width; trailing blanks only make diffs noisy.
            text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
        return text
