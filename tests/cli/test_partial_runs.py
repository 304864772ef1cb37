"""Issue 11 item 2: one odd record or one bug never stops a run half way, never exits 1,
and the undo manifest is always written for what was changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.commands import invoke
from thinkfix.engine.repair import driver as repair_engine
from thinkfix.engine.repair import one_file as repair_one
from thinkfix.engine.scan import runner as scan_runner
from thinkfix.engine.scan import task as scan_engine
from thinkfix.formats import registry

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"


pytestmark = pytest.mark.usefixtures("isolated_cli")


def folder(tmp_path: Path, n: int = 12) -> Path:
    """`n` leaking sessions and the issue's `zz.jsonl` (`{"type":[]}`), sorted last."""
    root = tmp_path / "t"
    root.mkdir()
    for i in range(n):
        shutil.copy(LEAKY, root / f"s{i:02d}.jsonl")
    (root / "zz.jsonl").write_bytes(b'{"type":[]}\n')
    return root


def manifest_of(result: Result) -> dict[str, Any]:
    line = next(x for x in result.stderr.splitlines() if x.startswith("undo with: "))
    return json.loads(Path(line.split()[-1]).read_bytes())  # type: ignore[no-any-return]


def test_scan_odd_record_folder_scans_without_crash(tmp_path: Path) -> None:
    root = folder(tmp_path)
    result = invoke("scan", "--exit-zero", "--isolated", str(root))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_repair_odd_record_folder_repairs_every_file_with_manifest(
    tmp_path: Path, jobs: str
) -> None:
    root = folder(tmp_path)
    result = invoke("repair", "--in-place", "--isolated", "--jobs", jobs, str(root))
    assert result.exit_code == 1, result.output  # each copy keeps its one refused leak
    assert (root / "zz.jsonl").read_bytes() == b'{"type":[]}\n'
    entries = manifest_of(result)["files"]
    assert len(entries) == 12
    assert all(p.read_bytes() != LEAKY.read_bytes() for p in root.glob("s*.jsonl"))


@pytest.mark.parametrize("command", ["scan", "repair"])
def test_format_raising_on_a_record_makes_it_a_bad_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """Whatever a format's code raises on one record's fields, that record is reported as a
    bad record with its line and copied through untouched; the rest of the file is repaired."""
    root = tmp_path / "t"
    root.mkdir()
    odd = (
        b'{"type":"assistant","uuid":"odd","sessionId":"s","message":{"role":"assistant",'
        b'"content":[{"type":"text","text":"<think>x</think>y"}],"id":"m-odd"}}'
    )
    (root / "a.jsonl").write_bytes(LEAKY.read_bytes() + odd + b"\n")
    fmt = registry.get("claude-code")
    real = type(fmt).messages

    def picky(self: Any, record: Any) -> Any:
        if b'"odd"' in record.raw:
            raise TypeError("unhashable type: 'list'")
        return real(self, record)

    monkeypatch.setattr(type(fmt), "messages", picky)
    args = ["--exit-zero"] if command == "scan" else ["--in-place"]
    result = invoke(command, *args, "--isolated", "--jobs", "1", str(root))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    line = len(LEAKY.read_bytes().splitlines()) + 1
    assert f"a.jsonl:{line}" in result.output
    assert "unexpected type" in result.output
    after = (root / "a.jsonl").read_bytes()
    assert after.endswith(odd + b"\n")
    if command == "repair":
        assert after != LEAKY.read_bytes() + odd + b"\n"


def test_scan_internal_error_is_exit_2_for_that_file_and_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = folder(tmp_path, 3)
    real = scan_engine._scan_file

    def flaky(item: Any, options: Any) -> Any:
        if str(getattr(item, "path", "")).endswith("s01.jsonl"):
            raise RuntimeError("a bug met on this file")
        return real(item, options)

    monkeypatch.setattr(scan_engine, "_scan_file", flaky)
    result = invoke(
        "scan", "--exit-zero", "--isolated", "--jobs", "1", "--output-format", "json", str(root)
    )
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    assert doc["summary"]["files"] == 2
    assert any(
        "a bug met on this file" in e["message"] and e["path"].endswith("s01.jsonl")
        for e in doc["errors"]
    )


def test_cli_crash_exits_2_not_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Exit 1 means "leaks found": a crash must never look like one, even with --exit-zero."""

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setattr("thinkfix.cli.scan.scan", boom, raising=False)
    monkeypatch.setattr(scan_runner, "build_report", boom)
    root = folder(tmp_path, 1)
    result = invoke("scan", "--exit-zero", "--isolated", str(root))
    assert result.exit_code == 2, result.output
    assert "internal error" in result.stderr


def test_repair_internal_error_one_file_others_repaired_manifest_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = folder(tmp_path, 4)
    real = repair_one.plan_file

    def flaky(path: str, *args: Any) -> Any:
        if path.endswith("s02.jsonl"):
            raise TypeError("unhashable type: 'list'")
        return real(path, *args)

    monkeypatch.setattr(repair_one, "plan_file", flaky)
    result = invoke("repair", "--in-place", "--isolated", "--jobs", "1", str(root))
    assert result.exit_code == 2, result.output
    assert (root / "s02.jsonl").read_bytes() == LEAKY.read_bytes()
    assert len(manifest_of(result)["files"]) == 3


def test_repair_interrupted_run_still_writes_manifest_and_undoes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupt half way: the files already replaced are in a finished manifest."""
    root = folder(tmp_path, 5)
    real = repair_one._repair_file
    seen: list[str] = []

    def interrupted(job: Any) -> Any:
        if len(seen) == 3:
            raise KeyboardInterrupt
        seen.append(job.candidate.path)
        return real(job)

    monkeypatch.setattr(repair_one, "_repair_file", interrupted)
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        repair_engine.repair_paths(
            [str(root)],
            repair_engine.RepairOptions(
                mode=repair_engine.WriteMode.IN_PLACE, run_dir=str(run_dir)
            ),
        )
    manifest = run_dir / "manifest.json"
    assert manifest.exists()
    assert not (run_dir / "manifest.json.d").exists()
    assert len(json.loads(manifest.read_bytes())["files"]) == 3
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output
    assert all(p.read_bytes() == LEAKY.read_bytes() for p in root.glob("s*.jsonl"))
