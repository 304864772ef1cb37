"""Repair finds a leaking file's lines from where the survey's reader saw its records start
(`lineindex.SeenLines`), not from a line index of the whole file (#26 item 4): every start is
the one a full index gives, stepping from the nearest line seen before or after, and the
file-wide byte tests (`FileRecords.raws`, `containing`) need no index; repairs are the same
bytes either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import copy_fixtures, run, tree_bytes
from thinkfix.engine.repair import lineindex as lineindex_module
from thinkfix.engine.repair import source as source_module
from thinkfix.engine.repair.lineindex import LineIndex, SeenLines
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.repair.source import FileRecords, Source
from thinkfix.formats import registry

PIECES = [b"\n", b"\r\n", b"x", b"{}", b"y" * 7, b'{"n":"needle"}']


def _starts(data: bytes) -> list[int]:
    if not data:
        return []
    return [0, *(i + 1 for i, b in enumerate(data) if b == 0x0A and i + 1 < len(data))]


def _opened(tmp: Path, data: bytes, whole: bool) -> Source:
    path = tmp / "f.jsonl"
    path.write_bytes(data)
    src = Source.open(str(path))
    if whole:
        src.whole = data
    return src


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.sampled_from(PIECES), max_size=120).map(b"".join),
    picked=st.sets(st.integers(0, 200)),
    step=st.sampled_from([0, 1, 3, 64]),
    chunk=st.sampled_from([1, 5, 65536]),
    most=st.sampled_from([0, 3, 1 << 16]),
    order=st.randoms(use_true_random=False),
    whole=st.booleans(),
)
def test_every_start_is_the_full_index_s(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    picked: set[int],
    step: int,
    chunk: int,
    most: int,
    order: object,
    whole: bool,
) -> None:
    """Whichever lines the reader saw, however far a lookup steps (`STEP`; past it the whole
    index is built, as it is past `STEPPED` starts held), in any order, whether the survey
    kept the bytes or they are read a `CHUNK` at a time."""
    expected = _starts(data)
    seen = {i: expected[i] for i in picked if i < len(expected)}
    src = _opened(tmp_path_factory.mktemp("seen"), data, whole)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(lineindex_module, "STEP", step)
            mp.setattr(lineindex_module, "CHUNK", chunk)
            mp.setattr(lineindex_module, "STEPPED", most)  # past it: the whole-file index
            mp.setattr(lineindex_module, "BLOCK", chunk)  # `line_at` counts a block at a time
            starts = SeenLines(src, seen, len(expected))
            picks = list(range(len(expected)))
            order.shuffle(picks)  # type: ignore[attr-defined]
            assert [starts[i] for i in picks] == [expected[i] for i in picks]
            assert list(starts) == expected
            with pytest.raises(IndexError):
                starts[len(expected)]
            if step >= len(expected) and most >= len(expected):
                assert starts.full is None  # never the whole-file index
            positions = list(range(len(data)))
            for pos in positions + order.sample(positions, len(positions)):  # type: ignore[attr-defined]
                line = max(i for i, s in enumerate(expected) if s <= pos)
                assert starts.line_at(pos) == (line, expected[line])  # in order, then any
    finally:
        src.close()


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.sampled_from(PIECES), max_size=80).map(b"".join),
    picked=st.sets(st.integers(0, 100)),
    block=st.sampled_from([3, 16, 1 << 20]),
    whole=st.booleans(),
)
def test_the_byte_tests_need_no_index_and_agree_with_it(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    picked: set[int],
    block: int,
    whole: bool,
) -> None:
    """`raws()` (the escape style's sniff) and `containing()` (Codex's `session_meta`) read
    the same lines with the seen starts as with a full index, building none."""
    expected = _starts(data)
    seen = {i: expected[i] for i in picked if i < len(expected)}
    src = _opened(tmp_path_factory.mktemp("bytes"), data, whole)
    fmt = registry.get("codex")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(source_module, "BLOCK", block)
            starts = SeenLines(src, seen, len(expected))
            lazy = FileRecords(src, fmt, starts, {})
            full = FileRecords(src, fmt, LineIndex.build(src), {})
            assert b"".join(lazy.raws()) == b"".join(full.raws())
            got = [(r.index, r.raw, r.eol) for r in lazy.containing(b"needle")]
            assert got == [(r.index, r.raw, r.eol) for r in full.containing(b"needle")]
            assert starts.full is None
    finally:
        src.close()


def test_repairs_are_the_same_bytes_with_or_without_a_whole_file_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = copy_fixtures(tmp_path)
    run([src], WriteMode.OUT, tmp_path / "seen", out_dir=str(tmp_path / "a"))
    built: list[int] = []
    real = LineIndex.build.__func__  # type: ignore[attr-defined]

    def whole_index(self: Source, seen: object = None, total: int = 0) -> LineIndex:
        built.append(1)
        return real(LineIndex, self)  # type: ignore[no-any-return]

    monkeypatch.setattr(Source, "line_offsets", whole_index)
    run([src], WriteMode.OUT, tmp_path / "full", out_dir=str(tmp_path / "b"))
    assert built  # the second run did build whole-file indexes
    a, b = tree_bytes(tmp_path / "a"), tree_bytes(tmp_path / "b")
    assert a and a == b
    assert os.listdir(tmp_path / "a")
