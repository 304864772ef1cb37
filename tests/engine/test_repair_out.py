"""`repair --out` pays for durability where a power cut could lose bytes, and no more.

A run into a folder holding none of its outputs replaces nothing: each output is synced
with its folder (the floor), and its journal entry, which could only ever undo a file the
run created, is written whole but not synced. A run that replaces an earlier output keeps
the synced journal (the entry is durable before the file it describes changes), and a
file that appears at an output path during a run that replaces nothing is left alone
(reported, not overwritten).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.engine.conftest import chained_claude_line
from tests.engine.repair_helpers import run
from tests.spies import first_args, listed_folders
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair import write as repair_write
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode

FILES = 4


def _corpus(root: Path) -> Path:
    """FILES Claude Code sessions, each with one leaking answer."""
    root.mkdir()
    for i in range(FILES):
        leak = [{"type": "text", "text": f"<think>check {i}</think>It is {i}."}]
        lines = [
            chained_claude_line(0, "user", "what is it?"),
            chained_claude_line(1, "assistant", leak),
        ]
        (root / f"s{i}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return root


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    return first_args(monkeypatch, os, "fsync")


def test_out_into_a_fresh_folder_syncs_each_output_and_its_folder_only(
    tmp_path: Path, synced: list[int]
) -> None:
    out = tmp_path / "out"
    result = run([_corpus(tmp_path / "in")], WriteMode.OUT, tmp_path, out_dir=str(out))
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * FILES
    # Per file: the output and its folder. Per run: the journal's header and the manifest
    # (each with its folder), and the undo key the first time one is made.
    assert len(synced) <= 2 * FILES + 5
    assert result.manifest_path is not None
    undone = restore.undo(result.manifest_path)
    assert len(undone.files) == FILES and not any(out.rglob("*.jsonl"))


def test_out_into_a_fresh_folder_syncs_that_folder_once_before_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each fresh output's bytes are synced before its rename; its folder's entry once for
    the run, before the manifest that names the outputs (#26 item 4: a folder sync per file
    was ~1-2 ms each). A crash before then loses outputs whose originals are untouched."""
    synced: list[str] = []
    real = os.fsync

    def naming(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.isdir("/proc/self/fd") else "")
        real(fd)

    monkeypatch.setattr(os, "fsync", naming)
    out = tmp_path / "out"
    result = run([_corpus(tmp_path / "in")], WriteMode.OUT, tmp_path, out_dir=str(out))
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * FILES
    assert result.manifest_path is not None
    if not any(synced):
        pytest.skip("no /proc/self/fd to name a synced descriptor")
    folder = os.path.realpath(out)
    assert synced.count(folder) == 1
    outputs = [i for i, p in enumerate(synced) if p.startswith(folder + os.sep)]
    assert len(outputs) == FILES  # each output's bytes, before its rename
    run_folder, name = os.path.split(os.path.realpath(result.manifest_path))
    manifest = next(  # the manifest's temporary file, synced before its rename
        i for i, p in enumerate(synced) if p.startswith(os.path.join(run_folder, f".{name}."))
    )
    assert max(outputs) < synced.index(folder) < manifest


def test_a_folder_is_swept_once_per_run_not_once_per_file_written_into_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dead processes' temporary files are looked for once per folder and run: a listing per
    file written made a run quadratic in the files of one folder (2,000 sessions into one
    --out folder: 6,000 listings, 10 million names matched, 11 s of a 29 s run)."""
    listed = listed_folders(monkeypatch)
    out = tmp_path / "out"
    result = run([_corpus(tmp_path / "in")], WriteMode.OUT, tmp_path, out_dir=str(out))
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * FILES
    assert result.manifest_path is not None
    journal = os.path.realpath(result.manifest_path) + ".d"
    assert listed.count(os.path.realpath(out)) <= 1
    assert listed.count(journal) <= 2  # swept as the run starts, read as it ends


def test_out_over_an_earlier_output_keeps_the_synced_journal(
    tmp_path: Path, synced: list[int]
) -> None:
    corpus = _corpus(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "s0.jsonl").write_bytes(b"an earlier output\n")
    result = run([corpus], WriteMode.OUT, tmp_path, out_dir=str(out))
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * FILES
    # Per output: its bytes, its folder and its journal entry (synced before the rename:
    # test_journal_log.py checks the order).
    assert len(synced) >= 3 * FILES
    assert result.manifest_path is not None
    restore.undo(result.manifest_path)
    assert (out / "s0.jsonl").read_bytes() == b"an earlier output\n"


def test_a_file_that_appears_at_an_output_path_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path / "in")
    out = tmp_path / "out"
    real = repair_write._existing

    def someone_writes_first(path: str, fresh_only: bool = False) -> object:
        if path.endswith("s1.jsonl"):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_bytes(b"not ours\n")
        return real(path, fresh_only)

    monkeypatch.setattr(repair_write, "_existing", someone_writes_first)
    result = run([corpus], WriteMode.OUT, tmp_path, out_dir=str(out))
    statuses = {Path(f.path).name: f.status for f in result.files}
    assert statuses["s1.jsonl"] is FileStatus.FAILED
    assert "already exists; not overwritten" in result.files[1].errors[0].message
    assert (out / "s1.jsonl").read_bytes() == b"not ours\n"
    assert all(statuses[f"s{i}.jsonl"] is FileStatus.REPAIRED for i in (0, 2, 3))
    assert result.exit_code() is ExitCode.ERROR
