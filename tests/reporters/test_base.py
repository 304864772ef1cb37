"""The reporter registry, the options, and the helpers every format shares."""

from __future__ import annotations

from dataclasses import replace

import pytest

from thinkfix.engine.report import InputError, Report
from thinkfix.io.errors import ErrorKind
from thinkfix.normalizer.kinds import LeakKind
from thinkfix.reporters import base, registry
from thinkfix.reporters.base import OutputFormat, RenderOptions, Reporter
from thinkfix.reporters.registry import REPORTERS, get_reporter

from .cases import FINDINGS, clean_report, empty_report, full_report, unread_report


def test_registry_has_a_reporter_for_every_output_format() -> None:
    assert set(REPORTERS) == set(OutputFormat)
    for fmt, reporter in REPORTERS.items():
        assert isinstance(reporter, Reporter)
        assert reporter.format is fmt


def test_registry_lives_above_the_interface_it_lists() -> None:
    # #12: base used to reach the registry through a module __getattr__ (a circle);
    # the registry is now its own module above every reporter, and base does not know it.
    assert registry.REPORTERS is REPORTERS
    assert not hasattr(base, "REPORTERS")


@pytest.mark.parametrize("name", [f.value for f in OutputFormat] + list(OutputFormat))
def test_get_reporter_accepts_names_and_members(name: str | OutputFormat) -> None:
    assert get_reporter(name) is REPORTERS[OutputFormat(name)]


def test_get_reporter_names_the_choices_for_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown output format 'yaml'.*sarif"):
        get_reporter("yaml")


def test_render_options_are_frozen_with_quiet_defaults() -> None:
    options = RenderOptions()
    assert (options.statistics, options.color, options.max_findings, options.width) == (
        False,
        False,
        None,
        None,
    )
    with pytest.raises(AttributeError):
        options.color = True  # type: ignore[misc]


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_render_and_render_bytes_agree_and_end_with_a_newline(
    fmt: OutputFormat, any_report: Report
) -> None:
    reporter = REPORTERS[fmt]
    text = reporter.render(any_report)
    assert reporter.render_bytes(any_report) == text.encode("utf-8")
    assert text.endswith("\n")
    assert reporter.render(any_report) == text  # nothing from the clock or the environment


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_enum_kinds_render_as_their_values(fmt: OutputFormat) -> None:
    # The engine hands over LeakKind / ErrorKind members (a plain str read back from a state
    # file becomes one too); an f-string of either must say `block`, never "LeakKind.BLOCK".
    report = full_report()
    as_enums = replace(
        report,
        findings=tuple(f._replace(kind=LeakKind(f.kind)) for f in report.findings),
        errors=tuple(e._replace(kind=ErrorKind(e.kind)) for e in report.errors),
        summary=replace(
            report.summary, by_kind={LeakKind(k): v for k, v in report.summary.by_kind.items()}
        ),
    )
    options = RenderOptions(statistics=True)
    rendered = REPORTERS[fmt].render(as_enums, options)
    assert "LeakKind" not in rendered and "ErrorKind" not in rendered
    assert rendered == REPORTERS[fmt].render(report, options)


def test_headline_for_new_and_baselined_findings_and_errors() -> None:
    assert base.headline(full_report()) == (
        "Reasoning leaked in 6 of 20 assistant messages in 4 of 6 files: 6 findings, 5 new, "
        "1 covered by the baseline. 2 input errors: those inputs were not fully read. "
        "3 files skipped (1 empty, 1 not a known session format, 1 thinkfix repair sidecar)."
    )


def test_headline_says_what_was_not_read() -> None:
    """Skipped files are in the verdict line itself, not only on stderr (#10)."""
    assert base.headline(unread_report()) == (
        "No session file found: nothing was checked. "
        "2 files skipped (1 empty, 1 not a known session format)."
    )
    assert "skipped" not in base.headline(clean_report())


def test_headline_when_everything_is_baselined() -> None:
    report = full_report()
    findings = tuple(f._replace(baselined=True) for f in report.findings)
    report = replace(report, findings=findings, errors=(), skipped=())
    assert base.headline(report).endswith("6 findings, all covered by the baseline.")


def test_headline_for_clean_and_empty_reports() -> None:
    assert (
        base.headline(clean_report())
        == "No leaked reasoning in 6 assistant messages across 2 files."
    )
    assert base.headline(empty_report()) == "No files scanned."


def test_headline_never_calls_an_unreadable_run_clean() -> None:
    report = replace(empty_report(), errors=(InputError("a.jsonl", None, "unreadable", "boom"),))
    assert "1 input error: those inputs were not fully read." in base.headline(report)


def test_listing_order_puts_new_findings_before_baselined_ones() -> None:
    ordered = base.listing_order(FINDINGS)
    assert [f.baselined for f in ordered] == sorted(f.baselined for f in FINDINGS)
    assert [f for f in ordered if not f.baselined] == [f for f in FINDINGS if not f.baselined]


@pytest.mark.parametrize(
    ("limit", "shown", "hidden"), [(None, 6, 0), (10, 6, 0), (6, 6, 0), (2, 2, 4), (0, 0, 6)]
)
def test_capped_reports_how_many_were_left_out(limit: int | None, shown: int, hidden: int) -> None:
    listed, rest = base.capped(FINDINGS, limit)
    assert (len(listed), rest) == (shown, hidden)


def test_finding_limit_prefers_the_option_over_the_reporter_default() -> None:
    markdown = REPORTERS[OutputFormat.MARKDOWN]
    assert markdown.finding_limit(RenderOptions()) == markdown.default_max_findings
    assert markdown.finding_limit(RenderOptions(max_findings=3)) == 3
    assert REPORTERS[OutputFormat.TEXT].finding_limit(RenderOptions()) is None


def test_report_kinds_lists_every_known_kind_then_unknown_ones() -> None:
    report = full_report()
    odd = replace(report, findings=(*report.findings, report.findings[0]._replace(kind="zz_new")))
    kinds = base.report_kinds(odd)
    assert kinds[: len(LeakKind)] == [k.value for k in LeakKind]
    assert kinds[-1] == "zz_new"
    assert base.describe_kind("zz_new")


def test_every_known_kind_has_its_own_description() -> None:
    descriptions = [base.describe_kind(k.value) for k in LeakKind]
    assert len(set(descriptions)) == len(descriptions)
