"""The text reporter: rich tables rendered to a string, plain unless colour is asked for."""

from __future__ import annotations

from dataclasses import replace

import pytest

from thinkfix.engine.report import Report
from thinkfix.reporters.base import DEFAULT_OPTIONS, OutputFormat, RenderOptions
from thinkfix.reporters.registry import REPORTERS


def _render(report: Report, options: RenderOptions = DEFAULT_OPTIONS) -> str:
    return REPORTERS[OutputFormat.TEXT].render(report, options)


def test_text_has_no_ansi_unless_colour_is_asked_for(full: Report) -> None:
    assert "\x1b[" not in _render(full)
    assert "\x1b[" in _render(full, RenderOptions(color=True))


def test_text_ignores_the_terminal_environment(
    full: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _render(full)
    for name, value in (
        ("COLUMNS", "40"),
        ("FORCE_COLOR", "1"),
        ("TERM", "xterm-256color"),
        ("TTY_COMPATIBLE", "1"),
    ):
        monkeypatch.setenv(name, value)
    assert _render(full) == plain


def test_text_lists_every_finding_under_its_file(full: Report) -> None:
    # Baselined findings are listed only on request (issue 14 #11), so ask.
    lines = _render(full, RenderOptions(width=200, show_baselined=True)).splitlines()
    for f in full.findings:
        heading = lines.index(f.path)
        rows = lines[heading + 1 : lines.index("", heading)]
        assert rows[0].split() == ["line", "field", "kind", "tag", "model", "leaked"]
        assert any(row.split()[0] == str(f.line) and f.json_path in row for row in rows[1:])
    assert "Input errors" in lines and "Stale baseline entries (they match no finding)" in lines


def test_text_keeps_baselined_findings_apart_after_new_ones(full: Report) -> None:
    lines = _render(full, RenderOptions(width=200, show_baselined=True)).splitlines()
    baselined = next(f for f in full.findings if f.baselined)
    assert lines.index("Leaked reasoning") < lines.index("Covered by the baseline")
    assert lines.index("Covered by the baseline") < lines.index(baselined.path)
    only_new = replace(full, findings=full.new_findings)
    assert "Covered by the baseline" not in _render(only_new)


def test_text_to_a_file_or_pipe_never_truncates(full: Report) -> None:
    text = _render(full)  # no width: a file or a pipe, where long values fold
    assert "…" not in text
    for f in full.new_findings:
        assert f.json_path in text


@pytest.mark.parametrize("width", [60, 80, 100])
def test_text_in_a_terminal_fits_its_width_with_headers(full: Report, width: int) -> None:
    """#27 item 5: at 80 columns the model folded into `clau`/`de-s`/`onne` and the table had
    no headers. The field and the model are cut with an ellipsis, one line per finding."""
    long_model = full.findings[0]._replace(model="anthropic/claude-opus-4-5-20251101")
    text = _render(replace(full, findings=(long_model,)), RenderOptions(width=width))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    header = lines.index(long_model.path) + 1
    assert lines[header].split() == ["line", "field", "kind", "tag", "model", "leaked"]
    row = lines[header + 1].split()
    assert row[0] == str(long_model.line) and row[-2:] == [str(long_model.leaked_chars), "chars"]
    assert long_model.kind in row and long_model.tag in row


def test_text_statistics_add_the_counts_tables(full: Report) -> None:
    assert "By kind" not in _render(full)
    text = _render(full, RenderOptions(statistics=True))
    for title in ("By kind", "By format", "By model", "By file"):
        assert title in text


def test_text_ends_with_the_verdict(full: Report, clean: Report) -> None:
    assert _render(clean).endswith("No leaked reasoning in 6 assistant messages across 2 files.\n")
    assert "2 input errors" in _render(full, RenderOptions(width=300)).splitlines()[-1]


def test_text_shows_markup_in_data_literally(full: Report) -> None:
    finding = full.findings[0]._replace(path="[bold]x[/bold] :smile:.jsonl", model="[red]m")
    text = _render(replace(full, findings=(finding,)), RenderOptions(width=200))
    assert "\n[bold]x[/bold] :smile:.jsonl\n" in text and "[red]m" in text


def test_text_caps_findings_when_asked(full: Report) -> None:
    text = _render(full, RenderOptions(max_findings=1, width=200, show_baselined=True))
    assert "... and 5 more findings" in text
    assert "Covered by the baseline" not in text  # the cap keeps new findings first


def test_a_missing_model_has_one_word_in_every_human_format(full: Report) -> None:
    # Issue 14 #11: "(no model)" in text, "(unknown)" in Markdown and the breakdowns.
    assert any(f.model is None for f in full.findings)
    options = RenderOptions(statistics=True, width=200)
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN):
        text = REPORTERS[fmt].render(full, options)
        assert "(unknown)" in text and "(no model)" not in text and "unknown model" not in text
