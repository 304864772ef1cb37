"""One self-contained HTML file for auditors: readable offline, nothing fetched.

Inline CSS only (no scripts, fonts, images or links outside the page), a
per-file summary table, and each changed message with its text before (the
removed pieces marked) and after, and the extracted reasoning in collapsible
`<details>` sections; the fixes `repair --fix` made to a file beside its messages, each with
the text it dropped in a collapsible excerpt. Every piece of session text, path and id is HTML-escaped,
so a leaked `<think>` or a hostile `</pre><script>` shows as text.
"""

from __future__ import annotations

import hashlib

from thinkfix.engine.repair.audit import DiffReport, FixDiff, MessageDiff
from thinkfix.engine.report import SCHEMA_VERSION
from thinkfix.reporters.base import RenderOptions, label, plural
from thinkfix.reporters.controls import visible_strings
from thinkfix.reporters.diff.base import (
    SEGMENT_LABELS,
    DiffFormat,
    DiffRenderer,
    by_path,
    fix_count,
    fixes_by_path,
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
_EXCERPT = 2000  # chars of a fix's dropped text on the page; the manifest keeps them all

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
.cards > table { align-self: flex-start; }
.wide { overflow-x: auto; }
@media (max-width: 700px) { td.path { min-width: 180px; } }
article.fix { border-left: 3px solid var(--accent); }
article.fix > dl:last-child { margin-bottom: 0; }
.fix-name { font-family: ui-monospace, monospace; font-size: 12px; background: var(--ins);
  color: var(--ins-fg); padding: 0 6px; border-radius: 4px; }
details > pre.dropped { background: var(--del); }
.collapse-control { margin: 8px 6px 0 0; font-size: 13px; cursor: pointer; }
.collapse-all:checked ~ details.file > .body { display: none; }
.collapse-all:checked ~ details.file > summary { border-bottom: 0; }
@media print {
  .collapse-control { display: none; }
  .collapse-all:checked ~ details.file > .body { display: block; }
  pre { max-height: none; overflow: visible; }
  article { break-inside: avoid; }
  .seg-thinking, .seg-delimiter, .seg-duplicate, .seg-trimmed, .kind, .status, .cut-key,
  pre.after .cut::before, details > pre, .fix-name, article.fix {
  -webkit-print-color-adjust: exact; print-color-adjust: exact; }
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


def _excerpt(text: str, sized: bool) -> str:
    """A fix's dropped text: its first `_EXCERPT` chars, the rest counted (when the text is
    the true one), not shown: a cut tail can be a record of megabytes."""
    more = len(text) - _EXCERPT
    if more <= 0:
        return _pre(text, "dropped")
    rest = f"\n\u2026 {plural(more, 'more char') if sized else 'more'} (the undo manifest keeps it all)"
    return f'<pre class="dropped">{_e(text[:_EXCERPT])}<span class="empty">{_e(rest)}</span></pre>'


def _fix(f: FixDiff, n: int, sized: bool) -> str:
    """One fix as a card like a message's: where, which fix, the problem, what it did, and
    each text it took out of the file (kept in the undo manifest), folded like reasoning.

    Sizes are shown only when the texts are the true ones (redaction changes lengths)."""
    name = f'<span class="fix-name">{_e(f.fix)}</span>'
    out = [
        f'<article class="fix" id="x-{n}">',
        f"<h3>{_e(f'line {f.line} · ')}{name} {_e(f.problem)}</h3>",
        f"<dl><dt>what</dt><dd>{_e(f.detail)}</dd></dl>",
    ]
    for i, text in enumerate(f.dropped, 1):
        count = f" {i} of {len(f.dropped)}" if len(f.dropped) > 1 else ""
        size = f" ({plural(len(text), 'char')})" if sized else ""
        out.append(
            f"<details open><summary>Dropped text{_e(count + size)} &rarr; kept in the undo "
            f"manifest</summary>{_excerpt(text, sized)}</details>"
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
    if report.fixes:  # a run without --fix keeps the page it always had
        items.insert(3, ("fixes", len(report.fixes)))
    return cards(items)


def _counts(
    title: str, counts: dict[str, int], key: str, unit: str = "messages", cls: str = "kind"
) -> str:
    if not counts:
        return ""
    rows = "".join(
        f'<tr><td><span class="{cls}">{_e(k)}</span></td><td class="num">{n}</td></tr>'
        for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return (
        f"<table><caption hidden>{_e(title)}</caption><thead><tr><th>{_e(key)}</th>"
        f'<th class="num">{_e(unit)}</th></tr></thead><tbody>{rows}</tbody></table>'
    )


def _fix_counts(report: DiffReport) -> str:
    counts: dict[str, int] = {}
    for f in report.fixes:
        counts[f"{f.fix}: {f.problem}"] = counts.get(f"{f.fix}: {f.problem}", 0) + 1
    return _counts("By fix", counts, "fix: problem", "fixes", "fix-name")


def _files(report: DiffReport) -> str:
    fixes = {p: len(fs) for p, fs in fixes_by_path(report).items()}
    with_cards = set(by_path(report)) | set(fixes)
    rows = []
    for f in report.files:
        name = _e(f.path)
        fix_cell = f'<td class="num">{fixes.get(f.path, 0)}</td>' if report.fixes else ""
        if f.path in with_cards:
            name = f'<a href="#{_anchor(f.path)}">{name}</a>'
        rows.append(
            f'<tr><td class="path">{name}</td><td>{_e(label(f.format))}</td>'
            f'<td><span class="status {_e(f.status)}">{_e(f.status)}</span></td>'
            f"<td>{_e(kinds_cell(f.by_kind))}</td>"
            f'<td class="num">{f.messages}</td><td class="num">{f.refused}</td>'
            f'<td class="num">{f.removed_chars}</td>'
            f'<td class="num">{f.records_changed}</td><td class="num">{f.records_inserted}</td>'
            f"{fix_cell}</tr>"
        )
    head = (
        "<tr><th>file</th><th>format</th><th>status</th><th>kinds</th>"
        '<th class="num">messages</th><th class="num">refused</th>'
        '<th class="num">chars removed</th><th class="num">records changed</th>'
        '<th class="num">records added</th>'
        + ('<th class="num">fixes</th>' if report.fixes else "")
        + "</tr>"
    )
    # its own scroll on a narrow screen, so the page itself never scrolls sideways
    table = f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="wide">{table}</div>'


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


def _legend(report: DiffReport) -> str:
    out = []
    if report.messages:
        spans = "".join(
            f'<span class="seg-{_e(k)}">{_e(v)}</span>' for k, v in SEGMENT_LABELS.items()
        )
        cut = '<span class="cut-key">\u2702 N chars</span> where text was removed'
        out.append(f'<p class="legend meta">In <b>Before</b>: {spans} In <b>After</b>: {cut}</p>')
    if report.fixes:
        out.append(
            '<p class="legend meta"><span class="fix-name">fix</span> a problem '
            "<code>--fix</code> repaired, beside the reasoning moves; "
            '<span class="seg-trimmed">dropped text</span> what it took out of the file, '
            "kept in the undo manifest (<code>thinkfix undo</code> puts it back)</p>"
        )
    return "".join(out)


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


Groups = dict[str, tuple[list[MessageDiff], list[FixDiff]]]


def _groups(report: DiffReport) -> Groups:
    """Each file with a card: its messages and its fixes (files with messages first)."""
    messages, fixes = by_path(report), fixes_by_path(report)
    return {p: (messages.get(p, []), fixes.get(p, [])) for p in {**messages, **fixes}}


def _index(groups: Groups, report: DiffReport) -> str:
    def count(ms: list[MessageDiff], fs: list[FixDiff]) -> str:
        if not report.fixes:  # the index it always had: messages only, counted
            return str(len(ms))
        return ", ".join([plural(len(ms), "message")] * bool(ms) + [fix_count(len(fs))] * bool(fs))

    items = "".join(
        f'<li><a href="#{_anchor(p)}">{_e(p)}</a> ({_e(count(ms, fs))})</li>'
        for p, (ms, fs) in groups.items()
    )
    return f'<h2>Index</h2><nav><ol class="index">{items}</ol></nav>'


def _file_counts(messages: list[MessageDiff], fixes: list[FixDiff], report: DiffReport) -> str:
    refused = sum(1 for m in messages if not m.applied)
    words = []
    if messages:
        words.append(f"{plural(len(messages) - refused, 'message')} {verb(report)}")
    if refused:
        words.append(f"{refused} refused")
    if fixes:
        words.append(f"{fix_count(len(fixes))} {'made' if report.written else 'to make'}")
    return ", ".join(words)


def _past_cap(messages: int, fixes: int) -> str:
    """`2 more messages and 1 more fix` (what a file's card leaves to the JSON report)."""
    left = [plural(messages, "more message")] * bool(messages)
    left += [f"{fixes} more fix{'' if fixes == 1 else 'es'}"] * bool(fixes)
    return " and ".join(left)


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
        counts = (
            _counts("By kind", t.by_kind, "kind")
            + _counts(
                "By placement",
                {placement_words(k): n for k, n in t.by_placement.items()},
                "reasoning placed in",
            )
            + _fix_counts(report)
        )
        if counts:
            body.append(f'<div class="cards">{counts}</div>')
        if report.files:
            body += ["<h2>Files</h2>", _files(report)]
        if report.errors:
            body.append(_errors(report))
        groups = _groups(report)
        if report.messages:
            body.insert(4, _charts(report))
        if groups:
            body += [_index(groups, report), _legend(report)]
        cap = DEFAULT_MAX_CARDS if options.max_findings is None else max(options.max_findings, 0)
        if groups:
            body += [
                '<input type="checkbox" id="collapse-all" class="collapse-all collapse-control"/>',
                '<label for="collapse-all" class="collapse-control">Collapse all</label>',
            ]
        n = fixed = 0  # cards shown (messages and fixes share the cap), fix cards shown
        sized = report.redaction == "none"
        for path, (messages, fixes) in groups.items():
            shown = messages[: max(cap - n, 0)]
            body.append(
                f'<details class="file" id="{_anchor(path)}" open><summary>{_e(path)}'
                f'<span class="meta">{_e(_file_counts(messages, fixes, report))}</span>'
                '</summary><div class="body">'
            )
            for m in shown:
                n += 1
                body.append(_message(m, n))
            shown_fixes = fixes[: max(cap - n, 0)]
            for f in shown_fixes:
                n += 1
                fixed += 1
                body.append(_fix(f, fixed, sized))
            left = _past_cap(len(messages) - len(shown), len(fixes) - len(shown_fixes))
            if left:
                body.append(
                    f'<p class="meta">{_e(left)}'
                    " past the page's cap: the JSON report lists them all.</p>"
                )
            body.append("</div></details>")
        hidden = _past_cap(len(report.messages) - (n - fixed), len(report.fixes) - fixed)
        if hidden:
            body.append(
                f'<p class="headline">{_e(hidden)} in the JSON '
                f"report (this page shows the first {cap}; "
                "<code>thinkfix diff --output-format json</code>).</p>"
            )
        if report.manifest:
            body.append(f'<p class="meta">Undo manifest: <code>{_e(report.manifest)}</code></p>')
        body.append(
            f"<footer>thinkfix {_e(report.tool_version)} · schema_version {SCHEMA_VERSION}</footer>"
        )
        return page("thinkfix diff", body, CHART_CSS + "\n" + _DIFF_CSS)
