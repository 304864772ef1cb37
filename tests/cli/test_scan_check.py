"""`thinkfix scan --check`: the health checks in every output format, the baseline and the
exit code, and a scan without them exactly as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.reporters.base import OutputFormat

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
DATA = REPO / "tests" / "data" / "health"
TOOLS = DATA / "claude-code" / "tool-pairs"
ENV_KEYS = ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR")


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def _scan(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", "--isolated", *args])
    return result.exit_code, result.stdout, result.stderr


def _copy(src: Path, tmp: Path) -> Path:
    target = tmp / "s"
    shutil.copytree(src, target)
    return target


def test_check_findings_fail_a_clean_scan(tmp_path: Path) -> None:
    code, _, _ = _scan(
        str(_copy(TOOLS, tmp_path)),
        "--check",
        "tool-pairs",
        "-o",
        "r.json",
        "--output-format",
        "json",
    )
    doc = json.loads((tmp_path / "r.json").read_text())
    assert code == 1  # no leak, but two broken tool pairs
    assert doc["summary"]["findings"] == 0
    assert doc["health"]["checks"] == ["tool-pairs"]
    assert doc["health"]["by_problem"] == {"call-without-result": 1, "result-without-call": 1}
    assert [f["detail"] for f in doc["health"]["findings"]] == [
        "toolu_01Fg2Hi4Jk6Lm8No0Pq2Rs4T",
        "toolu_01Xy9Za1Bc3De5Fg7Hi9Jk1L",
    ]
    assert doc["health"]["findings"][0]["path"].startswith("s/")  # display paths, as leaks


def test_a_clean_check_passes(tmp_path: Path) -> None:
    code, out, _ = _scan(str(_copy(TOOLS, tmp_path)), "--check", "signature,lines")
    assert code == 0
    assert "Session health (signature, lines): no problem found." in out


def test_without_check_no_output_mentions_health() -> None:
    code, out, _ = _scan(str(FIXTURES), "--output-format", "json")
    assert code == 1
    assert "health" not in json.loads(out)


def test_the_fixtures_pass_every_check() -> None:
    """The fixtures' traps (signed blocks, parallel calls, decoys) are no health problem."""
    _, out, _ = _scan(str(FIXTURES), "--check", "all", "--output-format", "json")
    health = json.loads(out)["health"]
    assert health["findings"] == []
    assert health["checks"] == ["signature", "tool-pairs", "lines", "secrets", "size"]
    assert "claude-code" in health["bytes_by_type"]


def test_an_unknown_check_is_an_error_naming_the_known_ones() -> None:
    code, _, err = _scan(str(FIXTURES), "--check", "leaks")
    assert code == 2
    assert "unknown check 'leaks'" in err and "tool-pairs" in err


def test_check_refuses_incremental(tmp_path: Path) -> None:
    code, _, err = _scan(str(_copy(TOOLS, tmp_path)), "--check", "lines", "--incremental")
    assert code == 2 and "--incremental" in err


@pytest.mark.parametrize("fmt", [f.value for f in OutputFormat])
def test_every_output_format_carries_the_health_findings(fmt: str, tmp_path: Path) -> None:
    code, out, _ = _scan(str(_copy(TOOLS, tmp_path)), "--check", "all", "--output-format", fmt)
    assert code == 1
    assert "call-without-result" in out and "result-without-call" in out


def test_the_baseline_accepts_health_findings(tmp_path: Path) -> None:
    target = _copy(DATA / "claude-code", tmp_path)
    shutil.rmtree(target / "lines")  # damaged lines are input errors too (exit 2 whatever)
    code, _, _ = _scan(str(target), "--check", "all", "--write-baseline", "b.json")
    assert code == 0  # what the baseline records does not fail the run that wrote it
    kinds = {e["kind"] for e in json.loads((tmp_path / "b.json").read_text())["findings"].values()}
    assert {"health:missing-signature", "health:call-without-result", "health:secret"} <= kinds
    args = ("--check", "all", "--baseline", "b.json", "--output-format", "json")
    code, out, _ = _scan(str(target), *args)
    doc = json.loads(out)
    assert code == 0
    # 8, and size's images (inlined, stored again) and the signature stored again (#28)
    assert len(doc["health"]["findings"]) == doc["health"]["baselined"] == 11
    assert doc["stale_baseline"] == []
    (target / "tool-pairs" / "6b9f2d4a-3c8e-4f0b-9d7a-2e1c4f6b8d03.jsonl").unlink()
    code, out, _ = _scan(str(target), *args)
    assert code == 0 and len(json.loads(out)["stale_baseline"]) == 2


def test_check_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("THINKFIX_CHECK", "tool-pairs")
    code, out, _ = _scan(str(_copy(TOOLS, tmp_path)), "--output-format", "concise")
    assert code == 1 and "health/call-without-result" in out


def test_jobs_never_change_the_health_findings(tmp_path: Path) -> None:
    """Files scanned in worker processes bring their health findings back whole."""
    target = str(_copy(DATA, tmp_path))
    runs = [
        _scan(target, "--check", "all", "--jobs", jobs, "--output-format", "json", "--no-progress")
        for jobs in ("1", "2")
    ]
    assert runs[0][1] == runs[1][1]
    expected = json.loads((DATA / "expected.json").read_text())
    # every finding the data lists, less the size data's (it is under the 1 MiB default)
    listed = [r for v in expected.values() for r in v["findings"] if r[1] != "large-record"]
    assert len(json.loads(runs[0][1])["health"]["findings"]) == len(listed)
