"""`repair --in-place`'s backups (#26 item 4): copied by the kernel and proven by one hashed
read back against the hash the survey took of the original; each folder written into (the
sessions' own, the backup's) looked through for dead processes' temporary files once per
run, not once per file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.engine.conftest import chained_claude_line
from tests.engine.repair_helpers import run
from tests.spies import listed_folders
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.io import safewrite

FILES = 4


def _corpus(root: Path) -> dict[Path, bytes]:
    """FILES Claude Code sessions in one folder, each with one leaking answer."""
    root.mkdir()
    out = {}
    for i in range(FILES):
        leak = [{"type": "text", "text": f"<think>check {i}</think>It is {i}."}]
        lines = [
            chained_claude_line(0, "user", "what is it?"),
            chained_claude_line(1, "assistant", leak),
        ]
        path = root / f"s{i}.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        out[path] = path.read_bytes()
    return out


def test_in_place_lists_each_folder_once_and_backs_up_every_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    originals = _corpus(tmp_path / "in")
    listed = listed_folders(monkeypatch)
    result = run([tmp_path / "in"], WriteMode.IN_PLACE, tmp_path, active_seconds=0)
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * FILES
    backups = sorted((tmp_path / "run").rglob("s*.jsonl"))
    assert [p.read_bytes() for p in backups] == [originals[p] for p in sorted(originals)]
    assert listed.count(os.path.realpath(tmp_path / "in")) <= 1
    assert listed.count(os.path.realpath(backups[0].parent)) <= 1
    assert result.manifest_path is not None
    restore.undo(result.manifest_path)
    assert {p: p.read_bytes() for p in originals} == originals


def _damaged_once(name: str) -> Callable[[str], tuple[int, str]]:
    """`safewrite.hash_file` whose first file named after `name` was changed on disk."""
    real, done = safewrite.hash_file, []

    def hash_file(path: str) -> tuple[int, str]:
        if not done and name in os.path.basename(path):
            done.append(path)
            Path(path).write_bytes(Path(path).read_bytes()[:-1] + b"X")
        return real(path)

    return hash_file


def test_a_backup_that_reads_back_otherwise_leaves_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    originals = _corpus(tmp_path / "in")
    monkeypatch.setattr(safewrite, "hash_file", _damaged_once("s0.jsonl"))
    result = run([tmp_path / "in"], WriteMode.IN_PLACE, tmp_path, active_seconds=0)
    status = {Path(f.path).name: f for f in result.files}
    assert status["s0.jsonl"].status is FileStatus.FAILED
    assert "did not read back as written" in status["s0.jsonl"].errors[0].message
    assert (tmp_path / "in" / "s0.jsonl").read_bytes() == originals[tmp_path / "in" / "s0.jsonl"]
    assert not [p for p in (tmp_path / "run").rglob("s0.jsonl*")]  # no backup kept of it
    assert all(status[f"s{i}.jsonl"].status is FileStatus.REPAIRED for i in range(1, FILES))
