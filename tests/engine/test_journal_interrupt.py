"""A run stopped at any point (Ctrl-C, a power cut) can still be undone (#26 item 4 review).

Ctrl-C raises KeyboardInterrupt between any two lines: in a journal append after its bytes
were synced, the journal file's next entry must not chain from a seal the file no longer
ends with; just after a file's rename, its backup and journal entry must stay (the file was
replaced). A power cut can leave zeros where an unsynced entry's bytes were to be (or
where a file's first write was to be): a torn tail, not tampering. And a run's end never
removes a journal it could not read: it is the only undo of the files the run replaced.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import run, tree_bytes
from tests.engine.test_journal_log import (
    _corpus,
    _dies_before_its_manifest,
    _files,
    _log,
    _started,
    _targets,
)
from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.ledger import restore
from thinkfix.engine.parallel import pool
from thinkfix.engine.repair import write as repair_write
from thinkfix.engine.repair.journal import finalise
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.io import safewrite
from thinkfix.io.errors import ErrorKind


@contextlib.contextmanager
def interrupted_at(line: int, files: set[str], within: str | None = None) -> Iterator[list[int]]:
    """Raise KeyboardInterrupt before the `line`-th line run in `files` (within a call of the
    function named `within`, if given), as a signal lands between two lines; the lines run
    so far are counted in the list yielded."""
    seen = [0]

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and (within is None or _inside(frame, within)):
            seen[0] += 1
            if seen[0] == line:
                raise KeyboardInterrupt  # the tracer is unset with it (CPython's trampoline)
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in files else None

    old = sys.gettrace()
    sys.settrace(calls)
    try:
        yield seen
    finally:
        sys.settrace(old)


def _inside(frame: FrameType | None, name: str) -> bool:
    while frame is not None:
        if frame.f_code.co_name == name and frame.f_code.co_filename == repair_write.__file__:
            return True
        frame = frame.f_back
    return False


# --- Ctrl-C in a journal append --------------------------------------------------------------


def test_an_append_interrupted_after_its_entry_was_synced_leaves_the_journal_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's case: KeyboardInterrupt as `os.fsync` returns. The process went on
    appending from the seal before the interrupted entry: its next entry failed its seal,
    and the one after made the whole journal refused as altered."""
    folder = _started(tmp_path)
    ledger_journal.journal(folder, 0, _files(0))
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        ledger_journal.journal(folder, 1, _files(1))
    monkeypatch.undo()
    for i in (2, 3):
        ledger_journal.journal(folder, i, _files(i))
    assert _targets(folder)[-2:] == ["/t/2", "/t/3"]
    assert set(_targets(folder)) <= {"/t/0", "/t/1", "/t/2", "/t/3"}


_LINES: dict[str, int] = {}  # the lines an uninterrupted append, or write, runs


def _lines_of_an_append() -> int:
    if "append" not in _LINES:
        with tempfile.TemporaryDirectory() as tmp:
            folder = _started(Path(tmp))
            with interrupted_at(0, {ledger_journal.__file__}) as seen:
                ledger_journal.journal(folder, 0, _files(0))
            _LINES["append"] = seen[0]
            ledger_journal.remove_journal(folder)
    return _LINES["append"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=st.integers(0, 2),
    first=st.booleans(),
    line=st.integers(1, 200),
    dropped=st.booleans(),
)
def test_an_append_interrupted_at_any_line_leaves_every_other_entry_readable(
    before: int, first: bool, line: int, dropped: bool
) -> None:
    """Wherever the interrupt lands, every entry appended before and after it is read back,
    and the interrupted one counts only if it is whole and not dropped after (`unjournal`,
    as a write whose journaling failed does)."""
    line = 1 + (line - 1) % _lines_of_an_append()
    with tempfile.TemporaryDirectory() as tmp:
        folder = _started(Path(tmp))
        for i in range(before):
            ledger_journal.journal(folder, i, _files(i))
        if first:  # the interrupted entry starts a journal file (with its header)
            ledger_journal.forget_logs(folder)
        with (
            contextlib.suppress(KeyboardInterrupt),
            interrupted_at(line, {ledger_journal.__file__}),
        ):
            ledger_journal.journal(folder, before, _files(before))
        if dropped:
            ledger_journal.unjournal(folder, before)
        for i in (before + 1, before + 2):
            ledger_journal.journal(folder, i, _files(i))
        got = _targets(folder)
        others = [f"/t/{i}" for i in [*range(before), before + 1, before + 2]]
        assert [t for t in got if t != f"/t/{before}"] == others
        if dropped:
            assert f"/t/{before}" not in got
        ledger_journal.remove_journal(folder)


def _interrupt_a_workers_journal_sync(monkeypatch: pytest.MonkeyPatch, flag: Path) -> None:
    """Ctrl-C in one pool worker as its second journal fsync returns (once in the run)."""
    parent, real_fsync, count = os.getpid(), os.fsync, [0]

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if os.getpid() == parent or not os.readlink(f"/proc/self/fd/{fd}").endswith(".log"):
            return
        count[0] += 1
        if count[0] == 2:
            with contextlib.suppress(FileExistsError):
                flag.touch(exist_ok=False)
                raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)
    # The patched fsync reaches the workers only by fork, which the pool chooses only in a
    # process without other threads; the suite's may have some (a Dask client's, a reader's
    # JavaScript engine), so fork is asked for here (a hang fails by the suite's timeout).
    monkeypatch.setattr(pool, "start_method", lambda: "fork")


def test_a_run_interrupted_in_a_workers_journal_sync_is_undone_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's run: the worker went on journaling from a stale seal, the journal was
    refused as altered, and the run's end took that as nothing replaced and removed it:
    files repaired and no undo."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to name a synced descriptor")
    corpus = _corpus(tmp_path / "in", 12)
    before = tree_bytes(corpus)
    _interrupt_a_workers_journal_sync(monkeypatch, tmp_path / "interrupted")
    with pytest.raises(KeyboardInterrupt):
        run([corpus], WriteMode.IN_PLACE, tmp_path, jobs=2)
    monkeypatch.undo()
    assert (tmp_path / "interrupted").exists()
    assert tree_bytes(corpus) != before
    manifest = tmp_path / "run" / mf.MANIFEST_NAME
    assert manifest.exists()
    assert restore.undo(str(manifest)).exit_code() is ExitCode.CLEAN
    assert tree_bytes(corpus) == before


# --- the run's end keeps a journal it cannot read --------------------------------------------


def _unreadable_journal(tmp_path: Path) -> str:
    folder = _started(tmp_path)
    for i in range(3):
        ledger_journal.journal(folder, i, _files(i))
    log = _log(folder)
    data = bytearray(log.read_bytes())
    data[data.index(b"/t/0")] ^= 1  # the first entry altered: whole entries follow it
    log.write_bytes(bytes(data))
    return folder


@pytest.mark.parametrize("replaced", [False, True], ids=["no-results", "results"])
def test_the_runs_end_keeps_a_journal_it_cannot_read_and_reports_it(
    tmp_path: Path, replaced: bool
) -> None:
    folder = _unreadable_journal(tmp_path)
    kept = {p.name: p.read_bytes() for p in Path(folder).iterdir()}
    corpus = _corpus(tmp_path / "in", 1)
    result = run([corpus], WriteMode.IN_PLACE, tmp_path / "other") if replaced else None
    manifest = str(tmp_path / "run" / mf.MANIFEST_NAME)
    errors, written = finalise(
        result.files if result is not None else [],
        options=RepairOptions(mode=WriteMode.IN_PLACE),
        manifest_path=manifest,
        journal_dir=folder,
        run_dir=str(tmp_path / "run"),
        backup_dir=None,
        tool_version="test",
    )
    assert {p.name: p.read_bytes() for p in Path(folder).iterdir()} == kept
    assert len(errors) == 1 and errors[0].kind is ErrorKind.WRITE_FAILED
    assert folder in errors[0].message and "kept" in errors[0].message
    assert "cannot be read" in errors[0].message and "entry 1" in errors[0].message
    # What the run itself replaced is in a manifest all the same.
    assert os.path.exists(manifest) is replaced
    assert len(written) == (1 if replaced else 0)


# --- a power cut: zeros where bytes were to be -----------------------------------------------


def test_a_zeroed_entry_start_is_a_torn_tail_whatever_follows(tmp_path: Path) -> None:
    """An entry is never empty: a length of 0 is an entry that never reached the disk, though
    a later page of it did."""
    folder = _started(tmp_path)
    for i in range(2):
        ledger_journal.journal(folder, i, _files(i))
    with open(_log(folder), "ab") as fp:
        fp.write(b"\0" * 4096 + b'sion","n":2}]}')
    assert _targets(folder) == ["/t/0", "/t/1"]


def test_an_entry_that_fails_its_seal_mid_file_is_refused_as_altered_or_damaged(
    tmp_path: Path,
) -> None:
    folder = _unreadable_journal(tmp_path)
    with pytest.raises(mf.ManifestError, match="entry 1 .*altered or damaged"):
        ledger_journal.journal_entries(folder)


# --- Ctrl-C just after a file's rename -------------------------------------------------------


def _sessions(corpus: Path) -> dict[str, bytes]:
    """The corpus's files but a stopped write's second name of a replaced inode
    (`livewriters.OldInode`, a `.thinkfix-tmp` the next run there sweeps)."""
    return {n: b for n, b in tree_bytes(corpus).items() if not n.endswith(".thinkfix-tmp")}


def test_an_interrupt_just_after_a_files_rename_keeps_its_backup_and_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder sync after the rename is interrupted: the file holds the repair's bytes,
    so its backup and its journal entry must stay (they were removed: no undo for it)."""
    corpus = _corpus(tmp_path / "in", 3).resolve()
    before = _sessions(corpus)
    real, count = safewrite.fsync_folder, [0]

    def fsync_folder(folder: str) -> None:
        real(folder)
        if folder == str(corpus):
            count[0] += 1
            if count[0] == 2:
                raise KeyboardInterrupt

    monkeypatch.setattr(safewrite, "fsync_folder", fsync_folder)
    with pytest.raises(KeyboardInterrupt):
        run([corpus], WriteMode.IN_PLACE, tmp_path)
    monkeypatch.undo()
    changed = [n for n, b in _sessions(corpus).items() if before[n] != b]
    assert len(changed) == 2
    assert len(list((tmp_path / "run" / "backup").rglob("*.jsonl"))) == 2
    manifest = tmp_path / "run" / mf.MANIFEST_NAME
    assert len(ledger_journal.load_manifest(str(manifest))["files"]) == 2
    assert restore.undo(str(manifest)).exit_code() is ExitCode.CLEAN
    assert _sessions(corpus) == before


_WRITE_FILES = {repair_write.__file__, safewrite.__file__, ledger_journal.__file__}


def _second_write_stopped_at(root: Path, line: int) -> list[int]:
    """Repair three files in place, Ctrl-C before the `line`-th line of the second one's
    write (0: never); the lines that write ran."""
    corpus = _corpus(root / "in", 3)
    real, count, seen = repair_write.write, [0], []

    def second(*args: Any) -> Any:
        count[0] += 1
        if count[0] != 2:
            return real(*args)
        with interrupted_at(line, _WRITE_FILES, within="write") as lines:
            try:
                return real(*args)
            finally:
                seen.append(lines[0])

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(repair_write, "write", second)
        with contextlib.suppress(KeyboardInterrupt):
            run([corpus], WriteMode.IN_PLACE, root)
    return seen


def _lines_of_a_write() -> int:
    if "write" not in _LINES:
        with tempfile.TemporaryDirectory() as tmp:
            _LINES["write"] = _second_write_stopped_at(Path(tmp).resolve(), 0)[0]
    return _LINES["write"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.integers(1, 10_000))
def test_an_interrupt_at_any_line_of_a_files_write_is_undone_exactly(line: int) -> None:
    """Wherever Ctrl-C lands while the second of three files is written, every file is
    either as it was or undone exactly from what the run left."""
    line = 1 + (line - 1) % _lines_of_a_write()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        before = _sessions(_corpus(root / "before", 3))
        _second_write_stopped_at(root, line)
        corpus = root / "in"
        if _sessions(corpus) != before:
            assert restore.undo(str(root / "run" / mf.MANIFEST_NAME)).exit_code() is (
                ExitCode.CLEAN
            )
        assert _sessions(corpus) == before


# --- undo of a run folder --------------------------------------------------------------------


@pytest.mark.parametrize("died", [False, True], ids=["finished", "killed"])
def test_undo_follows_a_run_folder_as_its_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, died: bool
) -> None:
    """`undo RUN_DIR` followed a finished run's folder (its manifest.json) but failed on a
    killed run's ("Is a directory"), whose folder holds only the journal."""
    corpus = _corpus(tmp_path / "in", 2)
    before = tree_bytes(corpus)
    if died:
        _dies_before_its_manifest(monkeypatch)
    run([corpus], WriteMode.IN_PLACE, tmp_path)
    monkeypatch.undo()
    assert (tmp_path / "run" / mf.MANIFEST_NAME).exists() is not died
    assert restore.undo(str(tmp_path / "run")).exit_code() is ExitCode.CLEAN
    assert tree_bytes(corpus) == before
