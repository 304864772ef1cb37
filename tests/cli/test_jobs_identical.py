"""`--jobs` never changes a report's bytes (#13 item 3): results merge in a fixed order.

The fixtures are checked in tests/cli/test_scan.py; here a generated corpus of many files of
every fixture format and mixed sizes (so workers finish in a different order from the one the
files were listed in) gives byte-identical JSON reports for scan and repair --dry-run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every JSONL fixture, copied under several names, some repeated up to 40 times over (a
    JSONL session followed by itself is still one session), shuffled across folders."""
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(13)
    sources = sorted(p for p in FIXTURES.rglob("*.jsonl") if p.is_file())
    assert sources
    for n, source in enumerate(sources * 3):
        folder = root / source.parent.name / f"d{rng.randrange(3)}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{n:03d}-{source.name}").write_bytes(
            source.read_bytes() * rng.choice((1, 2, 7, 40))
        )
    return root


def _json(*args: str) -> str:
    result = CliRunner().invoke(main, [*args, "--isolated"] if args[0] == "scan" else list(args))
    assert result.exit_code in (0, 1), result.output
    return result.stdout


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One session of each line format far larger than the rest: with a small piece size the
    pool scans each in byte ranges (engine/scan/split.py), beside a few whole files."""
    root = tmp_path_factory.mktemp("huge")
    for source in sorted(p for p in FIXTURES.rglob("*.jsonl*") if p.is_file()):
        (root / f"big-{source.parent.name}-{source.name}").write_bytes(source.read_bytes() * 150)
    for source in sorted(FIXTURES.rglob("*.jsonl"))[:3]:
        (root / f"small-{source.name}").write_bytes(source.read_bytes())
    return root


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_scan_json_report_is_byte_identical_when_large_files_are_split(
    huge: Path, jobs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from thinkfix.engine.scan import split

    monkeypatch.setattr(split, "share", lambda total, workers: 64 << 10)  # every big file
    monkeypatch.setattr(split, "WINDOW", 2048)  # small: some pieces guess wrong and are redone
    one = _json("scan", "--output-format", "json", "--no-progress", "--jobs", "1", str(huge))
    assert json.loads(one)["summary"]["leaking_messages"] > 0
    plans = []
    monkeypatch.setattr(split, "plan", lambda *a, _p=split.plan: plans.append(_p(*a)) or plans[-1])
    assert (
        _json("scan", "--output-format", "json", "--no-progress", "--jobs", jobs, str(huge)) == one
    )
    assert sum(isinstance(t, split.Piece) for t in plans[-1]) > 10  # it did split


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_scan_json_report_is_byte_identical_for_any_jobs(corpus: Path, jobs: str) -> None:
    one = _json("scan", "--output-format", "json", "--no-progress", "--jobs", "1", str(corpus))
    assert json.loads(one)["summary"]["leaking_messages"] > 0
    assert (
        _json("scan", "--output-format", "json", "--no-progress", "--jobs", jobs, str(corpus))
        == one
    )


def test_repair_dry_run_json_report_is_byte_identical_for_any_jobs(
    corpus: Path, tmp_path: Path
) -> None:
    reports = []
    for jobs in ("1", "2"):
        report = tmp_path / f"report-{jobs}.json"
        _json(
            "repair",
            "--dry-run",
            "-q",
            "--jobs",
            jobs,
            "--report",
            str(report),
            "--report-format",
            "json",
            str(corpus),
        )
        reports.append(report.read_bytes())
    assert reports[0] == reports[1] and b'"path"' in reports[0]
