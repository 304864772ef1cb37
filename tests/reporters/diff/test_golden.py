"""Every diff renderer against its golden file. Regenerate with THINKFIX_UPDATE_GOLDEN=1 and
review the diff: a golden file is the exact output an auditor will read."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from thinkfix.engine.repair.audit import DiffReport
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.settings.redact import redact_diff
from thinkfix.reporters.diff import RENDERERS
from thinkfix.reporters.diff.base import DiffFormat

from .cases import clean_report, fixes_report, full_report

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("THINKFIX_UPDATE_GOLDEN") == "1"

CASES: dict[str, Callable[[], DiffReport]] = {
    "full": full_report,
    "clean": clean_report,
    "redacted": lambda: redact_diff(full_report(), Redaction.SECRETS),
    "redacted-all": lambda: redact_diff(full_report(), Redaction.ALL),
    "fixes": fixes_report,
    "fixes-redacted": lambda: redact_diff(fixes_report(), Redaction.ALL),
}
PAIRS = [(case, fmt) for case in CASES for fmt in DiffFormat]


def golden_path(case: str, fmt: DiffFormat) -> Path:
    return GOLDEN / case / f"{fmt.value}{RENDERERS[fmt].suffix}"


@pytest.mark.parametrize(("case", "fmt"), PAIRS, ids=[f"{c}-{f.value}" for c, f in PAIRS])
def test_diffreport_matches_golden(case: str, fmt: DiffFormat) -> None:
    actual = RENDERERS[fmt].render_bytes(CASES[case]())
    path = golden_path(case, fmt)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual)
    assert path.exists(), f"no golden file {path}; run with THINKFIX_UPDATE_GOLDEN=1"
    assert actual == path.read_bytes(), f"{path} differs; review, then THINKFIX_UPDATE_GOLDEN=1"


def test_diffreport_golden_files_all_have_a_case() -> None:
    expected = {golden_path(case, fmt) for case, fmt in PAIRS}
    assert set(GOLDEN.rglob("*.*")) <= expected
