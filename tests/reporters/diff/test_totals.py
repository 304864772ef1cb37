"""The diff report's totals count a file `--fix` changes as a changed file (#28).

A run whose only change was a fix said `files_changed: 0` (and "files changed 0" in every
view) while its headline said "2 fixes in 1 file would change"."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.repair.audit import DiffReport, FileDiff, FixDiff
from thinkfix.reporters.diff.base import headline

from .cases import fixes_report

_PATHS = [f"s/{n}.jsonl" for n in "abcde"]


@st.composite
def _reports(draw: st.DrawFn) -> DiffReport:
    """Files with or without changed messages, and fixes on any of them."""
    files = tuple(
        FileDiff(path, "claude-code", "would-change", messages=draw(st.integers(0, 2)))
        for path in draw(st.lists(st.sampled_from(_PATHS), unique=True, max_size=5))
    )
    fixed = draw(st.lists(st.sampled_from([f.path for f in files] or [""]), max_size=4))
    fixes = tuple(FixDiff(p, 1, "lines", "truncated", "cut") for p in fixed if p)
    return DiffReport(files=files, fixes=fixes)


@given(_reports())
def test_files_changed_counts_every_file_a_message_or_a_fix_changes(report: DiffReport) -> None:
    changed = {f.path for f in report.files if f.messages} | {f.path for f in report.fixes}
    assert report.totals.files_changed == len(changed)


def test_a_run_of_fixes_only_counts_its_file() -> None:
    report = replace(fixes_report(), messages=(), files=fixes_report().files[-1:])
    report = replace(report, files=(replace(report.files[0], messages=0),))
    fixed = {f.path for f in report.fixes}
    assert report.totals.files_changed == len(fixed) > 0
    assert headline(report).startswith(f"{len(report.fixes)} fixes in ")


def test_the_headline_counts_messages_in_the_files_that_hold_them() -> None:
    # moves in 2 files and fixes in a third: "... messages in 2 files", not 3
    report = fixes_report()
    with_messages = sum(1 for f in report.files if f.messages)
    assert f"in {with_messages} files would change:" in headline(report)
