"""`scan --check size`: the images and signatures stored again, in every output format (#28)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.reporters.base import OutputFormat

DATA = Path(__file__).resolve().parents[1] / "data" / "health"


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def _scan(target: Path, fmt: str) -> tuple[int, str]:
    args = ["scan", "--isolated", str(target), "--check", "size", "--output-format", fmt]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout


@pytest.mark.parametrize("fmt", [f.value for f in OutputFormat])
def test_every_output_format_carries_the_stored_again_findings(fmt: str, tmp_path: Path) -> None:
    target = tmp_path / "s"
    shutil.copytree(DATA / "codex" / "images", target)
    code, out = _scan(target, fmt)
    assert code == 1  # no leak; the copies are findings
    for problem in ("inlined-images", "repeated-image", "repeated-signature"):
        assert problem in out, (fmt, problem)


def test_the_json_report_gives_the_bytes(tmp_path: Path) -> None:
    target = tmp_path / "s"
    shutil.copytree(DATA / "claude-code" / "images", target)
    code, out = _scan(target, "json")
    health = json.loads(out)["health"]
    assert code == 1
    assert health["by_problem"] == {"inlined-images": 1, "repeated-image": 1}
    sizes = {f["problem"]: f["size"] for f in health["findings"]}
    assert sizes == {"inlined-images": 3 * 360 + 60, "repeated-image": 2 * 360}
