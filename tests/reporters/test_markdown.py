"""The markdown reporter: tables that survive any text, sized for a job summary."""

from __future__ import annotations

import re
from dataclasses import replace

from thinkfix.engine.report import Report
from thinkfix.reporters.base import DEFAULT_OPTIONS, OutputFormat, RenderOptions
from thinkfix.reporters.markdown import md_code, md_text
from thinkfix.reporters.registry import REPORTERS

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _render(report: Report, options: RenderOptions = DEFAULT_OPTIONS) -> str:
    return REPORTERS[OutputFormat.MARKDOWN].render(report, options)


def _tables(text: str) -> list[list[str]]:
    tables: list[list[str]] = []
    previous_was_row = False
    for line in text.splitlines():
        is_row = line.startswith("|")
        if is_row and not previous_was_row:
            tables.append([])
        if is_row:
            tables[-1].append(line)
        previous_was_row = is_row
    return tables


def _section(text: str, heading: str) -> list[str]:
    after = text.split(f"### {heading}\n", 1)[1]
    return _tables(after)[0]


def test_markdown_every_row_has_as_many_cells_as_its_header(full: Report) -> None:
    for table in _tables(_render(full, RenderOptions(statistics=True))):
        widths = {len(UNESCAPED_PIPE.findall(row)) for row in table}
        assert len(widths) == 1, table


def test_markdown_findings_table_has_one_row_per_finding(full: Report) -> None:
    rows = _section(_render(full), "Findings")
    assert len(rows) == 2 + len(full.findings)


def test_markdown_lists_new_findings_first_and_counts_the_rest_when_capped(full: Report) -> None:
    text = _render(full, RenderOptions(max_findings=2))
    rows = _section(text, "Findings")[2:]
    assert len(rows) == 2 and all("**new**" in row for row in rows)
    assert "_... and 4 more findings (the json and sarif reports list them all)_" in text


def test_markdown_caps_long_lists_by_default(full: Report) -> None:
    many = tuple(full.findings[0]._replace(line=n) for n in range(1, 151))
    text = _render(replace(full, findings=many))
    assert len(_section(text, "Findings")) == 2 + 100
    assert "and 50 more findings" in text


def test_markdown_has_counts_by_kind_format_and_model_and_by_file_with_statistics(
    full: Report,
) -> None:
    text = _render(full)
    for heading in ("By kind", "By format", "By model"):
        assert f"### {heading}\n" in text
    assert "### By file" not in text
    assert "### By file\n" in _render(full, RenderOptions(statistics=True))
    assert len(_section(text, "By model")) == 2 + len(full.summary.by_model)


def test_markdown_escapes_pipes_and_keeps_tags_visible(full: Report) -> None:
    finding = full.findings[0]._replace(json_path="a|b", tag="<think>", model="m|<b>*x*")
    text = _render(replace(full, findings=(finding,)))
    row = _section(text, "Findings")[2]
    assert "`a\\|b`" in row and "`<think>`" in row and "m\\|\\<b\\>\\*x\\*" in row


def test_markdown_clean_and_empty_reports_say_so(clean: Report, empty: Report) -> None:
    assert (
        ":white_check_mark: No leaked reasoning in 6 assistant messages across 2 files."
        in _render(clean)
    )
    assert "### Findings" not in _render(clean)
    assert _render(empty).startswith("## thinkfix scan\n\n:white_check_mark: No files scanned.\n")


def test_md_code_fences_past_backticks_and_stays_on_one_line() -> None:
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("a\nb|c") == "`a b\\|c`"
    assert md_code("") == ""


def test_md_text_escapes_what_markdown_would_interpret() -> None:
    assert (
        md_text("*a* _b_ <i> [l](u) x|y & \\")
        == "\\*a\\* \\_b\\_ \\<i\\> \\[l\\](u) x\\|y \\& \\\\"
    )
