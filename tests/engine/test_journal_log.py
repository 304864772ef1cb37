"""The undo journal is one append-only file per writing process of a run (#26 item 4).

Each output used to be journaled as two files (`<n>.json.hmac`, then `<n>.json`), each an
atomic write: four creations and renames per output in the run's folder (~0.4 ms a creation
in a state folder holding many runs). Now a process appends each file's entries, length-
prefixed and sealed in a chain, to its own journal file: one creation per process and run.
A torn last entry (a killed or powered-off writer) is dropped as the journal is read; an
altered, reordered or moved entry is refused; the entry is durable before the file it
describes is replaced; and journals of the old layout, written by earlier versions, still
undo.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import chained_claude_line
from tests.engine.repair_helpers import run, tree_bytes
from thinkfix.engine.ledger import integrity, restore
from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.io import filestate, safewrite


def _corpus(root: Path, count: int, leaking: Sequence[bool] | None = None) -> Path:
    """`count` Claude Code sessions, each with one answer (leaking unless told otherwise)."""
    root.mkdir(parents=True)
    for i in range(count):
        text = f"<think>check {i}</think>It is {i}." if leaking is None or leaking[i] else "No."
        lines = [
            chained_claude_line(0, "user", "what is it?"),
            chained_claude_line(1, "assistant", [{"type": "text", "text": text}]),
        ]
        (root / f"s{i}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return root


def _dies_before_its_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's manifest cannot be written: its journal is what undo follows (a run that
    died after replacing its files reads the same)."""

    def fails(path: str, doc: dict[str, Any]) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ledger_journal, "write_manifest", fails)


def _journal_dir(tmp: Path) -> Path:
    return tmp / "run" / (mf.MANIFEST_NAME + mf.JOURNAL_SUFFIX)


def _started(tmp: Path) -> str:
    folder = str(_journal_dir(tmp))
    ledger_journal.start_journal(folder, roots=[str(tmp)], mode="in-place", backup_dir=None)
    return folder


def _files(index: int) -> list[dict[str, Any]]:
    """Entries of one file as `journal_entries` gives them back (it checks no schema)."""
    return [{"target": f"/t/{index}", "role": "session", "n": index}]


def _log(folder: str) -> Path:
    (log,) = [p for p in Path(folder).iterdir() if p.suffix == ".log"]
    return log


def _targets(folder: str) -> list[str]:
    return [e["target"] for e in ledger_journal.journal_entries(folder)]


# --- one file per run ------------------------------------------------------------------------


def test_a_run_journals_every_file_into_one_file_created_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path / "in", 6)
    before = tree_bytes(corpus)
    _dies_before_its_manifest(monkeypatch)
    folder = _journal_dir(tmp_path)
    created: list[str] = []
    real_open = os.open

    def opening(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and str(path).startswith(str(folder)):
            created.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", opening)
    result = run([corpus], WriteMode.IN_PLACE, tmp_path)
    monkeypatch.undo()
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * 6
    # The sealed header (a temporary file renamed) and the journal: two creations, not 13.
    assert len(created) == 2, created
    assert sorted(os.listdir(folder)) == ["1.log", ledger_journal.HEADER_NAME]
    assert len(ledger_journal.journal_entries(str(folder))) == 6
    assert result.manifest_path is not None
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert tree_bytes(corpus) == before


def test_each_worker_journals_into_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes never append to one file: a killed writer's partial entry could then
    sit between another's whole ones, where it can be neither read past nor dropped."""
    corpus = _corpus(tmp_path / "in", 8)
    before = tree_bytes(corpus)
    _dies_before_its_manifest(monkeypatch)
    result = run([corpus], WriteMode.IN_PLACE, tmp_path, jobs=2)
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * 8
    logs = [n for n in os.listdir(_journal_dir(tmp_path)) if n.endswith(".log")]
    assert 1 <= len(logs) <= 2
    assert result.manifest_path is not None
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert tree_bytes(corpus) == before


# --- torn, altered and foreign entries -------------------------------------------------------


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(1, 4), data=st.data())
def test_a_torn_last_entry_is_dropped_and_whole_ones_kept(count: int, data: st.DataObject) -> None:
    """Cut at any point, then zeros or not: a power cut can keep a file's new length but not
    its bytes (the review of #26 item 4: zeros after whole entries, or where a file's very
    first write was, were refused as tampering)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = _started(Path(tmp))
        ends = []
        for i in range(count):
            ledger_journal.journal(folder, i, _files(i), durable=False)
            ends.append(_log(folder).stat().st_size)
        whole = _log(folder).read_bytes()
        cut = data.draw(st.integers(0, len(whole)), label="cut")
        zeros = data.draw(st.sampled_from([0, len(whole) - cut]) | st.integers(0, 300), "zeros")
        _log(folder).write_bytes(whole[:cut] + b"\0" * zeros)
        kept = [f"/t/{i}" for i, end in enumerate(ends) if end <= cut]
        assert _targets(folder) == kept
        ledger_journal.remove_journal(folder)


@pytest.mark.parametrize(
    "tail",
    [
        b"\0" * 3,  # the start of a length
        (1 << 20).to_bytes(8, "big") + b"\0" * 40,  # a length past the end
        (8).to_bytes(8, "big") + b"\0" * 40,  # a whole entry of zeros, as a power cut can leave
    ],
)
def test_a_torn_tail_after_whole_entries_is_dropped(tmp_path: Path, tail: bytes) -> None:
    folder = _started(tmp_path)
    for i in range(2):
        ledger_journal.journal(folder, i, _files(i))
    with open(_log(folder), "ab") as fp:
        fp.write(tail)
    assert _targets(folder) == ["/t/0", "/t/1"]


def _altered(folder: str, how: Callable[[bytes, list[int]], bytes]) -> None:
    log = _log(folder)
    data = log.read_bytes()
    log.write_bytes(how(data, _starts(data)))


def _starts(data: bytes) -> list[int]:
    """Where each entry of a journal file starts (the header is one line)."""
    at, out = data.index(b"\n") + 1, []
    while at < len(data):
        out.append(at)
        at += 8 + 32 + int.from_bytes(data[at : at + 8], "big")
    return out


@pytest.mark.parametrize(
    "how",
    [
        # a byte of the first entry's text changed
        lambda d, s: d[: s[0] + 45] + bytes([d[s[0] + 45] ^ 1]) + d[s[0] + 46 :],
        # the first two entries swapped
        lambda d, s: d[: s[0]] + d[s[1] : s[2]] + d[s[0] : s[1]] + d[s[2] :],
        # the middle entry removed
        lambda d, s: d[: s[1]] + d[s[2] :],
    ],
    ids=["altered", "reordered", "removed"],
)
def test_an_entry_altered_reordered_or_removed_is_refused(
    tmp_path: Path, how: Callable[[bytes, list[int]], bytes]
) -> None:
    folder = _started(tmp_path)
    for i in range(4):  # the last one's seal failing is a torn entry: dropped (above)
        ledger_journal.journal(folder, i, _files(i))
    _altered(folder, how)
    with pytest.raises(mf.ManifestError, match="does not match"):
        ledger_journal.journal_entries(folder)


def test_an_entry_moved_from_another_journal_is_refused(tmp_path: Path) -> None:
    one, two = _started(tmp_path / "a"), _started(tmp_path / "b")
    for folder in (one, two):
        for i in range(2):
            ledger_journal.journal(folder, i, _files(i))
    theirs = _log(two).read_bytes()
    start = _starts(theirs)[0]
    mine = _log(one).read_bytes()
    _log(one).write_bytes(mine[: _starts(mine)[1]] + theirs[start : _starts(theirs)[1]] + mine)
    with pytest.raises(mf.ManifestError, match="does not match"):
        ledger_journal.journal_entries(one)


def test_a_journal_sealed_with_another_key_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "one"))
    folder = _started(tmp_path)
    ledger_journal.journal(folder, 0, _files(0))
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "two"))
    integrity.load_key(str(tmp_path / "two"), create=True)
    with pytest.raises(mf.ManifestError, match="another undo key"):
        ledger_journal.journal_entries(folder)


def test_a_journal_file_thinkfix_did_not_write_is_refused(tmp_path: Path) -> None:
    folder = _started(tmp_path)
    (Path(folder) / "1.log").write_bytes(b"hello, this is not a journal of thinkfix at all\n")
    with pytest.raises(mf.ManifestError, match="no journal header"):
        ledger_journal.journal_entries(folder)


def test_an_append_that_fails_midway_leaves_the_journal_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write cut short (a full disk) is cut back off the file, the entry is refused (so its
    file is not replaced), and the next entry goes on to a new journal file."""
    folder = _started(tmp_path)
    ledger_journal.journal(folder, 0, _files(0))
    whole = _log(folder).stat().st_size
    real_write = os.write

    def half_then_full(fd: int, data: Any) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(filestate.WriteError, match="cannot journal"):
        ledger_journal.journal(folder, 1, _files(1))
    monkeypatch.undo()
    assert _log(folder).stat().st_size == whole  # the half entry cut back off
    assert _targets(folder) == ["/t/0"]
    ledger_journal.journal(folder, 2, _files(2))
    assert sorted(n for n in os.listdir(folder) if n.endswith(".log")) == ["1.log", "2.log"]
    assert _targets(folder) == ["/t/0", "/t/2"]


# --- what counts: a file's last entry --------------------------------------------------------


def test_a_dropped_file_counts_no_more_and_a_later_entry_counts_again(tmp_path: Path) -> None:
    folder = _started(tmp_path)
    for i in range(3):
        ledger_journal.journal(folder, i, _files(i))
    ledger_journal.unjournal(folder, 1)
    assert _targets(folder) == ["/t/0", "/t/2"]
    ledger_journal.journal(folder, 1, [{"target": "/t/again"}])
    assert _targets(folder) == ["/t/0", "/t/again", "/t/2"]


def _journal_in_a_child(folder: str, index: int, target: str) -> None:
    ledger_journal.journal(folder, index, [{"target": target}])


def test_a_later_process_entry_for_a_file_wins(tmp_path: Path) -> None:
    """A worker that died after journaling a file its redo journals again: the redo's entry
    (in a journal file made after the worker's) is the one that counts, as the old layout's
    rewrite of `<n>.json` made it."""
    folder = _started(tmp_path)
    fork = multiprocessing.get_context("fork")
    child = fork.Process(target=_journal_in_a_child, args=(folder, 0, "/t/dead-worker"))
    child.start()
    child.join()
    assert child.exitcode == 0
    ledger_journal.journal(folder, 0, [{"target": "/t/redo"}])
    assert sorted(os.listdir(folder)) == ["1.log", "2.log", ledger_journal.HEADER_NAME]
    assert _targets(folder) == ["/t/redo"]


# --- durability: the entry is on disk before its file is replaced ----------------------------


def test_each_entry_is_synced_before_the_file_it_describes_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to name a synced descriptor")
    corpus = _corpus(tmp_path / "in", 4).resolve()
    folder = str(_journal_dir(tmp_path.resolve()))
    durable: set[str] = set()  # the targets journaled when the journal file was last synced
    folder_synced: list[bool] = []
    real_fsync, real_publish = os.fsync, safewrite._publish

    def fsync(fd: int) -> None:
        real_fsync(fd)
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.endswith(".log") and os.path.dirname(name) == folder:
            durable.update(_targets(folder))
        elif name == folder and durable:
            folder_synced.append(True)

    def publish(temp: str, target: str) -> None:
        if target.startswith(str(corpus)):  # not a backup
            assert target in durable, f"{target} replaced before its journal entry was synced"
            assert folder_synced, "the journal file's name was not synced before a rename"
        real_publish(temp, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(safewrite, "_publish", publish)
    result = run([corpus], WriteMode.IN_PLACE, tmp_path.resolve())
    assert [f.status for f in result.files] == [FileStatus.REPAIRED] * 4, result.all_errors
    assert len(durable) == 4


# --- the old layout: journals written by earlier versions ------------------------------------


def _old_journal(
    journal_dir: str, index: int, entries: Sequence[dict[str, Any]], *, durable: bool = True
) -> None:
    """The journal as thinkfix wrote it before #26 item 4: each file's entries an indented
    JSON list in `<n>.json`, its detached seal in `<n>.json.hmac` (written first)."""
    path = os.path.join(journal_dir, f"{index:08d}.json")
    data = mf.document_bytes(list(entries))
    key = integrity.load_key(mf.state_dir(), create=True)
    safewrite.atomic_write(path + integrity.MAC_SUFFIX, integrity.seal_bytes(data, key))
    safewrite.atomic_write(path, data)


def test_a_run_journaled_in_the_old_layout_still_undoes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _corpus(tmp_path / "in", 3)
    before = tree_bytes(corpus)
    monkeypatch.setattr(ledger_journal, "journal", _old_journal)
    _dies_before_its_manifest(monkeypatch)
    result = run([corpus], WriteMode.IN_PLACE, tmp_path)
    monkeypatch.undo()
    folder = _journal_dir(tmp_path)
    assert sorted(n for n in os.listdir(folder) if n.endswith(".json")) == [
        "00000000.json",
        "00000001.json",
        "00000002.json",
    ]
    assert not [n for n in os.listdir(folder) if n.endswith(".log")]
    assert result.manifest_path is not None
    doc = ledger_journal.load_manifest(result.manifest_path)
    assert doc["journal"] and len(doc["files"]) == 3
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert tree_bytes(corpus) == before


def test_an_old_layout_entry_whose_seal_fails_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _started(tmp_path)
    _old_journal(folder, 0, _files(0))
    path = Path(folder) / "00000000.json"
    path.write_bytes(path.read_bytes().replace(b"/t/0", b"/t/9"))
    with pytest.raises(mf.ManifestError, match="does not match"):
        ledger_journal.journal_entries(folder)


# --- the property: undo after repair is exact, however many files ----------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leaking=st.lists(st.booleans(), max_size=7), died=st.booleans())
def test_undo_after_repair_restores_every_byte(leaking: list[bool], died: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as monkeypatch:
        root = Path(tmp)
        corpus = _corpus(root / "in", len(leaking), leaking)
        before = tree_bytes(corpus)
        if died:
            _dies_before_its_manifest(monkeypatch)
        result = run([corpus], WriteMode.IN_PLACE, root)
        monkeypatch.undo()
        repaired = [f for f in result.files if f.status is FileStatus.REPAIRED]
        assert len(repaired) == sum(leaking)
        if not repaired:
            assert result.manifest_path is None and tree_bytes(corpus) == before
            return
        assert result.manifest_path is not None
        assert os.path.exists(result.manifest_path) is not died
        assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
        assert tree_bytes(corpus) == before
