"""The scan page reads at a glance (#27 item 10): chart labels are never cut at the left edge,
the red and grey bars have a legend, and the findings table shows what leaked, redacted.

No browser here (Chromium is not installed), so the page is checked by parsing it: the SVG
geometry guarantees each label inside its column whatever font draws it (`textLength`
fixes the drawn width), which a screenshot of one font could not show anyway.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.engine.conftest import claude_line
from thinkfix.cli import main
from thinkfix.engine.report import MessageCounts, Report
from thinkfix.reporters.base import DEFAULT_OPTIONS, OutputFormat
from thinkfix.reporters.htmlpage import bar_chart
from thinkfix.reporters.registry import REPORTERS

from .cases import full_report

SVG = "{http://www.w3.org/2000/svg}"
LONG = [
    "anthropic/claude-sonnet-4-5-20250929-thinking-extended-context",
    "W" * 40,
    "\u6a21\u578b\u540d\u79f0" * 8,  # wide characters
    "m",
]


def _render(report: Report) -> str:
    return REPORTERS[OutputFormat.HTML].render(report, DEFAULT_OPTIONS)


def _svgs(page: str) -> list[ET.Element]:
    found = re.findall(r"<svg class=\"bars\".*?</svg>", page, re.DOTALL)
    assert found
    return [ET.fromstring(s.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1)) for s in found]


def test_every_chart_label_is_drawn_inside_its_column() -> None:
    report = full_report()
    models = {name: MessageCounts(9, i + 1, i + 1) for i, name in enumerate(LONG)}
    page = _render(replace(report, summary=replace(report.summary, by_model=models)))
    labels = 0
    for svg in _svgs(page):
        width = float(svg.attrib["width"])
        for row in svg.iter(f"{SVG}g"):
            label = row.find(f"{SVG}text[@class='label']")
            assert label is not None
            bars = [float(r.attrib["x"]) for r in row.iter(f"{SVG}rect")]
            x, drawn = float(label.attrib["x"]), float(label.attrib["textLength"])
            # start-anchored at x >= 0, its drawn width fixed: it ends before the bars start
            assert label.attrib.get("text-anchor", "start") == "start"
            assert label.attrib["lengthAdjust"] == "spacingAndGlyphs"
            assert 0 <= x and x + drawn <= min(bars) - 2, ET.tostring(row)
            number = row.findall(f"{SVG}text")[-1]
            assert float(number.attrib["x"]) < width
            labels += 1
    assert labels >= len(LONG)


def test_a_long_label_keeps_its_end_and_the_full_name_in_the_tooltip() -> None:
    chart = bar_chart("t", [(LONG[0], 3, 9)], "assistant message")
    (svg,) = _svgs(chart)
    label = svg.find(f".//{SVG}text[@class='label']")
    tip = svg.find(f".//{SVG}title")
    assert label is not None and tip is not None
    assert label.text and label.text.startswith("\u2026") and LONG[0].endswith(label.text[1:])
    assert tip.text == f"{LONG[0]}: 3 of 9 assistant messages"


def test_short_labels_are_drawn_at_their_own_width() -> None:
    (svg,) = _svgs(bar_chart("t", [("m", 1, 2), ("qwen3-32b", 2, 2)], "assistant message"))
    drawn = [float(t.attrib["textLength"]) for t in svg.iter(f"{SVG}text") if t.get("class")]
    assert 0 < drawn[0] < drawn[1] < 100  # never stretched to the column


class _Figures(HTMLParser):
    """Each figure's caption and the legend entries (swatch class, words) below it."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict[str, list[str]]] = []
        self._in: str | None = None
        self._swatch = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = dict(attrs).get("class") or ""
        if tag == "figure":
            self.figures.append({"caption": [], "legend": []})
        elif tag == "figcaption":
            self._in = "caption"
        elif "swatch" in cls.split():
            self._swatch = cls
            self._in = "legend"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("figcaption", "li"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "caption":
            self.figures[-1]["caption"].append(data)
        elif self._in == "legend" and data.strip():
            self.figures[-1]["legend"].append(f"{self._swatch}: {data.strip()}")


def test_each_chart_has_a_legend_for_its_bars() -> None:
    parser = _Figures()
    parser.feed(_render(full_report()))
    legends = {"".join(f["caption"]): f["legend"] for f in parser.figures}
    assert legends["Leaking messages by model"] == [
        "swatch bar-hit: leaking",
        "swatch bar-all: all assistant messages",
    ]
    assert legends["Findings by kind"] == ["swatch bar-one: findings"]
    css = re.search(r"<style>(.*)</style>", _render(full_report()), re.DOTALL)
    assert css is not None
    for cls, colour in (("bar-hit", "--del-fg"), ("bar-all", "--border"), ("bar-one", "--accent")):
        # the swatch is the bar's colour, and prints as it does
        assert re.search(rf"\.swatch\.{cls} \{{ background: var\({colour}\); \}}", css[1])
    assert "print-color-adjust: exact" in css[1]


class _Table(HTMLParser):
    """The findings table's header and cells."""

    def __init__(self) -> None:
        super().__init__()
        self.section = ""
        self.head: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h2":
            self._h2, self.section = True, ""
        elif self.section == "Findings" and tag in ("th", "td"):
            self._cell = []
        elif self.section == "Findings" and tag == "tr":
            self.rows.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._h2 = False
        elif tag in ("th", "td") and self._cell is not None:
            (self.head if tag == "th" else self.rows[-1]).append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._h2:
            self.section += data
        elif self._cell is not None:
            self._cell.append(data)


def _findings(page: str) -> tuple[list[str], list[list[str]]]:
    table = _Table()
    table.feed(page)
    return table.head, [r for r in table.rows if r]


def test_the_findings_table_shows_an_excerpt_of_what_leaked() -> None:
    report = full_report()
    head, rows = _findings(_render(report))
    assert "excerpt" in head
    excerpts = [r[head.index("excerpt")] for r in rows]
    assert "First, plan the answer." in excerpts
    # one line, control characters shown, markup as text (the planted <script> is a cell's text)
    assert any("<script>" in x for x in excerpts)
    assert all("\n" not in x and "\x07" not in x for x in excerpts)


def test_a_long_excerpt_is_cut_with_an_ellipsis() -> None:
    report = full_report()
    long = report.findings[0]._replace(snippet="x" * 1000)
    head, rows = _findings(_render(replace(report, findings=(long,))))
    excerpt = rows[0][head.index("excerpt")]
    assert excerpt.endswith("\u2026") and len(excerpt) <= 161


SECRET = "sk-proj-AbCdEf0123456789XyZ0123"


@pytest.mark.parametrize(
    ("flag", "shown", "hidden"),
    [
        ([], "[REDACTED:api-key]", SECRET),
        (["--redact", "all"], "[redacted:", "my key"),
    ],
)
def test_the_excerpt_is_redacted_as_the_scan_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: list[str], shown: str, hidden: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.jsonl").write_bytes(
        claude_line(f"<think>my key {SECRET} works</think>Done.", uuid="a")
    )
    result = CliRunner().invoke(
        main, ["scan", "s.jsonl", "--isolated", "--output-format", "html", *flag]
    )
    assert result.exit_code == 1, result.output
    head, rows = _findings(result.stdout)
    (excerpt,) = [r[head.index("excerpt")] for r in rows]
    assert shown in excerpt and hidden not in result.stdout
