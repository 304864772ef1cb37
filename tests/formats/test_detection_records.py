"""Detection decides on whole records, however long the first one is (issue 10, item 1).

A 64 KB head used to cut a long first line in two: a Claude Code session opening
with a pasted log, or a chat export with one conversation per line, was then
"not a known session format" and silently skipped in a folder.
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.formats.long_records import (
    CLAUDE_FIXTURE,
    MB,
    chat_export,
    claude_code_long_prompt,
    grow_first_record,
)
from tests.formats.support import FIXTURES, is_store, session_files
from tests.formats.test_detection import EXPECTED
from thinkfix.engine.inputs.files import Candidate, resolve
from thinkfix.formats import registry
from thinkfix.formats.detection import HEAD_BYTES, MIN_RECORDS, read_head, sample


class ShortReads(io.RawIOBase):
    """A stream that hands out at most the next of `sizes` bytes per read (pipes, gzip)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.pos, self.sizes, self.calls = data, 0, sizes or [1], 0
        self.largest_request = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        self.largest_request = max(self.largest_request, n)
        step = self.sizes[self.calls % len(self.sizes)]
        self.calls += 1
        end = len(self.data) if n < 0 else self.pos + min(n, step)
        out = self.data[self.pos : end]
        self.pos += len(out)
        return out


def _detected(tmp_path: Path, name: str, data: bytes) -> tuple[str, str | None]:
    """(format named on the command line, format when found by walking a folder)."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    named = registry.detect_file(str(path)).id
    walked = resolve(Candidate(str(path), str(path), explicit=False, size=len(data)))
    assert walked.error is None and walked.skipped is None, (walked.error, walked.skipped)
    return named, walked.format


#: Record-per-line files: a database store (rows, not lines) has no first record to grow.
# records of JSON only: a store holds rows, and an Aider history is Markdown whose run header
# opens the file whatever follows (tests/formats/test_aider.py grows a reply past 1 MB)
LINE_FILES = [p for p in session_files(FIXTURES) if not is_store(p) and p.suffix != ".md"]


@pytest.mark.parametrize("path", LINE_FILES, ids=lambda p: p.name[:40])
def test_a_first_record_of_1mb_is_detected(tmp_path: Path, path: Path) -> None:
    data = grow_first_record(path.read_bytes(), MB)
    first = data if data.lstrip().startswith((b"{\n", b"[\n")) else data.split(b"\n", 1)[0]
    assert len(first) > MB
    expected = EXPECTED[path.relative_to(FIXTURES).parts[0]]
    # where it lies is kept: Roo Code's histories are told from Cline's by their folder
    assert _detected(tmp_path, str(path.relative_to(FIXTURES)), data) == (expected, expected)


def test_a_claude_code_session_opening_with_a_400kb_prompt_is_detected(tmp_path: Path) -> None:
    data = claude_code_long_prompt(400_000)
    assert data.index(b"\n") > 400_000
    assert sample(data[:HEAD_BYTES]).partial  # a 64 KB window holds no whole record
    assert _detected(tmp_path, CLAUDE_FIXTURE.name, data) == ("claude-code", "claude-code")


def test_a_chat_export_with_a_100kb_conversation_per_line_is_detected(tmp_path: Path) -> None:
    data = chat_export(0, 100_000)
    assert all(len(line) > 100_000 for line in data.splitlines())
    assert sample(data[:HEAD_BYTES]).partial
    assert _detected(tmp_path, "chats-0.jsonl", data) == ("openai-chat", "openai-chat")


def test_read_head_ends_on_whole_records() -> None:
    line = b'{"k":"' + b"x" * 300_000 + b'"}\n'
    data = line * 5
    head = read_head(io.BytesIO(data))
    assert head.count(b"\n") == MIN_RECORDS  # chunks may overshoot; the records are whole
    assert sample(head).lines == MIN_RECORDS and sample(head).bad == 0


def test_read_head_keeps_the_small_window_for_ordinary_files() -> None:
    data = b'{"type":"user","uuid":"u"}\n' * 10_000
    assert read_head(io.BytesIO(data)) == data[:HEAD_BYTES]


def test_read_head_reads_a_pretty_document_to_its_end() -> None:
    doc = b'{\n  "messages": [\n' + b'    {"text": "' + b"y" * 200_000 + b'"}\n  ]\n}'
    assert read_head(io.BytesIO(doc)) == doc


def test_read_head_stops_at_the_cap_and_never_asks_for_more() -> None:
    data = b'{"k":"' + b"z" * 5_000_000
    stream = ShortReads(data, [1 << 30])
    head = read_head(stream, cap=1_000_000)
    assert head == data[:1_000_000]
    assert stream.largest_request <= 1_000_000


def test_a_first_record_past_the_cap_falls_back_to_key_patterns() -> None:
    """Only when no record is whole within the cap are key patterns in the fragment used."""
    claude = claude_code_long_prompt(400_000)
    assert registry.detect(claude[:100_000], "s.jsonl")[0].id == "claude-code"
    codex = grow_first_record(
        (FIXTURES / "codex").glob("rollout-2026-*.jsonl").__next__().read_bytes(), MB
    )
    assert registry.detect(codex[:100_000], "r.jsonl")[0].id == "codex"
    chat = chat_export(0, 100_000)
    assert registry.detect(chat[:50_000], "c.jsonl")[0].id == "openai-chat"
    assert sample(claude[:100_000]).partial and not sample(claude).partial


@cache
def _fixture_bytes(path: Path, grow: bool) -> bytes:
    data = path.read_bytes()
    return grow_first_record(data, 200_000) if grow and path.suffix != ".md" else data


@settings(max_examples=40, deadline=None)
@given(
    path=st.sampled_from(LINE_FILES),
    sizes=st.lists(
        st.one_of(st.integers(1, 64), st.integers(4096, 70_000)), min_size=1, max_size=8
    ).filter(lambda xs: sum(xs) >= 4096),
    grow=st.booleans(),
)
def test_read_head_is_the_same_whatever_the_reads_return(
    path: Path, sizes: list[int], grow: bool
) -> None:
    """Short reads (pipes, decompressors) never change what detection sees or decides."""
    data = _fixture_bytes(path, grow)
    whole = read_head(io.BytesIO(data))
    assert read_head(ShortReads(data, sizes)) == whole
    assert data.startswith(whole)
    assert registry.detect(whole, str(path))[0].id == EXPECTED[path.relative_to(FIXTURES).parts[0]]
