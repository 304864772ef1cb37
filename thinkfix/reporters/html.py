"""`scan --output-format html`: one self-contained page a team can hand to an auditor.

The scan's telemetry only (no diff): the verdict, totals, counts by model, kind, file and day as
inline SVG bar charts with the exact numbers in tables beside them, then findings (capped),
input errors and skipped files. Same page shell as the diff report (`htmlpage`): strict CSP, no
script, nothing fetched, every path, model and message escaped.
"""

from __future__ import annotations

from collections.abc import Mapping

from thinkfix.engine.report import MessageCounts, Report
from thinkfix.engine.report.checks import Check
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    capped,
    headline,
    health_message,
    label,
    listing_order,
    location,
    percent,
    plural,
    sorted_by_kind,
)
from thinkfix.reporters.controls import visible_strings
from thinkfix.reporters.htmlpage import CHART_CSS, bar_chart, cards, e, page, prose

_CHART_ROWS = 25  # bars per chart; the table below each lists every row
_CHART_DAYS = 62  # about two months of days in the trend chart, the latest
_EXCERPT = 160  # characters of a finding's snippet in the table
#: The excerpt column wraps within a readable width; a wide table scrolls on its own on a
#: narrow screen (the findings' and the files' tables were 1,487 px wide at 640: the page
#: scrolled sideways).
_EXCERPT_CSS = """
.wide { overflow-x: auto; }
td.excerpt { min-width: 240px; max-width: 480px; }
td.excerpt code { white-space: pre-wrap; word-break: break-word; font-size: 12px; }
""".strip()
#: With `--check` only, so a page without it stays byte for byte what it was.
_HEALTH_CSS = """
td .kind { white-space: nowrap; }
@media (max-width: 700px) { .wide td.path { min-width: 180px; } }
""".strip()


def _cards(report: Report) -> str:
    s = report.summary
    items = [
        ("files", s.files),
        ("assistant messages", s.assistant_messages),
        ("leaking messages", s.leaking_messages),
        ("findings", s.findings),
        ("new", len(report.new_findings)),
        ("baselined", s.baselined),
        ("leaked chars", s.leaked_chars),
        ("input errors", len(report.errors)),
        ("skipped files", len(report.skipped)),
    ]
    if report.health is not None:  # `scan --check`: its problems beside the leaks
        items[6:6] = [
            ("health problems", len(report.health.findings)),
            ("new health", len(report.new_health)),
        ]
    return cards(items)


def _leaking_chart(title: str, counts: Mapping[str, MessageCounts]) -> str:
    """Leaking of all assistant messages per key, most leaking first."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1].leaking_messages, kv[0]))
    rows = [(label(k), c.leaking_messages, c.assistant_messages) for k, c in ordered]
    if len(rows) > _CHART_ROWS:
        title += f" (top {_CHART_ROWS} of {len(rows)}; the table lists all)"
    return bar_chart(title, rows[:_CHART_ROWS], "assistant message")


def _counts_table(key: str, counts: Mapping[str, MessageCounts], *, path: bool = False) -> str:
    head = (
        f"<tr><th>{e(key)}</th>"
        + ("<th>format</th>" if path else "")
        + '<th class="num">assistant messages</th><th class="num">leaking</th>'
        '<th class="num">share</th><th class="num">findings</th></tr>'
    )
    rows = []
    for name, c in counts.items():
        cls = ' class="path"' if path else ""
        rows.append(
            f"<tr><td{cls}>{e(label(name))}</td>"
            + (f"<td>{e(label(c.format))}</td>" if path else "")
            + f'<td class="num">{c.assistant_messages}</td>'
            f'<td class="num">{c.leaking_messages}</td>'
            f'<td class="num">{e(percent(c.leaking_messages, c.assistant_messages))}</td>'
            f'<td class="num">{c.findings}</td></tr>'
        )
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _days(report: Report) -> list[str]:
    days = report.summary.by_day
    if not days:
        return []
    totals = {
        day: MessageCounts(
            sum(c.assistant_messages for c in models.values()),
            sum(c.leaking_messages for c in models.values()),
            sum(c.findings for c in models.values()),
        )
        for day, models in sorted(days.items())
    }
    rows = [(day, c.leaking_messages, c.assistant_messages) for day, c in totals.items()]
    title = "Leaking messages by day (UTC)"
    if len(rows) > _CHART_DAYS:
        title += f" (last {_CHART_DAYS} of {len(rows)} days; the table lists all)"
    chart = bar_chart(title, rows[-_CHART_DAYS:], "assistant message")
    return ["<h2>By day</h2>", f'<div class="charts">{chart}</div>', _counts_table("day", totals)]


def _breakdowns(report: Report) -> list[str]:
    s = report.summary
    out: list[str] = []
    charts = [_leaking_chart("Leaking messages by model", s.by_model)]
    if s.by_kind:
        charts.append(
            bar_chart("Findings by kind", [(k, n, None) for k, n in sorted_by_kind(s)], "finding")
        )
    charts.append(_leaking_chart("Leaking messages by format", s.by_format))
    charts = [c for c in charts if c]
    if charts:
        out += ["<h2>Summary</h2>", f'<div class="charts">{"".join(charts)}</div>']
    if s.by_model:
        out += ["<h2>By model</h2>", _counts_table("model", dict(sorted(s.by_model.items())))]
    if s.by_kind:
        rows = "".join(
            f'<tr><td><span class="kind">{e(k)}</span></td><td class="num">{n}</td></tr>'
            for k, n in sorted_by_kind(s)
        )
        out += [
            "<h2>By kind</h2>",
            (
                "<table><thead><tr><th>kind</th>"
                f'<th class="num">findings</th></tr></thead><tbody>{rows}</tbody></table>'
            ),
        ]
    if s.by_format:
        out += ["<h2>By format</h2>", _counts_table("format", dict(sorted(s.by_format.items())))]
    out += _days(report)
    if s.by_file:
        leaking = {k: c for k, c in s.by_file.items() if c.leaking_messages}
        chart = _leaking_chart("Files with the most leaking messages", leaking)
        out += [
            "<h2>By file</h2>",
            f'<div class="charts">{chart}</div>' if chart else "",
            # long paths: its own scroll on a narrow screen, never the page's
            f'<div class="wide">{_counts_table("file", dict(sorted(s.by_file.items())), path=True)}</div>',
        ]
    return [x for x in out if x]


def _excerpt(snippet: str) -> str:
    """The start of a finding's snippet (redacted by the scan as `--redact` says), one line."""
    return snippet if len(snippet) <= _EXCERPT else snippet[: _EXCERPT - 1] + "\u2026"


def _findings(report: Report, limit: int | None) -> list[str]:
    shown, hidden = capped(listing_order(report.findings), limit)
    rows = "".join(
        f'<tr><td class="path">{e(location(f.path, f.line))}</td><td><code>{e(f.json_path)}'
        f'</code></td><td><span class="kind">{e(f.kind)}</span></td><td>{e(f.tag)}</td>'
        f"<td>{e(label(f.model))}</td>"
        f'<td><span class="status {"baselined" if f.baselined else "error"}">'
        f"{'baselined' if f.baselined else 'new'}</span></td>"
        f'<td class="num">{f.leaked_chars}</td>'
        f'<td class="excerpt"><code>{e(_excerpt(f.snippet))}</code></td></tr>'
        for f in shown
    )
    out = [
        "<h2>Findings</h2>",
        (
            '<p class="meta">Each excerpt is the start of the leaked text as the scan\'s '
            "<code>--redact</code> setting shows it (likely secrets masked by default; "
            "<code>--redact all</code> hides the text).</p>"
        ),
        (
            '<div class="wide"><table><thead><tr><th>location</th><th>JSON path</th>'
            "<th>kind</th><th>tag</th><th>model</th><th>status</th>"
            '<th class="num">leaked chars</th><th>excerpt</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>"
        ),
    ]
    if hidden:
        out.append(
            f'<p class="meta">&hellip; and {e(plural(hidden, "more finding"))} '
            "(the json and sarif reports list them all)</p>"
        )
    return out


def _errors(report: Report) -> list[str]:
    rows = "".join(
        f'<tr><td class="path">{e(location(x.path, x.line))}</td><td>{e(x.kind)}</td>'
        f"<td>{e(x.message)}</td></tr>"
        for x in report.errors
    )
    return [
        "<h2>Input errors</h2>",
        (
            '<div class="wide"><table><thead><tr><th>location</th><th>kind</th>'
            f"<th>message</th></tr></thead><tbody>{rows}</tbody></table></div>"
        ),
    ]


def _health(report: Report, limit: int | None) -> list[str]:
    """`scan --check`'s problems (#28): counted by check and problem, then listed (capped,
    each with its check and whether the baseline covers it), then with `size` the bytes by
    format and record type (the largest first)."""
    health = report.health
    if health is None:
        return []
    out = ["<h2>Session health</h2>"]
    if health.findings:
        counts: dict[tuple[str, str], list[int]] = {}
        for x in health.findings:
            row = counts.setdefault((x.check.value, x.problem.value), [0, 0])
            row[0] += 1
            row[1] += not x.baselined
        order = {c.value: i for i, c in enumerate(Check)}
        by_problem = "".join(
            f'<tr><td>{e(check)}</td><td><span class="kind">{e(problem)}</span></td>'
            f'<td class="num">{n}</td><td class="num">{new}</td></tr>'
            for (check, problem), (n, new) in sorted(
                counts.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])
            )
        )
        out.append(
            "<table><caption hidden>By check and problem</caption><thead><tr><th>check</th>"
            '<th>problem</th><th class="num">problems</th><th class="num">new</th></tr>'
            f"</thead><tbody>{by_problem}</tbody></table>"
        )
        shown, hidden = capped(health.findings, limit)
        rows = "".join(
            f'<tr><td class="path">{e(location(x.path, x.line))}</td><td>{e(x.check.value)}</td>'
            f'<td><span class="kind">{e(x.problem.value)}</span></td>'
            f'<td><span class="status {"baselined" if x.baselined else "error"}">'
            f"{'baselined' if x.baselined else 'new'}</span></td>"
            f"<td>{e(health_message(x).removeprefix(x.problem.value + ': '))}</td></tr>"
            for x in shown
        )
        out.append(  # its own scroll on a narrow screen: the page never scrolls sideways for it
            '<div class="wide"><table><thead><tr><th>location</th><th>check</th><th>problem</th>'
            f"<th>status</th><th>what</th></tr></thead><tbody>{rows}</tbody></table></div>"
        )
        if hidden:
            out.append(
                f'<p class="meta">&hellip; and {e(plural(hidden, "more problem"))} '
                "(the json and sarif reports list them all)</p>"
            )
    out += _bytes_by_type(report)
    return out if len(out) > 1 else []


def _bytes_by_type(report: Report) -> list[str]:
    """`size`'s figure: records and bytes by format and record type, the most bytes first."""
    types = report.health.bytes_by_type if report.health is not None else {}
    ordered = sorted(
        ((fmt, kind, t) for fmt, kinds in types.items() for kind, t in kinds.items()),
        key=lambda r: (-r[2].bytes, r[0], r[1]),
    )
    if not ordered:
        return []
    rows = "".join(
        f"<tr><td>{e(label(fmt))}</td><td><code>{e(kind)}</code></td>"
        f'<td class="num">{t.records:,}</td><td class="num">{t.bytes:,}</td></tr>'
        for fmt, kind, t in ordered[:_CHART_ROWS]
    )
    more = len(ordered) - _CHART_ROWS
    note = (
        f'<p class="meta">&hellip; and {e(plural(more, "more type"))} (the json report\'s '
        "<code>health.bytes_by_type</code> lists them all)</p>"
        if more > 0
        else ""
    )
    return [
        "<h3>Bytes by record type</h3>",
        (
            "<table><thead><tr><th>format</th><th>type</th>"
            '<th class="num">records</th><th class="num">bytes</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>{note}"
        ),
    ]


def _skipped(report: Report) -> list[str]:
    rows = "".join(
        f'<tr><td class="path">{e(x.path)}</td><td>{e(x.reason)}</td></tr>' for x in report.skipped
    )
    return [
        "<h2>Skipped files</h2>",
        (
            "<table><thead><tr><th>path</th><th>reason</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>"
        ),
    ]


class HtmlReporter(Reporter):
    """The verdict, totals, charts and count tables, capped findings, errors, skipped files."""

    format = OutputFormat.HTML
    media_type = "text/html; charset=utf-8"
    suffix = ".html"
    default_max_findings = 500  # a page stays usable; the json report lists them all

    def document(self, report: Report, options: RenderOptions) -> str:
        report = visible_strings(report, one_line=True)  # HTML allows no control characters
        failing = bool(report.errors or report.new_findings or report.new_health)
        body = [
            f"<h1>{e(TOOL_NAME)} scan</h1>",
            (
                f'<p class="headline"><span class="status {"error" if failing else "repaired"}">'
                f"{'fail' if failing else 'pass'}</span> {prose(headline(report))}</p>"
            ),
            _cards(report),
        ]
        body += _breakdowns(report)
        if report.findings:
            body += _findings(report, self.finding_limit(options))
        body += _health(report, self.finding_limit(options))
        if report.errors:
            body += _errors(report)
        if report.skipped:
            body += _skipped(report)
        if report.stale_baseline:
            rows = "".join(
                f"<tr><td><code>{e(x.fingerprint)}</code></td>"
                f'<td class="path">{e(x.path)}</td></tr>'
                for x in report.stale_baseline
            )
            body += [
                "<h2>Stale baseline entries</h2>",
                (
                    "<table><thead><tr><th>fingerprint</th>"
                    f"<th>path</th></tr></thead><tbody>{rows}</tbody></table>"
                ),
            ]
        body.append(f"<footer>{e(TOOL_NAME)} {e(report.tool_version)}</footer>")
        css = CHART_CSS + "\n" + _EXCERPT_CSS
        return page(f"{TOOL_NAME} scan", body, css + ("\n" + _HEALTH_CSS if report.health else ""))
