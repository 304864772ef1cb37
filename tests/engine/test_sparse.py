"""The sparse reader yields exactly what the format's own reader yields, for the lines it keeps."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.conftest import FIXTURES
from tests.formats.support import is_store, session_files
from thinkfix.engine.scan import sparse
from thinkfix.formats import registry
from thinkfix.formats.common import FormatBase
from thinkfix.formats.strangers import names_turn


def _expected(fmt: FormatBase, data: bytes) -> tuple[list[tuple], int]:
    """What iter_jsonl gives for the wanted lines, and any other line but a blank one that
    does not parse (the reader checks every line it does not read: its error is reported,
    as a parse of every line reports it), and the line count."""
    records = list(fmt.read(io.BytesIO(data)))
    kept = [
        (r.index, r.line, r.raw, r.eol, r.ctx)
        for r in records
        if fmt.assistant_marker in r.raw
        or not r.eol
        or names_turn(r.raw)
        or (r.error is not None and r.raw.strip())
    ]
    return kept, len(records)


def _sparse(fmt: FormatBase, data: bytes, block: int) -> tuple[list[tuple], int]:
    reader = sparse.SparseReader(fmt, io.BufferedReader(io.BytesIO(data)), block)
    got = [(r.index, r.line, r.raw, r.eol, r.ctx) for r in reader]
    return got, reader.records


# line files only: a database store is read through the store layer, never line by line
# (and of formats the sparse reader takes: Goose reads its legacy lines with its store's reader)
JSONL = [
    p
    for p in session_files(FIXTURES)
    if not p.name.endswith((".json", ".md"))  # documents, and Aider's Markdown
    and not is_store(p)
    and sparse.supports(registry.detect_file(str(p)))  # type: ignore[arg-type]
]


@pytest.mark.parametrize("path", JSONL, ids=lambda p: p.parent.name + "/" + p.name[:12])
@pytest.mark.parametrize("block", [7, 64, 1000, sparse.BLOCK])
def test_sparse_matches_the_format_reader_on_fixtures(path: Path, block: int) -> None:
    data = path.read_bytes()
    fmt = registry.detect_file(str(path))
    assert sparse.supports(fmt)
    assert _sparse(fmt, data, block) == _expected(fmt, data)  # type: ignore[arg-type]


LINES = [
    b'{"type":"assistant","message":{"role":"assistant","content":"a"}}',
    b'{"type":"user","message":{"role":"user","content":"\\"assistant\\""}}',
    b'{"type":"session_meta","payload":{"id":"s"}}',
    b"",
    b"   ",
    b"not json",
    b'{"type":"response_item","payload":{"type":"reasoning","summary":[]}}',
    b'{"type":"turn_context","payload":{"model":"m"}}',
    (
        b'{"type":"response_item","payload":{"type":"message","role":"assistant",'
        b'"content":[{"type":"output_text","text":"x"}]}}'
    ),
    # a stranger's turn (#21 item 1): no marker, but it names a model turn
    b'{"type":"turn","message":{"role": "model","parts":[{"text":"a"}]}}',
    b'{"type":"turn_context","payload":{"model" :"m"}}',
]


@settings(max_examples=150)
@given(
    lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=30),
    eols=st.lists(st.sampled_from([b"\n", b"\r\n"]), min_size=30, max_size=30),
    crlf=st.booleans(),
    final_eol=st.booleans(),
    block=st.integers(1, 300),
    name=st.sampled_from(["claude-code", "codex", "pi", "openai-chat"]),
)
def test_sparse_matches_the_format_reader_on_any_lines(
    lines: list[bytes], eols: list[bytes], crlf: bool, final_eol: bool, block: int, name: str
) -> None:
    fmt = registry.get(name)
    ends = [b"\r\n" if crlf else b"\n"] * len(lines) if crlf else eols[: len(lines)]
    data = b"".join(line + eol for line, eol in zip(lines, ends))
    if not final_eol:
        data = data[: -len(ends[-1])]
    assert _sparse(fmt, data, block) == _expected(fmt, data)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.sampled_from(LINES + [b"", b"x" * 40]), max_size=30),
    crlf=st.booleans(),
    tail=st.booleans(),
    block=st.sampled_from([7, 64, 1000, sparse.BLOCK]),
)
def test_sparse_offsets_are_where_each_record_starts(
    lines: list[bytes], crlf: bool, tail: bool, block: int
) -> None:
    """Asked for (`offsets=True`), the reader says where each record it yields starts: the
    stream holds the record's bytes there (repair reads its neighbours from it, #26 item 4)."""
    eol = b"\r\n" if crlf else b"\n"
    data = eol.join(lines) + (b"" if tail or not lines else eol)
    fmt = registry.get("claude-code")
    reader = sparse.SparseReader(fmt, io.BufferedReader(io.BytesIO(data)), block, offsets=True)
    records = list(reader)
    assert reader.offsets is not None
    assert sorted(reader.offsets) == [r.index for r in records]
    for r in records:
        at = reader.offsets[r.index]
        assert data[at : at + len(r.raw) + len(r.eol)] == r.raw + r.eol
        assert at == 0 or data[at - 1 : at] == b"\n"


@pytest.mark.parametrize("block", [7, 64, 1000, sparse.BLOCK])
def test_an_unread_broken_line_takes_the_context_of_its_place(block: int) -> None:
    """A line that is not JSON, before the line that changes the context (a Codex
    session_meta), is reported with the context it was written under, as the format's reader
    gives it: the unread lines' check runs after the block's loop, which had moved on (found
    by the property above, on a random seed)."""
    fmt = registry.get("codex")
    data = b"".join(
        [LINES[0], b"\n", b"not json\n", LINES[2], b"\n", LINES[0], b"\nnot json\n", LINES[0]]
    )
    assert _sparse(fmt, data, block) == _expected(fmt, data)  # type: ignore[arg-type]
