"""Every damaged session of the health checks' test data, fixed by `repair --fix`: what the
fix repairs is gone on a second check, and only what the docs say it leaves remains."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.engine.health.run import check_file
from thinkfix.engine.health.shapes import TOOL_SHAPES
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import Problem
from thinkfix.formats import registry

DATA = Path(__file__).resolve().parents[3] / "data" / "health"
#: The runtimes whose problems the fixes repair, and what they leave (docs/fixes.md).
FIXED_FORMATS = tuple(sorted(set(TOOL_SHAPES) - {"anthropic"}))
LEFT = {"not-json", "not-utf8"}
CASES = sorted(
    (name, spec["format"], Problem(spec["findings"][0][1]).check)
    for name, spec in json.loads((DATA / "expected.json").read_text()).items()
    if spec["format"] in FIXED_FORMATS
    and spec["findings"]
    and Problem(spec["findings"][0][1]).check is not Check.SIZE
)


@pytest.mark.parametrize(("name", "fmt", "check"), CASES)
def test_repair_fix_repairs_what_its_check_found_in_the_health_data(
    tmp_path: Path, name: str, fmt: str, check: Check
) -> None:
    source = DATA / name
    work = tmp_path / "in" / name
    work.parent.mkdir(parents=True)
    shutil.copyfile(source, work)
    before = check_file(str(work), registry.get(fmt), {check}).findings
    assert before, "the data file shows the problem"
    result = CliRunner().invoke(
        main,
        [
            "repair",
            "--fix",
            check.value,
            "--format",
            fmt,
            "--in-place",
            "--include-active",
            str(work),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output  # 1: a leak the data also holds, refused
    after = check_file(str(work), registry.get(fmt), {check}).findings
    assert {str(f.problem) for f in after} <= LEFT
    assert len(after) == sum(1 for f in before if str(f.problem) in LEFT)
