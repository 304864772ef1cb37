"""io.safewrite: a file is replaced by a verified complete copy, or left exactly as it was."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.processes import run_python
from thinkfix.io import filestate, safewrite
from thinkfix.io.errors import ErrorKind


def _listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def test_fsio_atomic_write_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o600)
    written = safewrite.atomic_write(str(target), b"new\n")
    assert target.read_bytes() == b"new\n"
    assert os.stat(target).st_mode & 0o7777 == 0o600
    assert written == safewrite.Written(str(target), 4, filestate.sha256(b"new\n"))
    assert _listing(tmp_path) == ["s.jsonl"]


def test_fsio_atomic_write_explicit_mode_and_new_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "s.jsonl"
    safewrite.atomic_write(str(target), b"x", mode=0o640, make_dirs=True)
    assert target.read_bytes() == b"x" and os.stat(target).st_mode & 0o7777 == 0o640


def test_fsio_symlink_target_is_replaced_and_link_kept(tmp_path: Path) -> None:
    real = tmp_path / "store" / "s.jsonl"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    safewrite.atomic_write(str(link), b"new", follow_links=True)  # repair's way: asked for
    assert link.is_symlink() and real.read_bytes() == b"new"
    assert _listing(real.parent) == ["s.jsonl"]


def test_fsio_refused_verification_leaves_target_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old")
    seen: list[bytes] = []

    def refuse(data: bytes) -> None:
        seen.append(data)
        raise ValueError("not what was meant")

    with pytest.raises(filestate.VerifyError, match="not what was meant"):
        safewrite.atomic_write(str(target), b"new", verify=refuse)
    assert seen == [b"new"]  # verify saw the bytes read back from disk
    assert target.read_bytes() == b"old" and _listing(tmp_path) == ["s.jsonl"]


def test_fsio_watched_file_that_grew_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"line 1\n")
    snap = filestate.read_snapshot(str(target))
    with open(target, "ab") as fp:
        fp.write(b"line 2\n")
    with pytest.raises(filestate.FileChanged, match="grew from 7 to 14 bytes") as info:
        safewrite.atomic_write(str(target), b"repaired\n", watch=(snap.path, snap.stamp))
    assert info.value.kind is ErrorKind.CHANGED
    assert target.read_bytes() == b"line 1\nline 2\n"
    assert _listing(tmp_path) == ["s.jsonl"]


def test_fsio_watched_file_touched_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"a")
    snap = filestate.read_snapshot(str(target))
    os.utime(target, ns=(snap.stamp.mtime_ns + 10**9, snap.stamp.mtime_ns + 10**9))
    with pytest.raises(filestate.FileChanged, match="modification time"):
        safewrite.atomic_write(str(target), b"b", watch=(snap.path, snap.stamp))
    assert target.read_bytes() == b"a"


def test_fsio_interrupt_during_write_removes_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old")

    def interrupted(temp: str, final: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(safewrite, "_publish", interrupted)
    with pytest.raises(KeyboardInterrupt):
        safewrite.atomic_write(str(target), b"new")
    assert target.read_bytes() == b"old" and _listing(tmp_path) == ["s.jsonl"]


def test_fsio_unwritable_folder_is_a_write_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(b"old")
    os.chmod(folder, 0o500)
    try:
        with pytest.raises(filestate.WriteError, match="temporary file"):
            safewrite.atomic_write(str(folder / "s.jsonl"), b"new")
    finally:
        os.chmod(folder, 0o700)
    assert (folder / "s.jsonl").read_bytes() == b"old"


def test_fsio_read_snapshot_missing_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(filestate.WriteError) as info:
        filestate.read_snapshot(str(tmp_path / "nope.jsonl"))
    assert info.value.kind is ErrorKind.UNREADABLE


def test_fsio_sweep_removes_temps_of_dead_processes_only(tmp_path: Path) -> None:
    target = str(tmp_path / "s.jsonl")
    dead = run_python("import os; print(os.getpid())")
    dead_pid = int(dead.stdout)
    mine = filestate.temp_name(target)
    theirs = mine.replace(f".{os.getpid()}.", f".{dead_pid}.")
    other_host = mine.replace(f".{os.getpid()}.", ".1.").replace(filestate._host(), "elsewhere")
    for name in (mine, theirs, other_host):
        Path(name).write_bytes(b"partial")
    (tmp_path / "unrelated.jsonl").write_bytes(b"keep")
    assert filestate.sweep_stale(str(tmp_path)) == [theirs]
    assert sorted(os.listdir(tmp_path)) == sorted(
        os.path.basename(p) for p in (mine, other_host, str(tmp_path / "unrelated.jsonl"))
    )


def test_fsio_temp_names_are_hidden_and_not_session_names(tmp_path: Path) -> None:
    name = os.path.basename(filestate.temp_name(str(tmp_path / "a.jsonl")))
    assert name.startswith(".a.jsonl.") and name.endswith(filestate.TEMP_SUFFIX)


def test_fsio_remove_verified_refuses_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"ours")
    with pytest.raises(filestate.FileChanged):
        safewrite.remove_verified(str(path), filestate.sha256(b"something else"))
    assert path.exists()
    safewrite.remove_verified(str(path), filestate.sha256(b"ours"))
    assert not path.exists()


def _read_fifo_in_background(fifo: Path) -> tuple[object, list[bytes]]:
    import threading

    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    return reader, got


def test_fsio_write_output_writes_into_a_fifo_and_keeps_it(tmp_path: Path) -> None:
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    reader, got = _read_fifo_in_background(fifo)
    safewrite.write_output(str(fifo), b"report\n")
    reader.join(timeout=10)  # type: ignore[attr-defined]
    assert got == [b"report\n"]
    assert fifo.is_fifo() and _listing(tmp_path) == ["report.pipe"]


def test_fsio_write_output_replaces_a_regular_file_atomically(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.html"
    safewrite.write_output(str(target), b"one")
    safewrite.write_output(str(target), b"two")
    assert target.read_bytes() == b"two" and _listing(target.parent) == ["report.html"]


def test_fsio_write_output_names_the_target_when_it_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder is needed")
    with pytest.raises(filestate.WriteError, match="report.json"):
        safewrite.write_output(str(blocker / "report.json"), b"x")
    assert blocker.read_text() == "a file where a folder is needed"


def test_fsio_read_back_proves_the_hash_of_every_byte_in_the_same_read(tmp_path: Path) -> None:
    """`read_back` reads the temporary file once; what it leaves unread is still hashed, so a
    byte that differs from what was written fails even where the check did not look."""
    target = tmp_path / "s.jsonl"
    seen: list[bytes] = []

    def reads_the_head(fp: BinaryIO) -> None:
        seen.append(fp.read(3))

    safewrite.atomic_write_stream(
        str(target), lambda fp: fp.write(b"new bytes"), read_back=reads_the_head
    )
    assert target.read_bytes() == b"new bytes" and seen == [b"new"]

    def tail_flips_then_reads_the_head(fp: BinaryIO) -> None:
        (temp,) = [p for p in tmp_path.iterdir() if p.name != "s.jsonl"]
        temp.write_bytes(b"new bytez")  # the disk returns something else past the head
        seen.append(fp.read(3))

    with pytest.raises(filestate.VerifyError, match="did not read back as written"):
        safewrite.atomic_write_stream(
            str(target), lambda fp: fp.write(b"new BYTES"), read_back=tail_flips_then_reads_the_head
        )
    assert target.read_bytes() == b"new bytes" and _listing(tmp_path) == ["s.jsonl"]


def test_fsio_a_read_back_that_refuses_leaves_the_target(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old")

    def refuse(fp: BinaryIO) -> None:
        assert fp.read() == b"new"
        raise ValueError("not what was meant")

    with pytest.raises(filestate.VerifyError, match="not what was meant"):
        safewrite.atomic_write_stream(str(target), lambda fp: fp.write(b"new"), read_back=refuse)
    assert target.read_bytes() == b"old" and _listing(tmp_path) == ["s.jsonl"]


def test_fsio_durable_writes_sync_the_file_and_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    safewrite.atomic_write(str(tmp_path / "a"), b"x")
    assert len(synced) == 2
    safewrite.atomic_write(str(tmp_path / "b"), b"x", durable=False)
    assert len(synced) == 2 and (tmp_path / "b").read_bytes() == b"x"
    assert _listing(tmp_path) == ["a", "b"]
