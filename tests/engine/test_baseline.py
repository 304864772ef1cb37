"""Baselines: identity without line numbers, sorted files, stale entries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.engine.conftest import FIXTURES, claude_line
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.telemetry.baseline import (
    BaselineError,
    apply,
    dumps,
    from_findings,
    load,
    loads,
)


def _write(tmp_path: Path, name: str, report_root: Path) -> Path:
    path = tmp_path / name
    report = scan([str(report_root)])
    path.write_bytes(dumps(from_findings(report.findings, str(tmp_path))))
    return path


def test_baseline_covers_everything_it_was_written_from(tmp_path: Path) -> None:
    sessions = tmp_path / "s"
    shutil.copytree(FIXTURES, sessions)
    baseline = load(str(_write(tmp_path, "b.json", sessions)))
    report = apply(scan([str(sessions)]), baseline)
    assert report.findings and all(f.baselined for f in report.findings)
    assert report.summary.baselined == len(report.findings)
    assert not report.stale_baseline
    assert report.exit_code() == 0


def test_baseline_file_is_sorted_and_versioned(tmp_path: Path) -> None:
    path = _write(tmp_path, "b.json", FIXTURES)
    text = path.read_text()
    doc = json.loads(text)
    assert doc["schema_version"] == 1
    assert list(doc["findings"]) == sorted(doc["findings"])
    assert text == json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert all("line" not in e and "timestamp" not in e for e in doc["findings"].values())


def test_baseline_new_leak_fails_and_moved_lines_do_not(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    old = claude_line("<think>old plan</think>Answer", uuid="a1")
    session.write_bytes(old)
    baseline = from_findings(scan([str(session)]).findings, str(tmp_path))
    # Same leak, now on line 3, plus one new leak.
    session.write_bytes(
        claude_line("hi", uuid="u0", role="user") * 2
        + old
        + claude_line("<think>new plan</think>Answer", uuid="a2")
    )
    report = apply(scan([str(session)]), baseline)
    assert [f.line for f in report.new_findings] == [4]
    assert report.exit_code() == 1


def test_baseline_stale_entries(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_bytes(claude_line("<think>a</think>b", uuid="a1"))
    two.write_bytes(claude_line("<think>c</think>d", uuid="a2", session="sess-2"))
    baseline = from_findings(scan([str(tmp_path)]).findings, str(tmp_path))
    one.write_bytes(claude_line("fixed", uuid="a1"))
    # Scanning only two.jsonl: one.jsonl's entry was not checked, so it is not stale.
    assert not apply(scan([str(two)]), baseline).stale_baseline
    (stale,) = apply(scan([str(tmp_path)]), baseline).stale_baseline
    assert stale.path == "one.jsonl"
    two.unlink()
    assert len(apply(scan([str(one)]), baseline).stale_baseline) == 2  # deleted file: stale


def test_baseline_rejects_bad_files(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="invalid JSON"):
        loads(b"{")
    with pytest.raises(BaselineError, match="schema_version"):
        loads(b'{"schema_version": 99, "findings": {}}')
    with pytest.raises(BaselineError, match="cannot read"):
        load(str(tmp_path / "missing.json"))
