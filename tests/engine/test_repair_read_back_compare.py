"""The read back's compare (#26 item 4): the bytes read back, a block at a time, are compared
with the planned pieces where they lie (the original's untouched runs as views of the bytes the
survey kept, the new records' own bytes), nothing of the original read or sliced again; and it
accepts exactly the planned bytes, whatever the block size and wherever the pieces are cut."""

from __future__ import annotations

import io
import itertools
import shutil
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import FIXTURES, run
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.repair.source import Source
from thinkfix.engine.repair.verify import _ReadBack, same_bytes
from thinkfix.io import filestate

PI = next(p for p in sorted((FIXTURES / "pi").iterdir()) if p.suffix == ".jsonl")


@pytest.mark.parametrize("mode", [WriteMode.OUT, WriteMode.IN_PLACE])
def test_the_read_back_of_a_file_the_survey_kept_reads_nothing_of_the_original_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: WriteMode
) -> None:
    work = tmp_path / "sessions" / PI.name
    work.parent.mkdir()
    shutil.copyfile(PI, work)
    reread: list[tuple[int, int]] = []
    real = Source.blocks

    def blocks(self: Source, start: int, end: int) -> Any:
        reread.append((start, end))
        return real(self, start, end)

    monkeypatch.setattr(Source, "blocks", blocks)
    out = tmp_path / "out"
    result = run([work], mode, tmp_path, out_dir=str(out) if mode is WriteMode.OUT else None)
    (file,) = result.files
    assert file.status is FileStatus.REPAIRED and file.output is not None
    # before: each untouched run was read again from the original (a slice of its bytes)
    assert reread == []
    # the same bytes as a repair whose survey kept nothing (each run read again to compare)
    monkeypatch.setattr(Source, "survey_stream", lambda self, hashed=False: self.stream())
    fresh = tmp_path / "fresh" / PI.name
    fresh.parent.mkdir()
    shutil.copyfile(PI, fresh)
    (other,) = run([fresh], WriteMode.OUT, tmp_path / "fresh", out_dir=str(tmp_path / "o2")).files
    assert reread and other.output is not None
    assert Path(other.output).read_bytes() == Path(file.output).read_bytes()


def _damaged(data: bytes, how: int, at: int) -> bytes:
    if how == 0 or not data:
        return data + b"x" if how else data
    i = at % len(data)
    if how == 1:
        return data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :]
    if how == 2:
        return data[:i]
    return data[:i] + b"\n" + data[i:]


def _pieces(data: bytes, cuts: list[int], views: bool) -> list[bytes | memoryview]:
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    parts = [data[a:b] for a, b in itertools.pairwise(bounds)]
    return [memoryview(p) if views and i % 2 else p for i, p in enumerate(parts)]


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=120),
    cuts=st.lists(st.integers(0, 200), max_size=8),
    block=st.integers(1, 9),
    how=st.integers(0, 3),
    at=st.integers(0, 200),
    views=st.booleans(),
)
def test_the_compare_accepts_exactly_the_planned_bytes(
    data: bytes, cuts: list[int], block: int, how: int, at: int, views: bool
) -> None:
    back = _damaged(data, how, at)
    with mock.patch.object(filestate, "BLOCK", block):
        reader = _ReadBack(io.BufferedReader(io.BytesIO(back), block))  # type: ignore[arg-type]
        same = all(reader.same(p) == len(p) for p in _pieces(data, cuts, views))
        accepted = same and not reader.more()
        assert accepted == (back == data)
        copy = io.BufferedReader(io.BytesIO(back), block)  # type: ignore[arg-type]
        if back == data:
            same_bytes(copy, data, "f")  # type: ignore[arg-type]
        else:
            with pytest.raises(filestate.VerifyError, match="did not read back as written"):
                same_bytes(copy, data, "f")  # type: ignore[arg-type]
