"""Every reporter against its golden file. Regenerate with THINKFIX_UPDATE_GOLDEN=1 and review the
diff: a golden file is the reviewed, exact output users and their tools will see."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from thinkfix.engine.report import Report
from thinkfix.reporters.base import OutputFormat, RenderOptions
from thinkfix.reporters.registry import REPORTERS

from .cases import clean_report, empty_report, full_report, unread_report

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("THINKFIX_UPDATE_GOLDEN") == "1"
ALL = tuple(OutputFormat)
HUMAN = (OutputFormat.TEXT, OutputFormat.MARKDOWN)

# case name -> (report builder, options, formats it is rendered in)
CASES: dict[str, tuple[Callable[[], Report], RenderOptions, tuple[OutputFormat, ...]]] = {
    "full": (full_report, RenderOptions(), ALL),
    "statistics": (full_report, RenderOptions(statistics=True), HUMAN),
    "capped": (full_report, RenderOptions(max_findings=2), HUMAN),
    "narrow": (full_report, RenderOptions(width=72), (OutputFormat.TEXT,)),
    "show-baselined": (
        full_report,
        RenderOptions(show_baselined=True),
        (OutputFormat.TEXT, OutputFormat.CONCISE, OutputFormat.GITHUB),
    ),
    "clean": (clean_report, RenderOptions(statistics=True), ALL),
    "empty": (empty_report, RenderOptions(), ALL),
    "unread": (unread_report, RenderOptions(), ALL),
}

PAIRS = [(case, fmt) for case, (_, _, formats) in CASES.items() for fmt in formats]


def golden_path(case: str, fmt: OutputFormat) -> Path:
    return GOLDEN / case / f"{fmt.value}{REPORTERS[fmt].suffix}"


@pytest.mark.parametrize(("case", "fmt"), PAIRS, ids=[f"{c}-{f.value}" for c, f in PAIRS])
def test_reporter_matches_golden(case: str, fmt: OutputFormat) -> None:
    build, options, _ = CASES[case]
    actual = REPORTERS[fmt].render_bytes(build(), options)
    path = golden_path(case, fmt)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual)
    assert path.exists(), f"no golden file {path}; run with THINKFIX_UPDATE_GOLDEN=1"
    assert actual == path.read_bytes(), f"{path} differs; review, then THINKFIX_UPDATE_GOLDEN=1"


def test_golden_files_all_have_a_case() -> None:
    # A golden file whose case was removed would rot unnoticed.
    expected = {golden_path(case, fmt) for case, fmt in PAIRS}
    actual = set(GOLDEN.rglob("*.*"))
    assert actual <= expected, sorted(str(p) for p in actual - expected)
