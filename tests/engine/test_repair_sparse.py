"""Repair touches in Python only what can hold a repair (#13's repair row).

A clean assistant line (no possible delimiter, one compact object) is neither parsed nor
walked by the planner's survey; a format's file-wide facts read only the lines holding
their needle; the escape style is sniffed from whole blocks of lines. Each shortcut is
proven here to give what the line-by-line way gives.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO
from unittest.mock import patch

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import chained_claude_line
from tests.engine.repair_helpers import options
from tests.spies import first_args
from thinkfix.engine.repair import source as source_module
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.repair.plan import FilePlan, plan_file
from thinkfix.engine.repair.source import FileRecords, Source
from thinkfix.engine.scan import native, sparse
from thinkfix.formats import registry
from thinkfix.formats.jsonspans import Style
from thinkfix.io import compression


def _session(path: Path, clean: int, broken: bytes | None = None) -> Path:
    lines = []
    for n in range(clean):
        lines.append(chained_claude_line(2 * n, "user", "what is the total?"))
        lines.append(
            chained_claude_line(2 * n + 1, "assistant", [{"type": "text", "text": f"It is {n}."}])
        )
    leak = [{"type": "text", "text": "<think>round half-up</think>It is 7."}]
    lines.insert(clean, chained_claude_line(10_000, "assistant", leak))
    if broken is not None:
        lines.insert(3, broken)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _plan(path: Path, tmp: Path) -> FilePlan:
    fmt = registry.get("claude-code")
    src = Source.open(str(path))
    try:
        return plan_file(str(path), fmt, src, options(WriteMode.DRY_RUN, tmp))
    finally:
        src.close()


def test_clean_assistant_lines_are_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = first_args(monkeypatch, sparse, "loads")
    plan = _plan(_session(tmp_path / "s.jsonl", 500), tmp_path)
    assert len(plan.changes) == 1 and plan.count == 1001
    # The first line (the context hook sees it) and the leaking one; not the 500 clean answers.
    assert len(parsed) <= 2, len(parsed)


def test_a_clean_line_that_is_plainly_not_json_is_still_reported(tmp_path: Path) -> None:
    broken = b'{"type":"assistant","message":{"role":"assistant","content":"cut off'
    plan = _plan(_session(tmp_path / "s.jsonl", 20, broken), tmp_path)
    assert [line for line, _ in plan.bad] == [4]
    assert len(plan.changes) == 1


@pytest.mark.parametrize("run_bytes", [0, 1 << 40], ids=["orjson", "msgspec"])
def test_a_clean_line_whose_structure_alone_is_broken_is_reported(
    tmp_path: Path, run_bytes: int
) -> None:
    """A line the block survey would copy through (one compact object in UTF-8, no possible
    delimiter) whose structure alone is broken (a quote lost inside its text) is parsed and
    reported, as the scan reports it (`io.jsoncheck`); it was copied through unreported."""
    broken = chained_claude_line(99, "assistant", [{"type": "text", "text": "Do'ne."}])
    broken = broken.replace(b"Do'ne.", b'Do"ne.')
    with patch.object(native, "reach", lambda: run_bytes):
        plan = _plan(_session(tmp_path / "s.jsonl", 20, broken), tmp_path)
    assert [line for line, _ in plan.bad] == [4]
    assert len(plan.changes) == 1


_PIECES = st.sampled_from(
    [
        "a",
        "/",
        "\\/",
        "<",
        "&",
        "\\u003c",
        "\\u00e9",
        "\\u00E9",
        "é",
        "\\n",
        "\\\\",
        '"session_meta"',
        "  ",
    ]
)
_LINES = st.lists(st.lists(_PIECES, max_size=12).map("".join), min_size=1, max_size=40)


@contextmanager
def _records(
    tmp: Path, lines: list[str], crlf: bool, block: int, whole: bool = False
) -> Iterator[tuple[Source, FileRecords]]:
    """The lines as a file read in blocks of `block` bytes, so a line straddles blocks; or,
    `whole`, sliced from the bytes the survey kept (`Source.whole`), none read again."""
    eol = "\r\n" if crlf else "\n"
    path = tmp / "f.jsonl"
    path.write_bytes("".join(f'{{"t":"{line}"}}{eol}' for line in lines).encode())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(source_module, "BLOCK", block)
        src = Source.open(str(path))
        if whole:
            src.whole = path.read_bytes()
            mp.setattr(os, "pread", _no_read)  # nothing is read from the file again
        try:
            yield src, FileRecords(src, registry.get("codex"), src.line_offsets(), {})
        finally:
            src.close()


@settings(max_examples=60, deadline=None)
@given(lines=_LINES, crlf=st.booleans(), block=st.integers(8, 200), whole=st.booleans())
def test_the_style_sniffed_from_blocks_is_the_style_sniffed_line_by_line(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], crlf: bool, block: int, whole: bool
) -> None:
    with _records(tmp_path_factory.mktemp("style"), lines, crlf, block, whole) as (src, records):
        per_line = Style.sniff(r.raw + r.eol for r in records)
        assert Style.sniff(records.raws()) == per_line
        assert b"".join(records.raws()) == src.read(0, src.size)


@settings(max_examples=60, deadline=None)
@given(lines=_LINES, crlf=st.booleans(), block=st.integers(8, 200), whole=st.booleans())
def test_records_containing_a_needle_are_those_a_full_pass_finds(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], crlf: bool, block: int, whole: bool
) -> None:
    with _records(tmp_path_factory.mktemp("needle"), lines, crlf, block, whole) as (_, records):
        for needle in (b"session_meta", b"/", b"\\u00"):
            want = [(r.index, r.raw, r.eol) for r in records if needle in r.raw]
            got = [(r.index, r.raw, r.eol) for r in records.containing(needle)]
            assert got == want


def _style_by_definition(lines: list[bytes]) -> Style:
    """What `Style.sniff` means, said once over the whole file: the spec its shortcuts keep."""
    data = b"\n".join(lines)
    hexes = [m.group()[2:] for m in re.finditer(rb"\\u[0-9a-fA-F]{4}", data)]
    cased = [h for h in hexes if h.upper() != h.lower()][:64]
    upper = sum(1 for h in cased if h == h.upper())
    return Style(
        ensure_ascii=data.isascii()
        and re.search(rb"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])[0-9a-fA-F]", data)
        is not None,
        escape_html=re.search(rb"\\u00(?:3[cCeE]|26)", data) is not None
        and not any(c in data for c in (b"<", b">", b"&")),
        escape_slash=b"\\/" in data and b"/" not in data.replace(b"\\/", b""),
        upper_hex=upper > len(cased) - upper,
    )


@settings(max_examples=150, deadline=None)
@given(lines=_LINES)
def test_the_sniffed_style_is_its_definition(lines: list[str]) -> None:
    raws = [f'{{"t":"{line}"}}'.encode() for line in lines]
    assert Style.sniff(raws) == _style_by_definition(raws)
    assert Style.sniff([b"\n".join(raws)]) == _style_by_definition(raws)


# Slash-heavy lines: a file that escapes many slashes before a raw one (or never writes one
# raw) takes `_slashes`'s whole-chunk search, past the first slashes it looks at one by one.
_SLASHES = st.lists(
    st.lists(st.sampled_from(["/", "\\/", "\\\\", "\\\\/", "a", "\\u00e9"]), max_size=30).map(
        "".join
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(lines=_SLASHES, whole=st.booleans())
def test_the_slash_style_is_its_definition_however_many_slashes_are_escaped(
    lines: list[str], whole: bool
) -> None:
    raws = [f'{{"t":"{line}"}}'.encode() for line in lines]
    chunks = [b"\n".join(raws)] if whole else raws
    assert Style.sniff(chunks) == _style_by_definition(raws)


def test_a_raw_slash_after_many_escaped_ones_settles_the_style() -> None:
    escaped = b'{"t":"' + b"a\\/" * 20 + b'"}'
    assert Style.sniff([escaped]).escape_slash
    assert not Style.sniff([escaped + b'{"u":"a/b"}']).escape_slash


def test_the_document_peek_reads_a_few_kilobytes_not_a_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a file is a document is told from its first 4 KB (`sparse.is_document`). The
    peek was made at the survey's own stream, whose buffer is a 4 MB block: it read the first
    4 MB (here the whole ~100 KB file) into that buffer, for the survey to copy out again."""
    peeked: list[int] = []
    real = sparse.is_document

    def measured(fp: BinaryIO) -> bool:
        answer = real(fp)
        peeked.append(fp.raw.at)  # type: ignore[attr-defined]
        return answer

    monkeypatch.setattr(sparse, "is_document", measured)
    path = _session(tmp_path / "s.jsonl", 500)
    plan = _plan(path, tmp_path)
    assert len(plan.changes) == 1 and path.stat().st_size > 50_000
    assert peeked == [4096], peeked


def test_a_file_read_in_one_block_is_read_once_to_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The survey keeps the bytes of a file it read in one block (`Source.whole`): the line
    index, the style sniff and the records the planner asks for are sliced from them. Each of
    those read the file again (`os.pread`: twice its size here; #26 item 4)."""
    read: list[int] = []
    real = os.pread

    def pread(fd: int, n: int, at: int) -> bytes:
        data = real(fd, n, at)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", pread)
    path = _session(tmp_path / "s.jsonl", 500)
    plan = _plan(path, tmp_path)
    size = path.stat().st_size
    assert len(plan.changes) == 1 and plan.edits.replaced and size > 50_000
    assert sum(read) <= size + 4, (sum(read), size)  # the survey's read, and the magic sniffed


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=300), block=st.integers(1, 400), hashed=st.booleans())
def test_the_survey_stream_gives_the_bytes_and_keeps_them_when_read_in_one_block(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block: int, hashed: bool
) -> None:
    # a plain file's bytes: ones that start as gzip or zstd are read decompressed, and a
    # stream cut short is an error (tests/cli/test_edges_reviewed.py, the zstd cases)
    assume(compression.sniff(data) is compression.Compression.NONE)
    path = tmp_path_factory.mktemp("survey") / "f.jsonl"
    path.write_bytes(data)
    src = Source.open(str(path))
    try:
        stream = src.survey_stream(hashed=hashed)
        got = b"".join(iter(lambda: stream.read(block), b""))
        assert got == data and stream.read(block) == b""
        assert src.whole == (data if data and block >= len(data) else None)
        src.hashed_through(stream)
        assert src.read_digest == (hashlib.sha256(data).hexdigest() if hashed else None)
        assert src.read(0, len(data)) == data and src.read(1, 3) == data[1:3]
    finally:
        src.close()


def _no_read(fd: int, n: int, at: int) -> bytes:
    raise AssertionError(f"read again: {n} bytes at {at}")
