"""`scan --check` on the HTML page: the health problems legible by check and problem (#28).

The page listed every problem in one table of location, problem and message: no count by
check or problem, no card, no cap (a scan with thousands of problems made a page of
thousands of rows), no sign of which the baseline covers, and `size`'s bytes by record type
nowhere (only the JSON report had them).
"""

from __future__ import annotations

import re

from thinkfix.engine.report import Report, Summary
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import HealthFinding, HealthSection, Problem, TypeBytes
from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.html import HtmlReporter

HOSTILE = "</td><script>alert(1)</script>.jsonl"


def _finding(line: int, problem: Problem, *, baselined: bool = False) -> HealthFinding:
    return HealthFinding(
        f"sessions/{HOSTILE}",
        line,
        problem.check,
        problem,
        "claude-code",
        message=f"<b>{problem.value}</b> on line {line}",
        baselined=baselined,
    )


def _report() -> Report:
    findings = (
        _finding(2, Problem.MISSING_SIGNATURE),
        _finding(3, Problem.CALL_WITHOUT_RESULT),
        _finding(4, Problem.CALL_WITHOUT_RESULT, baselined=True),
        _finding(5, Problem.CALL_WITHOUT_RESULT),
        _finding(9, Problem.TRUNCATED),
    )
    types = {
        "claude-code": {"progress": TypeBytes(3, 9000), "assistant": TypeBytes(5, 4000)},
        "codex": {"response_item/message": TypeBytes(2, 6000)},
    }
    return Report(
        summary=Summary(files=1),
        tool_version="0.0.0-test",
        health=HealthSection(tuple(Check), findings, types),
    )


def _page(report: Report, limit: int | None = None) -> str:
    return HtmlReporter().render(report, RenderOptions(color=False, max_findings=limit))


def _section(page: str) -> str:
    return page.split("<h2>Session health</h2>", 1)[1].split("<footer>", 1)[0]


def test_problems_are_counted_by_check_and_problem_in_the_checks_order() -> None:
    rows = re.findall(
        r'<tr><td>([a-z-]+)</td><td><span class="kind">([a-z-]+)</span></td>'
        r'<td class="num">(\d+)</td><td class="num">(\d+)</td></tr>',
        _section(_page(_report())),
    )
    assert rows == [
        ("signature", "missing-signature", "1", "1"),
        ("tool-pairs", "call-without-result", "3", "2"),
        ("lines", "truncated", "1", "1"),
    ]


def test_cards_count_the_health_problems_and_the_new_ones() -> None:
    page = _page(_report())
    assert '<div class="card"><b>5</b><span>health problems</span></div>' in page
    assert '<div class="card"><b>4</b><span>new health</span></div>' in page
    assert "health problems" not in _page(Report(summary=Summary(files=1)))  # no --check


def test_each_problem_shows_its_check_and_status_escaped_and_the_list_is_capped() -> None:
    section = _section(_page(_report(), limit=3))
    assert section.count('<span class="status error">new</span>') == 2
    assert section.count('<span class="status baselined">baselined</span>') == 1
    assert "&hellip; and 2 more problems (the json and sarif reports list them all)" in section
    assert "<script>" not in section and "&lt;/td&gt;&lt;script&gt;" in section
    assert "&lt;b&gt;call-without-result&lt;/b&gt; on line 3" in section


def test_size_bytes_by_record_type_are_shown_the_most_first() -> None:
    section = _section(_page(_report()))
    rows = re.findall(
        r"<tr><td>([^<]+)</td><td><code>([^<]+)</code></td>"
        r'<td class="num">([\d,]+)</td><td class="num">([\d,]+)</td></tr>',
        section,
    )
    assert rows == [
        ("claude-code", "progress", "3", "9,000"),
        ("codex", "response_item/message", "2", "6,000"),
        ("claude-code", "assistant", "5", "4,000"),
    ]
