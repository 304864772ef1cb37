"""A survey that keeps a large file's bytes asks glibc's malloc, once a process, to keep the
memory it frees (#26 item 4): each file's bytes were otherwise mapped afresh and faulted in
page by page (~25,000 page faults per 100 MB of the dense corpus). A small session never
asks (nor loads ctypes: start-up), and a C library without `mallopt` changes nothing. Only
thinkfix's own process asks (the command line turns `source.TUNE_ALLOCATOR` on): a program
calling the library keeps its allocator as it set it."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine.repair_helpers import FIXTURES, run
from thinkfix.engine.repair import source
from thinkfix.engine.repair.model import FileStatus, WriteMode

PI = next(p for p in sorted((FIXTURES / "pi").iterdir()) if p.suffix == ".jsonl")


class _Libc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


@pytest.fixture
def libc(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Libc]:
    fake = _Libc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: fake)
    monkeypatch.setattr(source, "TUNE_ALLOCATOR", True)  # as the command line's process
    source.keep_freed.cache_clear()
    yield fake
    source.keep_freed.cache_clear()  # the next test's process state is its own


def _large(folder: Path, name: str) -> Path:
    """A pi session past `KEEP_FREED_FROM`: the fixture's lines repeated."""
    data = PI.read_bytes()
    path = folder / name
    path.write_bytes(data * (source.KEEP_FREED_FROM // len(data) + 1))
    return path


def test_a_large_file_asks_malloc_to_keep_freed_memory_once_a_process(
    tmp_path: Path, libc: _Libc
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _large(folder, "a.jsonl")
    _large(folder, "b.jsonl")
    result = run([folder], WriteMode.DRY_RUN, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.WOULD_CHANGE] * 2
    assert libc.calls == [(-1, 256 << 20), (-3, 32 << 20)]  # trim, mmap thresholds: once


def test_a_small_session_leaves_malloc_as_it_is(tmp_path: Path, libc: _Libc) -> None:
    result = run([PI], WriteMode.DRY_RUN, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.WOULD_CHANGE]
    assert libc.calls == []


def test_a_c_library_without_mallopt_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_mallopt(name: Any) -> object:
        return object()  # `mallopt` missing: AttributeError

    monkeypatch.setattr(ctypes, "CDLL", no_mallopt)
    source.keep_freed.cache_clear()
    try:
        folder = tmp_path / "in"
        folder.mkdir()
        big = _large(folder, "a.jsonl")
        out = tmp_path / "out"
        result = run([folder], WriteMode.OUT, tmp_path, out_dir=str(out))
        (file,) = result.files
        assert file.status is FileStatus.REPAIRED
        assert (out / big.name).read_bytes() != big.read_bytes()
    finally:
        source.keep_freed.cache_clear()


@pytest.fixture
def untuned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[_Libc, Path]]:
    """A fake C library, the setting off (as in a program calling the library) and a folder
    holding one large session."""
    fake = _Libc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: fake)
    monkeypatch.setattr(source, "TUNE_ALLOCATOR", False)
    source.keep_freed.cache_clear()
    folder = tmp_path / "in"
    folder.mkdir()
    _large(folder, "a.jsonl")
    yield fake, folder
    source.keep_freed.cache_clear()


def test_a_program_calling_the_library_keeps_its_allocator(
    tmp_path: Path, untuned: tuple[_Libc, Path]
) -> None:
    """The setting is the whole process's: the library alone never makes it. Failed first
    (the library asked malloc as soon as it read a large file)."""
    fake, folder = untuned
    result = run([folder], WriteMode.DRY_RUN, tmp_path)
    assert [f.status for f in result.files] == [FileStatus.WOULD_CHANGE]
    assert fake.calls == []


def test_the_command_line_tunes_its_own_process(untuned: tuple[_Libc, Path]) -> None:
    """`thinkfix repair` (in this process, through click) turns the setting on before it reads."""
    from click.testing import CliRunner

    from thinkfix.cli import main

    fake, folder = untuned
    outcome = CliRunner().invoke(
        main, ["repair", "--isolated", "--dry-run", "--jobs", "1", str(folder)]
    )
    assert outcome.exit_code in (0, 1), outcome.output
    assert fake.calls == [(-1, 256 << 20), (-3, 32 << 20)]
