"""A repaired file is proven by one read back (#26 item 4): an uncompressed output is compared
byte for byte with the plan (the original's untouched runs and the new records), and hashed once:
as it is written, where the survey kept the original and the output is written from it, else as
it is read back (the original's runs copied by the kernel, unseen by the writer); a file copied
as it is is compared with the bytes the survey kept (or, where it kept none, hashed once as it is
read back and held to the hash the survey took of the original). Whatever differs on disk,
anywhere, is still refused and the file left as it was."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import FIXTURES, run
from thinkfix.engine.repair.model import FileStatus, RepairResult, WriteMode
from thinkfix.engine.repair.source import Source
from thinkfix.engine.repair.verify import same_bytes
from thinkfix.io import filestate, safewrite

PI = next(p for p in sorted((FIXTURES / "pi").iterdir()) if p.suffix == ".jsonl")


def _damaged(damage: Callable[[bytes], bytes]) -> Callable[..., None]:
    """`safewrite._read_back` once the temporary file was changed on disk by `damage`."""
    real = safewrite._read_back

    def read_back(target: str, temp: str, *args: Any) -> None:
        data = Path(temp).read_bytes()
        Path(temp).write_bytes(damage(data))
        real(target, temp, *args)

    return read_back


def _flip_at(fraction: float) -> Callable[[bytes], bytes]:
    def flip(data: bytes) -> bytes:
        at = min(len(data) - 1, int(len(data) * fraction))
        return data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :]

    return flip


def _spy_on_hashing(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each read back of the run was hashed, in order."""
    seen: list[bool] = []
    real_init = safewrite._HashingReader.__init__

    def reader(self: safewrite._HashingReader, fp: Any, hashed: bool = True) -> None:
        seen.append(hashed)
        real_init(self, fp, hashed)

    monkeypatch.setattr(safewrite._HashingReader, "__init__", reader)
    return seen


@pytest.mark.parametrize(
    "damage",
    [_flip_at(0.0), _flip_at(0.5), _flip_at(0.999), lambda d: d + b"\n", lambda d: d[:-1]],
    ids=["first byte", "middle", "last byte", "one more", "one less"],
)
@pytest.mark.parametrize("mode", [WriteMode.OUT, WriteMode.IN_PLACE])
@pytest.mark.parametrize("kept", [True, False], ids=["kept", "not kept"])
def test_a_byte_changed_on_disk_is_refused_by_the_compare(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    damage: Callable[[bytes], bytes],
    mode: WriteMode,
    kept: bool,
) -> None:
    """Whether the survey kept the original (the output written from it, hashed as written)
    or not (its runs copied by the kernel, the read back hashed)."""
    work = tmp_path / "sessions" / PI.name
    work.parent.mkdir()
    work.write_bytes(PI.read_bytes())
    if not kept:
        monkeypatch.setattr(
            Source, "survey_stream", lambda self, hashed=False: self.stream(hashed=hashed)
        )
    seen = _spy_on_hashing(monkeypatch)
    monkeypatch.setattr(safewrite, "_read_back", _damaged(damage))
    out = tmp_path / "out"
    result = run([work], mode, tmp_path, out_dir=str(out) if mode is WriteMode.OUT else None)
    (file,) = result.files
    # one read back, hashed only where the writer did not see every byte (the kernel copied)
    assert seen == [not kept]
    assert file.status is FileStatus.FAILED
    assert "not the planned ones" in file.errors[0].message or "changed near byte" in (
        file.errors[0].message
    )
    assert work.read_bytes() == PI.read_bytes()
    assert sorted(os.listdir(work.parent)) == [PI.name]
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))


def test_an_output_read_back_intact_is_published_with_the_hash_of_its_bytes(
    tmp_path: Path,
) -> None:
    work = tmp_path / "sessions" / PI.name
    work.parent.mkdir()
    work.write_bytes(PI.read_bytes())
    result = run([work], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    (file,) = result.files
    assert file.status is FileStatus.REPAIRED and file.output is not None
    (entry,) = [e for e in file.manifest_entries if e.get("role") == "session"]
    size, digest = safewrite.hash_file(file.output)
    assert entry["after"]["sha256"] == digest == entry["content"]["after_sha256"]
    assert entry["after"]["size"] == size


_COPY_DAMAGE = [_flip_at(0.0), _flip_at(0.999), lambda d: d + b"\n", lambda d: d[:-1]]


def _clean_session(tmp_path: Path) -> tuple[Path, bytes]:
    clean = b"".join(PI.read_bytes().splitlines(keepends=True)[:4])
    work = tmp_path / "sessions" / "clean.jsonl"
    work.parent.mkdir()
    work.write_bytes(clean)
    return work, clean


@pytest.mark.parametrize("damage", _COPY_DAMAGE)
def test_a_copy_is_compared_with_the_bytes_the_survey_kept_and_not_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[bytes], bytes]
) -> None:
    """`--out` of a session with nothing to repair copies its bytes. The survey kept them
    (`Source.whole`, a file read in one block) and hashed them: the copy's read back is
    compared with them byte for byte and not hashed (it was hashed whole, a SHA-256 pass per
    byte copied, #26 item 4); the manifest has the survey's hash; a byte changed on disk is
    refused, nothing published, and the original is not read again."""
    work, clean = _clean_session(tmp_path)
    files_hashed = _spy_on_file_hashing(monkeypatch)
    read_backs = _spy_on_hashing(monkeypatch)
    again = _spy_on_reading_again(monkeypatch)
    out = tmp_path / "out"
    intact = run([work], WriteMode.OUT, tmp_path, out_dir=str(out))
    (file,) = intact.files
    assert file.status is FileStatus.COPIED and (out / "clean.jsonl").read_bytes() == clean
    assert read_backs == [False] and clean not in files_hashed and again == []
    (entry,) = [e for e in file.manifest_entries if e.get("role") == "session"]
    assert entry["after"]["sha256"] == hashlib.sha256(clean).hexdigest()
    assert entry["after"]["size"] == len(clean)
    shutil.rmtree(out)
    monkeypatch.setattr(safewrite, "_read_back", _damaged(damage))
    damaged = run([work], WriteMode.OUT, tmp_path / "again", out_dir=str(out))
    _assert_copy_refused(damaged, out, work, clean)


@pytest.mark.parametrize("damage", _COPY_DAMAGE)
def test_a_file_copied_as_it_is_is_proven_by_the_hash_the_survey_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[bytes], bytes]
) -> None:
    """Where the survey did not keep the bytes (a file past one block), the copy is hashed
    once as it is read back and must have the hash the survey took of the original as it
    read it (the original is not read again); a byte changed on disk is refused."""
    monkeypatch.setattr(
        Source, "survey_stream", lambda self, hashed=False: self.stream(hashed=hashed)
    )
    work, clean = _clean_session(tmp_path)
    hashed = _spy_on_file_hashing(monkeypatch)
    again = _spy_on_reading_again(monkeypatch)
    out = tmp_path / "out"
    intact = run([work], WriteMode.OUT, tmp_path, out_dir=str(out))
    (file,) = intact.files
    assert file.status is FileStatus.COPIED and (out / "clean.jsonl").read_bytes() == clean
    assert hashed.count(clean) == 1 and again == []  # the copy read back once, the original never
    (entry,) = [e for e in file.manifest_entries if e.get("role") == "session"]
    assert entry["after"]["sha256"] == hashlib.sha256(clean).hexdigest()
    shutil.rmtree(out)
    hashed.clear()
    monkeypatch.setattr(safewrite, "hash_file", _damaged_once(damage, "clean.jsonl"))
    damaged = run([work], WriteMode.OUT, tmp_path / "again", out_dir=str(out))
    _assert_copy_refused(damaged, out, work, clean)


def _spy_on_reading_again(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What read the original again after its survey (`Source.blocks`, `raw_stream`)."""
    again: list[str] = []
    monkeypatch.setattr(Source, "blocks", lambda self, *a: again.append("blocks"))
    monkeypatch.setattr(Source, "raw_stream", lambda self: again.append("raw_stream"))
    return again


def _assert_copy_refused(damaged: RepairResult, out: Path, work: Path, clean: bytes) -> None:
    """A copy that did not read back as written: refused, nothing published, the original
    as it was."""
    (file,) = damaged.files
    assert file.status is FileStatus.FAILED
    assert "did not read back as written" in file.errors[0].message
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))
    assert work.read_bytes() == clean


def _spy_on_file_hashing(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The bytes of each file `safewrite.hash_file` hashed, in order."""
    seen: list[bytes] = []
    real = safewrite.hash_file

    def hash_file(path: str) -> tuple[int, str]:
        seen.append(Path(path).read_bytes())
        return real(path)

    monkeypatch.setattr(safewrite, "hash_file", hash_file)
    return seen


def _damaged_once(damage: Callable[[bytes], bytes], name: str) -> Callable[[str], tuple[int, str]]:
    """`safewrite.hash_file` whose first file named after `name` (the copy's temporary file)
    was changed on disk."""
    real, done = safewrite.hash_file, []

    def hash_file(path: str) -> tuple[int, str]:
        if not done and name in os.path.basename(path):
            done.append(path)
            Path(path).write_bytes(damage(Path(path).read_bytes()))
        return real(path)

    return hash_file


@settings(max_examples=80, deadline=None)
@given(data=st.binary(max_size=64), back=st.binary(max_size=64), block=st.integers(1, 70))
def test_a_copy_is_the_same_bytes_only_when_every_byte_is(
    data: bytes, back: bytes, block: int
) -> None:
    """`verify.same_bytes` in blocks of any size (read through a small buffer): it passes
    exactly when the read back is the kept bytes, a byte more, less or other refused."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(filestate, "BLOCK", block)
        stream = io.BufferedReader(io.BytesIO(back), 7)  # type: ignore[arg-type]
        if back == data:
            same_bytes(stream, data, "f")
        else:
            with pytest.raises(filestate.VerifyError, match="did not read back as written"):
                same_bytes(stream, data, "f")


def test_a_repaired_file_the_survey_kept_is_written_at_once_and_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leaking file the survey kept (`Source.whole`) is written from those bytes in one
    write, hashed as it is written: no kernel copy per untouched run, and its read back only
    compares (it hashed every byte again, #26 item 4). The output and its manifest hashes are
    those of the file written with the runs copied by the kernel (the survey keeping none)."""
    work = tmp_path / "sessions" / PI.name
    work.parent.mkdir()
    work.write_bytes(PI.read_bytes())
    copies: list[int] = []
    real_copy = safewrite.copy_into

    def copy_into(out: Any, fd: int, offset: int, count: int, name: str = "") -> None:
        copies.append(count)
        real_copy(out, fd, offset, count, name)

    monkeypatch.setattr(safewrite, "copy_into", copy_into)
    seen = _spy_on_hashing(monkeypatch)
    kept = run([work], WriteMode.OUT, tmp_path / "a", out_dir=str(tmp_path / "a" / "out"))
    (file,) = kept.files
    assert file.status is FileStatus.REPAIRED and file.output is not None
    assert copies == [] and seen == [False]
    (entry,) = [e for e in file.manifest_entries if e.get("role") == "session"]
    size, digest = safewrite.hash_file(file.output)
    assert entry["after"]["sha256"] == digest == entry["content"]["after_sha256"]
    assert entry["after"]["size"] == size
    monkeypatch.setattr(
        Source, "survey_stream", lambda self, hashed=False: self.stream(hashed=hashed)
    )
    unkept = run([work], WriteMode.OUT, tmp_path / "b", out_dir=str(tmp_path / "b" / "out"))
    (other,) = unkept.files
    assert copies and seen == [False, True]  # the runs copied by the kernel, the read back hashed
    assert other.output is not None
    assert Path(other.output).read_bytes() == Path(file.output).read_bytes()
    (again,) = [e for e in other.manifest_entries if e.get("role") == "session"]
    assert again["after"] == entry["after"] and again["content"] == entry["content"]
