"""What every thinkfix HTML page shares: the stylesheet, escaping, inline SVG bar charts, the shell.

One module, so the scan page and the diff page look alike and hold the same safety line: a strict
Content-Security-Policy (no script, nothing fetched), every value HTML-escaped, charts drawn as
inline SVG that prints and reads offline.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from html import escape

from thinkfix.reporters.base import plural

CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff;
  --panel: #f6f8fa; --border: #d1d9e0; --del: #ffebe9; --del-fg: #82071e; --ins: #dafbe1;
  --ins-fg: #116329; --think: #fff1c2; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117;
  --panel: #151b23; --border: #3d444d; --del: #3c1618; --del-fg: #ffa198; --ins: #12261e;
  --ins-fg: #7ee787; --think: #3a2f0b; --accent: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 64px; font: 14px/1.5 system-ui, -apple-system, "Segoe UI",
  Roboto, Helvetica, Arial, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 24px; margin: 0 0 8px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid
  var(--border); word-break: break-all; }
h3 { font-size: 15px; margin: 0 0 8px; word-break: break-all; }
.headline { font-size: 15px; margin: 0 0 16px; }
.meta { color: var(--muted); margin: 0 0 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { background: var(--panel); border: 1px solid var(--border); border-radius: 6px;
  padding: 8px 14px; min-width: 120px; }
.card b { display: block; font-size: 20px; }
.card span { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid var(--border); padding: 4px 10px; text-align: left;
  vertical-align: top; }
th { background: var(--panel); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.path { min-width: 300px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12px; word-break: break-all; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.status { padding: 1px 8px; border-radius: 10px; font-size: 12px; background: var(--panel);
  border: 1px solid var(--border); white-space: nowrap; }
.status.repaired, .status.would-change { background: var(--ins); color: var(--ins-fg); }
.status.failed, .status.skipped, .status.error { background: var(--del); color: var(--del-fg); }
article { border: 1px solid var(--border); border-radius: 6px; margin: 16px 0; padding: 12px 16px;
  background: var(--bg); }
article.refused { border-style: dashed; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 12px; }
dt { font-weight: 600; color: var(--muted); }
dd { margin: 0; word-break: break-word; }
.kind { font-family: ui-monospace, monospace; font-size: 12px; background: var(--think);
  padding: 0 6px; border-radius: 4px; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
@media (max-width: 900px) { .sides { grid-template-columns: 1fr; } }
.side h4 { margin: 0 0 4px; font-size: 12px; text-transform: uppercase; letter-spacing: .04em;
  color: var(--muted); }
pre { margin: 0; padding: 8px 10px; white-space: pre-wrap; word-break: break-word;
  font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  background: var(--panel); border: 1px solid var(--border); border-radius: 6px;
  max-height: 480px; overflow: auto; }
pre.before { border-left: 3px solid var(--del-fg); }
pre.after { border-left: 3px solid var(--ins-fg); }
.seg-thinking { background: var(--think); }
.seg-delimiter { background: var(--del); color: var(--del-fg); font-weight: 700; }
.seg-duplicate { background: var(--del); text-decoration: line-through; }
.seg-trimmed { background: var(--del); }
.empty { color: var(--muted); font-style: italic; }
details { margin-top: 10px; border: 1px solid var(--border); border-radius: 6px;
  background: var(--panel); }
details > summary { cursor: pointer; padding: 6px 10px; font-weight: 600; }
details[open] > summary { border-bottom: 1px solid var(--border); }
details > pre { border: 0; border-radius: 0 0 6px 6px; background: var(--think); }
.legend span { margin-right: 12px; padding: 0 6px; border-radius: 4px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
""".strip()


def _e(value: object) -> str:
    return escape(str(value), quote=True)


# Added to pages that draw charts, so the diff page's stylesheet stays as it was until it has some.
CHART_CSS = """
.charts { display: flex; flex-wrap: wrap; gap: 16px 32px; margin: 8px 0 16px; }
figure.chart { margin: 0; }
figure.chart figcaption { font-weight: 600; margin: 0 0 4px; }
svg.bars { display: block; font: 12px system-ui, sans-serif; }
svg.bars text { fill: var(--fg); }
svg.bars .bar-all { fill: var(--border); }
svg.bars .bar-hit { fill: var(--del-fg); }
svg.bars .bar-one { fill: var(--accent); }
ul.bar-legend { list-style: none; display: flex; flex-wrap: wrap; gap: 2px 14px;
  margin: 4px 0 0; padding: 0; font-size: 12px; color: var(--muted); }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 5px;
  vertical-align: -1px; border-radius: 2px; -webkit-print-color-adjust: exact;
  print-color-adjust: exact; }
.swatch.bar-hit { background: var(--del-fg); }
.swatch.bar-all { background: var(--border); }
.swatch.bar-one { background: var(--accent); }
@media print { body { padding: 0; } details { break-inside: avoid; }
  svg.bars .bar-all { fill: #d1d9e0; } svg.bars .bar-hit { fill: #82071e; }
  svg.bars .bar-one { fill: #0969da; } .swatch.bar-all { background: #d1d9e0; }
  .swatch.bar-hit { background: #82071e; } .swatch.bar-one { background: #0969da; } }
""".strip()

_BAR_ROW = 20  # px per bar
_LABEL_X = 4  # px before a label
_LABEL_MAX = 230  # px at most for a label; a longer one keeps its end
_LABEL_GAP = 8  # px between the label column and the bars
_BAR_W = 260  # px for the longest bar
_FONT_PX = 12


def e(value: object) -> str:
    """HTML text or attribute value: escaped, quotes included."""
    return escape(str(value), quote=True)


def prose(value: str) -> str:
    """A sentence of ours as HTML: escaped, its `code` spans as <code> (the headline showed
    literal backticks)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", e(value))


def cards(items: Sequence[tuple[str, int]]) -> str:
    """The row of headline numbers at the top of a page, each with its label."""
    return (
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{v}</b><span>{e(k)}</span></div>' for k, v in items)
        + "</div>"
    )


def _em(char: str) -> float:
    """About how wide `char` is drawn, in em, in a UI sans-serif (a little over, mostly)."""
    if unicodedata.east_asian_width(char) in "WF":
        return 1.0
    if char in "mwMW@%":
        return 0.92
    if char in "iljtfrI.,:;'!|()[] ":
        return 0.34
    if char.isupper():
        return 0.72
    return 0.6 if char.isdigit() or not char.isascii() else 0.56


def _width(text: str) -> float:
    return round(sum(_em(c) for c in text) * _FONT_PX, 1)


def _label(text: str) -> tuple[str, float]:
    """The label drawn and its width: all of it, or its end after an ellipsis (a path's file
    name, a model's version), to fit `_LABEL_MAX`."""
    if _width(text) <= _LABEL_MAX:
        return text, _width(text)
    end = text
    while end and _width("\u2026" + end) > _LABEL_MAX:
        end = end[1:]
    return "\u2026" + end, _width("\u2026" + end)


def bar_chart(title: str, rows: Sequence[tuple[str, int, int | None]], unit: str) -> str:
    """A horizontal bar chart as inline SVG: one row per (label, value, of-total or None).

    `unit` is the singular noun counted: `finding`, or with totals `assistant message`.

    With a total, the bar is the total in grey and the value over it in red (leaking of all);
    without, one blue bar; a legend under the chart says which is which. Each bar carries a
    `<title>` with the exact numbers, and the numbers are also written beside it, so the chart
    reads without hovering and on paper. Labels start inside the chart and are drawn at a
    fixed width (`textLength`), so no font can push one past the left edge or into the bars.
    """
    if not rows:
        return ""
    labels = [_label(name) for name, _, _ in rows]
    bars_x = _LABEL_X + max(w for _, w in labels) + _LABEL_GAP
    top = max(max(v, t or 0) for _, v, t in rows) or 1
    width = round(bars_x + _BAR_W + 90)
    height = _BAR_ROW * len(rows) + 4
    parts = [
        (
            f'<figure class="chart"><figcaption>{e(title)}</figcaption>'
            f'<svg class="bars" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{e(title)}">'
        )
    ]
    for i, ((name, value, total), (shown_name, drawn)) in enumerate(zip(rows, labels, strict=True)):
        y = i * _BAR_ROW + 2
        words = (
            f"{name}: {plural(value, unit)}"
            if total is None
            else f"{name}: {value} of {plural(total, unit)}"
        )
        parts.append(
            f"<g><title>{e(words)}</title>"
            f'<text class="label" x="{_LABEL_X}" y="{y + 13}" textLength="{drawn}" '
            f'lengthAdjust="spacingAndGlyphs">{e(shown_name)}</text>'
        )
        if total is not None:
            tw = round(_BAR_W * total / top)
            parts.append(f'<rect class="bar-all" x="{bars_x}" y="{y}" width="{tw}" height="16"/>')
        vw = round(_BAR_W * value / top)
        cls = "bar-hit" if total is not None else "bar-one"
        parts.append(f'<rect class="{cls}" x="{bars_x}" y="{y}" width="{vw}" height="16"/>')
        shown = f"{value}/{total}" if total is not None else str(value)
        end = bars_x + max(vw, round(_BAR_W * (total or 0) / top)) + 6
        parts.append(f'<text x="{end}" y="{y + 13}">{e(shown)}</text></g>')
    parts.append("</svg>")
    series = (
        [("bar-one", f"{unit}s")]
        if all(t is None for _, _, t in rows)
        else [("bar-hit", "leaking"), ("bar-all", f"all {unit}s")]
    )
    legend = "".join(f'<li><span class="swatch {c}"></span>{e(w)}</li>' for c, w in series)
    parts.append(f'<ul class="bar-legend">{legend}</ul></figure>')
    return "".join(parts)


def page(title: str, body: Sequence[str], extra_css: str = "") -> str:
    """The whole document: strict CSP (inline styles only, nothing fetched, no script)."""
    style = CSS + ("\n" + extra_css if extra_css else "")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">\n"
        f"<title>{e(title)}</title>\n"
        f"<style>\n{style}\n</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )
