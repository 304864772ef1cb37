"""One self-contained HTML file for auditors: readable offline, nothing fetched.

Inline CSS only (no scripts, fonts, images or links outside the page), a
per-file summary table, and each changed message with its text before (the
removed pieces marked) and after, and the extracted reasoning in collapsible
`<details>` sections. Every piece of session text, path and id is HTML-escaped,
so a leaked `<think>` or a hostile `</pre><script>` shows as text.
"""

from __future__ import annotations

import hashlib

from thinkfix.engine.repair.audit import DiffReport, MessageDiff
from thinkfix.engine.report import SCHEMA_VERSION
from thinkfix.reporters.base import RenderOptions, label, plural
from thinkfix.reporters.controls import visible_strings
from thinkfix.reporters.diff.base import (
    SEGMENT_LABELS,
    DiffFormat,
    DiffRenderer,
    by_path,
    headline,
    kinds_cell,
    message_facts,
    message_title,
    placement_words,
    verb,
)
from thinkfix.reporters.htmlpage import CHART_CSS, bar_chart, cards, page, prose
from thinkfix.reporters.htmlpage import e as _e

DEFAULT_MAX_CARDS = 500  # message cards on one page; past it, counts and the JSON report
_CHART_ROWS = 25

# Cards open, so the page and its printout show every before/after; "Collapse all" folds them
# to their file lines with CSS alone (a checkbox before the cards: the page runs no script),
# and the print stylesheet shows every card whole, however the screen left them.
_DIFF_CSS = """
details.file { background: var(--bg); margin: 12px 0; }
details.file > summary { font-size: 16px; word-break: break-all; }
details.file > summary .meta { font-weight: 400; margin-left: 8px; }
details.file > .body { padding: 0 12px 8px; }
ol.index { columns: 2 360px; font-size: 13px; word-break: break-all; }
pre.after .cut::before { content: attr(data-cut); }
pre.after .cut::before, .cut-key { background: var(--del); color: var(--del-fg);
  font-size: 11px; padding: 0 3px; margin: 0 1px; border-radius: 3px; }
.collapse-control { margin: 8px 6px 0 0; font-size: 13px; cursor: pointer; }
.collapse-all:checked ~ details.file > .body { display: none; }
.collapse-all:checked ~ details.file > summary { border-bottom: 0; }
@media print {
  .collapse-control { display: none; }
  .collapse-all:checked ~ details.file > .body { display: block; }
  pre { max-height: none; overflow: visible; }
  article { break-inside: avoid; }
  .seg-thinking, .seg-delimiter, .seg-duplicate, .seg-trimmed, .kind, .status, .cut-key,
  pre.after .cut::before, details > pre { -webkit-print-color-adjust: exact;
  print-color-adjust: exact; }
  a { color: inherit; }
}
""".strip()


def _anchor(path: str) -> str:
    return "f-" + hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _pre(text: str, cls: str) -> str:
    if not text:
        return f'<pre class="{cls}"><span class="empty">(empty)</span></pre>'
    return f'<pre class="{cls}">{_e(text)}</pre>'


def _before(m: MessageDiff) -> str:
    if not m.segments:
        return _pre(m.before, "before")
    parts = []
    for seg_label, text in m.segments:
        if seg_label == "visible":
            parts.append(_e(text))
        else:
            title = SEGMENT_LABELS.get(seg_label, seg_label)
            parts.append(f'<span class="seg-{_e(seg_label)}" title="{_e(title)}">{_e(text)}</span>')
    return f'<pre class="before">{"".join(parts)}</pre>'


def _cut(removed: list[tuple[str, str]], sized: bool) -> str:
    """A mark where text left; its words live in attributes, so copying AFTER copies the text.

    Sizes are shown only when the segments are the true texts (redaction changes lengths)."""
    what = ", ".join(dict.fromkeys(SEGMENT_LABELS.get(k, k) for k, _ in removed))
    size = plural(sum(len(t) for _, t in removed), "char") if sized else ""
    mark, words = (f"\u2702 {size}", f"{what} ({size})") if sized else ("\u2702", what)
    return f'<span class="cut" data-cut="{_e(mark)}" title="removed here: {_e(words)}"></span>'


def _after(m: MessageDiff) -> str:
    """AFTER with a mark at each place text was cut, when the segments rebuild it exactly."""
    if not m.after or "".join(t for k, t in m.segments if k == "visible") != m.after:
        return _pre(m.after, "after")
    sized = sum(len(t) for k, t in m.segments if k != "visible") == m.removed_chars
    parts: list[str] = []
    removed: list[tuple[str, str]] = []
    for seg_label, text in m.segments:
        if seg_label != "visible":
            removed.append((seg_label, text))
            continue
        if removed:
            parts.append(_cut(removed, sized))
            removed = []
        parts.append(_e(text))
    if removed:
        parts.append(_cut(removed, sized))
    return f'<pre class="after">{"".join(parts)}</pre>'


def _message(m: MessageDiff, n: int) -> str:
    facts = []
    for name, value in message_facts(m):
        if name == "kinds":
            value_html = " ".join(f'<span class="kind">{_e(k)}</span>' for k in m.kinds) or "-"
        else:
            value_html = _e(value)
        facts.append(f"<dt>{_e(name)}</dt><dd>{value_html}</dd>")
    cls = "" if m.applied else ' class="refused"'
    out = [
        f'<article id="m-{n}"{cls}>',
        f"<h3>{_e(message_title(m))}</h3>",
        f"<dl>{''.join(facts)}</dl>",
        '<div class="sides">',
        f'<div class="side"><h4>Before</h4>{_before(m)}</div>',
    ]
    if m.applied:
        out.append(f'<div class="side"><h4>After</h4>{_after(m)}</div>')
    out.append("</div>")
    for i, (segment, size) in enumerate(zip(m.extracted, m.sizes, strict=True), 1):
        count = f" {i} of {len(m.extracted)}" if len(m.extracted) > 1 else ""
        out.append(
            f"<details open><summary>Extracted reasoning{count} "
            f"({_e(plural(size, 'char'))}) &rarr; "
            f"{_e(placement_words(m.placement))}</summary>{_pre(segment, 'reasoning')}"
            "</details>"
        )
    out.append("</article>")
    return "\n".join(out)


def _cards(report: DiffReport) -> str:
    t = report.totals
    items = [
        ("files", t.files),
        ("files changed", t.files_changed),
        ("messages changed", t.messages),
        ("chars removed", t.removed_chars),
        ("reasoning segments", t.extracted_segments),
        ("refused", t.refused),
        ("errors", len(report.errors)),
    ]
    return cards(items)


def _counts(title: str, counts: dict[str, int], key: str) -> str:
    if not counts:
        return ""
    rows = "".join(
        f'<tr><td><span class="kind">{_e(k)}</span></td><td class="num">{n}</td></tr>'
        for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return (
        f"<table><caption hidden>{_e(title)}</caption><thead><tr><th>{_e(key)}</th>"
        f'<th class="num">messages</th></tr></thead><tbody>{rows}</tbody></table>'
    )


def _files(report: DiffReport) -> str:
    with_messages = set(by_path(report))
    rows = []
    for f in report.files:
        name = _e(f.path)
        if f.path in with_messages:
            name = f'<a href="#{_anchor(f.path)}">{name}</a>'
        rows.append(
            f'<tr><td class="path">{name}</td><td>{_e(label(f.format))}</td>'
            f'<td><span class="status {_e(f.status)}">{_e(f.status)}</span></td>'
            f"<td>{_e(kinds_cell(f.by_kind))}</td>"
            f'<td class="num">{f.messages}</td><td class="num">{f.refused}</td>'
            f'<td class="num">{f.removed_chars}</td>'
            f'<td class="num">{f.records_changed}</td><td class="num">{f.records_inserted}</td>'
            "</tr>"
        )
    head = (
        "<tr><th>file</th><th>format</th><th>status</th><th>kinds</th>"
        '<th class="num">messages</th><th class="num">refused</th>'
        '<th class="num">chars removed</th><th class="num">records changed</th>'
        '<th class="num">records added</th></tr>'
    )
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _errors(report: DiffReport) -> str:
    rows = "".join(
        f'<tr><td class="path">{_e(e.path)}{_e(f":{e.line}" if e.line else "")}</td>'
        f"<td>{_e(e.kind)}</td><td>{_e(e.message)}</td></tr>"
        for e in report.errors
    )
    return (
        "<h2>Errors</h2><table><thead><tr><th>location</th><th>kind</th><th>message</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def _legend() -> str:
    spans = "".join(f'<span class="seg-{_e(k)}">{_e(v)}</span>' for k, v in SEGMENT_LABELS.items())
    cut = '<span class="cut-key">\u2702 N chars</span> where text was removed'
    return f'<p class="legend meta">In <b>Before</b>: {spans} In <b>After</b>: {cut}</p>'


def _tally(report: DiffReport, key: str) -> dict[str, int]:
    """Leaking messages (changed or refused) per model or per kind."""
    counts: dict[str, int] = {}
    for m in report.messages:
        for k in m.kinds if key == "kind" else (label(m.model),):
            counts[k] = counts.get(k, 0) + 1
    return counts


def _charts(report: DiffReport) -> str:
    charts = []
    for key in ("model", "kind"):
        rows = [
            (k, n, None)
            for k, n in sorted(_tally(report, key).items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        title = f"Leaking messages by {key}"
        if len(rows) > _CHART_ROWS:
            title += f" (top {_CHART_ROWS} of {len(rows)})"
        charts.append(bar_chart(title, rows[:_CHART_ROWS], "message"))
    return f'<h2>Summary</h2><div class="charts">{"".join(charts)}</div>'


def _index(groups: dict[str, list[MessageDiff]]) -> str:
    items = "".join(
        f'<li><a href="#{_anchor(p)}">{_e(p)}</a> ({len(ms)})</li>' for p, ms in groups.items()
    )
    return f'<h2>Index</h2><nav><ol class="index">{items}</ol></nav>'


def _file_counts(messages: list[MessageDiff], report: DiffReport) -> str:
    refused = sum(1 for m in messages if not m.applied)
    words = f"{plural(len(messages) - refused, 'message')} {verb(report)}"
    return words + (f", {refused} refused" if refused else "")


class HtmlDiffRenderer(DiffRenderer):
    format = DiffFormat.HTML
    media_type = "text/html; charset=utf-8"
    suffix = ".html"

    def document(self, report: DiffReport, options: RenderOptions) -> str:
        report = visible_strings(report)  # HTML allows no control character; <pre> keeps lines
        t = report.totals
        meta = [f"mode {report.mode}", "changes written" if report.written else "nothing written"]
        if report.redaction != "none":
            meta.append(f"session text redacted ({report.redaction})")
        body = [
            "<h1>thinkfix diff</h1>",
            f'<p class="headline">{prose(headline(report))}</p>',
            f'<p class="meta">{_e(" · ".join(meta))}</p>',
            _cards(report),
        ]
        counts = _counts("By kind", t.by_kind, "kind") + _counts(
            "By placement",
            {placement_words(k): n for k, n in t.by_placement.items()},
            "reasoning placed in",
        )
        if counts:
            body.append(f'<div class="cards">{counts}</div>')
        if report.files:
            body += ["<h2>Files</h2>", _files(report)]
        if report.errors:
            body.append(_errors(report))
        groups = by_path(report)
        if report.messages:
            body.insert(4, _charts(report))
            body += [_index(groups), _legend()]
        cap = DEFAULT_MAX_CARDS if options.max_findings is None else max(options.max_findings, 0)
        if groups:
            body += [
                '<input type="checkbox" id="collapse-all" class="collapse-all collapse-control"/>',
                '<label for="collapse-all" class="collapse-control">Collapse all</label>',
            ]
        n = 0
        for path, messages in groups.items():
            shown = messages[: max(cap - n, 0)]
            body.append(
                f'<details class="file" id="{_anchor(path)}" open><summary>{_e(path)}'
                f'<span class="meta">{_e(_file_counts(messages, report))}</span>'
                '</summary><div class="body">'
            )
            for m in shown:
                n += 1
                body.append(_message(m, n))
            if len(shown) < len(messages):
                body.append(
                    f'<p class="meta">{_e(plural(len(messages) - len(shown), "more message"))}'
                    " past the page's cap: the JSON report lists them all.</p>"
                )
            body.append("</div></details>")
        hidden = len(report.messages) - n
        if hidden:
            body.append(
                f'<p class="headline">{_e(plural(hidden, "more message"))} in the JSON '
                f"report (this page shows the first {cap}; "
                "<code>thinkfix diff --output-format json</code>).</p>"
            )
        if report.manifest:
            body.append(f'<p class="meta">Undo manifest: <code>{_e(report.manifest)}</code></p>')
        body.append(
            f"<footer>thinkfix {_e(report.tool_version)} · schema_version {SCHEMA_VERSION}</footer>"
        )
        return page("thinkfix diff", body, CHART_CSS + "\n" + _DIFF_CSS)
