"""Structural checks per renderer: what each format must guarantee beyond its golden bytes."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.formats.support import fixture_totals
from thinkfix.engine.repair import audit
from thinkfix.engine.repair.audit import DiffReport
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.diff import RENDERERS, get_renderer
from thinkfix.reporters.diff.base import DiffFormat

from .cases import HOSTILE, clean_report, fenced_message, full_report, leaky_message

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def test_diffreport_every_format_has_a_renderer() -> None:
    assert set(RENDERERS) == set(DiffFormat)
    for fmt, renderer in RENDERERS.items():
        assert renderer.format is fmt and get_renderer(fmt.value) is renderer
    with pytest.raises(ValueError, match="choose from text, markdown, html, json"):
        get_renderer("pdf")


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("r.html", DiffFormat.HTML),
        ("r.HTM", DiffFormat.HTML),
        ("r.md", DiffFormat.MARKDOWN),
        ("r.json", DiffFormat.JSON),
        ("r.txt", DiffFormat.TEXT),
        ("report", DiffFormat.TEXT),
    ],
)
def test_diffreport_format_for_path(name: str, fmt: DiffFormat) -> None:
    assert DiffFormat.for_path(name) is fmt


class _Outline(HTMLParser):
    """Tags, attributes and text of a document, to check structure and escaping."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        if tag not in ("meta", "br", "link", "img"):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _outline(html: str) -> _Outline:
    parser = _Outline()
    parser.feed(html)
    parser.close()
    assert parser.stack == [], parser.stack  # every element closed, properly nested
    return parser


def test_html_is_one_self_contained_file() -> None:
    html = RENDERERS[DiffFormat.HTML].render(full_report())
    outline = _outline(html)
    assert outline.tags.count("style") == 1
    for forbidden in ("script", "link", "img", "iframe", "object", "embed", "base"):
        assert forbidden not in outline.tags
    for name, value in outline.attrs:
        assert name not in ("src", "srcset", "action")
        if name == "href":
            assert value is not None and value.startswith("#")  # in-page anchors only
    assert "http://" not in html and "https://" not in html
    assert "@import" not in html and "url(" not in html


def test_html_escapes_every_piece_of_session_text() -> None:
    html = RENDERERS[DiffFormat.HTML].render(full_report())
    outline = _outline(html)
    assert "script" not in outline.tags  # the hostile text stayed text
    text = "".join(outline.text)
    assert HOSTILE in text and "<think>" in text and "sessions/a b/<odd>.jsonl" in text
    assert "&lt;/pre&gt;&lt;script&gt;" in html


def test_html_has_summary_table_and_collapsible_reasoning() -> None:
    report = full_report()
    html = RENDERERS[DiffFormat.HTML].render(report)
    outline = _outline(html)
    # One per extracted reasoning segment, and one per file section (files fold away too).
    files = len({m.path for m in report.messages})
    assert outline.tags.count("details") == sum(len(m.extracted) for m in report.applied) + files
    # open, so a printout shows them (#27 item 10); "Collapse all" folds them on screen
    assert [k for k, _ in outline.attrs].count("open") == outline.tags.count("details")
    text = "".join(outline.text)
    for f in report.files:
        assert f.path in text
    # Anchors from the table lead to the per-file sections.
    hrefs = {v for k, v in outline.attrs if k == "href"}
    ids = {f"#{v}" for k, v in outline.attrs if k == "id"}
    assert hrefs and hrefs <= ids


def test_markdown_keeps_session_text_inside_fences() -> None:
    md = RENDERERS[DiffFormat.MARKDOWN].render(full_report())
    fence = None
    outside = []
    for line in md.splitlines():
        m = re.match(r"^(`{3,})", line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            outside.append(line)
    assert fence is None
    body = "\n".join(outside)
    assert "<think>" not in body and "<script>" not in body
    assert "````text" in md  # a text holding ``` gets a longer fence


def test_json_carries_schema_version_and_every_fact() -> None:
    report = full_report()
    doc = json.loads(RENDERERS[DiffFormat.JSON].render(report))
    assert doc["schema_version"] == 1 and doc["tool"]["name"] == "thinkfix"
    assert doc["totals"]["messages"] == 2 and doc["totals"]["refused"] == 1
    leaky = next(m for m in doc["messages"] if m["line"] == 5)
    assert leaky["kinds"] == ["block"] and leaky["placement"]["kind"] == "block"
    assert leaky["before"].startswith("<think>") and leaky["after"].startswith("Done.")
    assert "".join(s["text"] for s in leaky["segments"]) == leaky["before"]
    assert leaky["extracted"] == [report.messages[2].extracted[0]]
    assert [f["path"] for f in doc["files"]] == [f.path for f in report.files]
    assert doc["errors"][0]["kind"] == "bad_line"


def test_text_has_no_ansi_unless_colour_is_asked_for() -> None:
    renderer = RENDERERS[DiffFormat.TEXT]
    plain = renderer.render(full_report())
    assert "\x1b[" not in plain and "- before" in plain and "+ after" in plain
    coloured = renderer.render(full_report(), RenderOptions(color=True))
    assert "\x1b[" in coloured


@pytest.mark.parametrize("fmt", list(DiffFormat))
def test_diffreport_clean_report_says_nothing_to_repair(fmt: DiffFormat) -> None:
    out = RENDERERS[fmt].render(clean_report())
    if fmt is DiffFormat.JSON:
        assert json.loads(out)["messages"] == []
    else:
        assert "Nothing to repair in 1 file." in out


@pytest.mark.parametrize("fmt", list(DiffFormat))
def test_diffreport_of_fixtures_is_the_same_whatever_the_jobs(
    tmp_path: Path, fmt: DiffFormat
) -> None:
    reports = [
        audit.build(repair_paths([str(FIXTURES)], RepairOptions(mode=WriteMode.DRY_RUN, jobs=jobs)))
        for jobs in (1, 3)
    ]
    one, many = (RENDERERS[fmt].render_bytes(r) for r in reports)
    assert one == many
    # Of the leaking messages, 3 are all reasoning and refused (with the reason shown).
    assert reports[0].totals.messages == fixture_totals().leaking - 3
    assert reports[0].totals.refused == 3
    assert one.count(b"nothing visible would remain") == 3


def _many(n: int) -> DiffReport:
    from dataclasses import replace

    base = full_report()
    one = base.applied[0]
    messages = tuple(
        replace(one, path=f"sessions/s{i % 7}.jsonl", line=i + 1, model=f"model-{i % 3}")
        for i in range(n)
    )
    return replace(base, messages=messages)


def test_html_caps_cards_and_points_to_the_json_report() -> None:
    renderer = RENDERERS[DiffFormat.HTML]
    html = renderer.render(_many(40), RenderOptions(max_findings=10))
    _outline(html)
    assert html.count("<article ") == 10
    assert "30 more messages in the JSON report" in html
    # Every file keeps its section and index entry, cards or not, so no anchor dangles.
    for i in range(7):
        assert html.count(f"sessions/s{i}.jsonl") >= 2  # index, section
    default = renderer.render(_many(520))
    assert default.count("<article ") == 500 and "20 more messages in the JSON report" in default


def test_html_files_fold_with_counts_and_an_index_leads_to_each() -> None:
    html = RENDERERS[DiffFormat.HTML].render(_many(9))
    outline = _outline(html)
    assert html.count('<details class="file"') == 7
    assert "2 messages would change" in html and "1 message would change" in html
    ids = {v for k, v in outline.attrs if k == "id"}
    index = html.split('<ol class="index">', 1)[1].split("</ol>", 1)[0]
    targets = re.findall(r'href="#([^"]+)"', index)
    assert len(targets) == 7 and set(targets) <= ids


def test_html_summary_charts_leaking_messages_by_model_and_kind() -> None:
    html = RENDERERS[DiffFormat.HTML].render(_many(9))
    assert "<figcaption>Leaking messages by model</figcaption>" in html
    assert "<figcaption>Leaking messages by kind</figcaption>" in html
    assert "<title>model-0: 3 messages</title>" in html


class _AfterSides(HTMLParser):
    """The After column of each card: its text, and where the cut marks sit in it."""

    def __init__(self) -> None:
        super().__init__()
        self.sides: list[list[tuple[str, str]]] = []  # ("text", t) or ("cut", title)
        self._in_after = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "pre" and a.get("class") == "after":
            self._in_after = True
            self.sides.append([])
        elif self._in_after and tag == "span" and a.get("class") == "cut":
            assert a.get("data-cut", "").startswith("✂")
            self.sides[-1].append(("cut", a.get("title") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._in_after = False

    def handle_data(self, data: str) -> None:
        if self._in_after:
            self.sides[-1].append(("text", data))


def test_html_after_side_marks_where_text_was_removed() -> None:
    # #14: an auditor sees in AFTER where the text was cut, not only in BEFORE; the marks
    # carry no text of their own, so copying the AFTER column still gives the stored text.
    report = full_report()
    parser = _AfterSides()
    parser.feed(RENDERERS[DiffFormat.HTML].render(report))
    applied = [m for m in report.messages if m.applied]
    assert len(parser.sides) == len(applied)
    by_after = {m.after: side for m, side in zip(applied, parser.sides, strict=True)}
    for m in applied:
        side = by_after[m.after]
        assert "".join(t for k, t in side if k == "text") == m.after
    fenced, leaky = fenced_message(), leaky_message()
    # The closing tag went from the end of the fenced message; everything before the answer
    # went from the leaky one: one mark each, where the cut was, naming what left and its size.
    assert by_after[fenced.after][-1] == ("cut", "removed here: delimiter removed (8 chars)")
    assert by_after[leaky.after][0] == (
        "cut",
        (
            "removed here: delimiter removed, whitespace trimmed, reasoning moved out of "
            f"the text ({len(leaky.before) - len(leaky.after)} chars)"
        ),
    )
    assert [k for k, _ in by_after[leaky.after]].count("cut") == 1


def test_html_after_side_is_plain_when_segments_do_not_rebuild_it() -> None:
    # A redacted secret straddling segments leaves no exact alignment: no marks, never wrong ones.
    m = replace(leaky_message(), segments=(("visible", "something else"), ("thinking", "x")))
    report = replace(full_report(), messages=(m,))
    parser = _AfterSides()
    parser.feed(RENDERERS[DiffFormat.HTML].render(report))
    assert parser.sides == [[("text", m.after)]]


def test_html_after_marks_give_no_size_when_redaction_changed_the_lengths() -> None:
    # Redacted segments are shorter than what was removed: a mark, but never a wrong count.
    from thinkfix.engine.secrets.redaction import Redaction
    from thinkfix.engine.settings.redact import redact_message

    m = redact_message(leaky_message(), Redaction.SECRETS)
    assert sum(len(t) for k, t in m.segments if k != "visible") != m.removed_chars
    parser = _AfterSides()
    parser.feed(RENDERERS[DiffFormat.HTML].render(replace(full_report(), messages=(m,))))
    (side,) = parser.sides
    assert side[0] == (
        "cut",
        ("removed here: delimiter removed, whitespace trimmed, reasoning moved out of the text"),
    )


def test_the_headline_speaks_of_several_refusals_in_the_plural() -> None:
    """#27 item 8: "3 leaking messages were left as it was: the format could not change it"."""
    from click.testing import CliRunner

    from thinkfix.cli import main

    fixtures = Path(__file__).resolve().parents[3] / "fixtures"
    out = CliRunner().invoke(main, ["diff", "--isolated", str(fixtures)]).stdout
    text = " ".join(out.split())
    assert "3 leaking messages were left as they were: the format could not change them" in text
