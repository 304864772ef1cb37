"""The scan html page: self-contained, script-free, and every planted tag shown as text."""

from __future__ import annotations

import re
from dataclasses import replace

from thinkfix.engine.report import MessageCounts, Report, SkippedFile
from thinkfix.reporters.base import DEFAULT_OPTIONS, OutputFormat, RenderOptions
from thinkfix.reporters.registry import REPORTERS

from .cases import full_report

EVIL = '</td></svg><script>alert("x")</script><img src=x onerror=alert(1)>'


def _render(report: Report, options: RenderOptions = DEFAULT_OPTIONS) -> str:
    return REPORTERS[OutputFormat.HTML].render(report, options)


def _planted() -> Report:
    report = full_report()
    s = report.summary
    findings = tuple(f._replace(model=EVIL, path=f"sessions/{EVIL}.jsonl") for f in report.findings)
    summary = replace(
        s,
        by_model={**s.by_model, EVIL: MessageCounts(3, 2, 2)},
        by_file={**s.by_file, f"sessions/{EVIL}.jsonl": MessageCounts(3, 2, 2, "codex")},
        by_kind={**s.by_kind, EVIL: 1},
        by_day={**s.by_day, "2026-03-03": {EVIL: MessageCounts(3, 2, 2)}},
    )
    skipped = (*report.skipped, SkippedFile(path=f"x/{EVIL}", reason=EVIL))
    return replace(report, findings=findings, summary=summary, skipped=skipped)


def test_html_planted_script_in_model_and_path_is_text_not_markup() -> None:
    page = _render(_planted())
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "onerror=alert(1)&gt;" in page  # shown, escaped
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    # The planted text reaches every place it was put: charts, tables, findings, skipped.
    assert page.count("&lt;script&gt;") >= 8


def test_html_is_self_contained_under_a_strict_policy() -> None:
    page = _render(full_report())
    assert "content=\"default-src 'none'; style-src 'unsafe-inline'\"" in page
    assert not re.search(r"<(script|link|img|iframe|object)\b", page, re.IGNORECASE)
    assert not re.search(r"\b(src|href)\s*=\s*\"?(https?:|//)", page, re.IGNORECASE)
    assert "url(" not in page


def test_html_charts_counts_by_model_kind_file_and_day() -> None:
    page = _render(full_report())
    for caption in (
        "Leaking messages by model",
        "Findings by kind",
        "Files with the most leaking messages",
        "Leaking messages by day (UTC)",
    ):
        assert f"<figcaption>{caption}</figcaption>" in page
    assert page.count("<svg ") == 5  # model, kind, format, day, file
    assert "<h2>Skipped files</h2>" in page and "<h2>Input errors</h2>" in page


def test_html_findings_capped_with_a_pointer_to_the_full_list() -> None:
    page = _render(full_report(), RenderOptions(max_findings=2))
    assert "and 4 more findings (the json and sarif reports list them all)" in page


def test_html_long_breakdowns_chart_the_top_and_table_all() -> None:
    report = full_report()
    models = {f"model-{i:03d}": MessageCounts(10, i % 7, i % 7) for i in range(40)}
    page = _render(replace(report, summary=replace(report.summary, by_model=models)))
    assert "(top 25 of 40; the table lists all)" in page
    assert all(f"<td>model-{i:03d}</td>" in page for i in range(40))


def test_html_headline_shows_code_as_code() -> None:
    """#27 item 8: the headline showed literal backticks around `thinkfix repair`."""
    report = full_report()
    refused = report.findings[0]._replace(refused="all reasoning")
    html = REPORTERS[OutputFormat.HTML].render(
        replace(report, findings=(refused, *report.findings[1:])), DEFAULT_OPTIONS
    )
    headline = re.search(r'<p class="headline">(.*?)</p>', html, re.DOTALL)
    assert headline is not None
    assert "<code>thinkfix repair</code>" in headline[1] and "`" not in headline[1]


def test_html_wide_tables_scroll_on_their_own_so_the_page_never_scrolls_sideways() -> None:
    # At 640 px the findings' table (eight columns) and the files' table (long paths) made
    # the whole page scroll sideways: their `.wide` box had no rule without --check.
    page = _render(full_report())
    assert re.search(r"^\.wide \{ overflow-x: auto; \}$", page, re.MULTILINE)
    tables = re.findall(r"(<div class=\"wide\">)?<table><thead><tr><th>(\w+)", page)
    heads = {head: bool(box) for box, head in tables}
    assert {"location", "file"} <= heads.keys()
    assert heads["location"] and heads["file"], heads
