"""Bounded work on hostile input (issue 11, items 8 and 10): a record of millions of
delimiters, a record or a decompressed stream larger than the limit, and many clean files."""

from __future__ import annotations

import gzip
import io
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode, describe
from thinkfix.engine.report import MessageCounts, Report, Summary
from thinkfix.engine.scan.findings import capped_findings
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.sparse import SparseReader
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import DEFAULT_RECORD_LIMIT, Record, set_record_limit
from thinkfix.formats.registry import FORMATS
from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.policy import DEFAULT
from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.registry import get_reporter

HOSTILE = "</think><think>"
CHAT = InputOptions(format="openai-chat")


def _chat(path: Path, text: str) -> Path:
    path.write_bytes(orjson.dumps({"role": "assistant", "content": text}) + b"\n")
    return path


def test_a_hostile_message_reports_the_cap_and_says_how_much_was_not_examined(
    tmp_path: Path,
) -> None:
    # 600 KB of `</think><think>`: 40,000 findings before the cap, which used to take ~1.3 s
    # to normalize whole; now the stream stops after the first 1000.
    text = HOSTILE * 40_000
    report = scan([str(_chat(tmp_path / "h.jsonl", text))], ScanOptions(inputs=CHAT))
    assert report.summary.findings == 1000
    assert report.summary.leaking_messages == 1
    [error] = report.errors
    assert error.kind == "too_many_findings" and error.line == 1
    assert "more than 1000 findings" in error.message and "not examined" in error.message
    assert report.exit_code().value == 2  # never called fully read


def test_capped_findings_are_the_first_findings_of_normalize() -> None:
    text = HOSTILE * 3000
    capped = capped_findings(text, None, DEFAULT, 100)
    assert capped.findings == normalize(text).findings[:100]
    # Stopped well before the end: a hostile text costs about what its first chunk does.
    assert capped.unexamined > len(text) - 40_000 and capped.more > 0


def test_the_cap_is_configurable_and_zero_turns_it_off(tmp_path: Path) -> None:
    path = str(_chat(tmp_path / "h.jsonl", HOSTILE * 300))
    assert scan([path], ScanOptions(inputs=CHAT, max_findings=50)).summary.findings == 50
    full = scan([path], ScanOptions(inputs=CHAT, max_findings=0))
    assert full.summary.findings == len(normalize(HOSTILE * 300).findings) and not full.errors


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(["<think>", "</think>", "a", " ", "`", "\n", "[", "x<"]), max_size=80),
    st.integers(min_value=1, max_value=12),
)
def test_under_the_cap_findings_equal_normalize(parts: list[str], cap: int) -> None:
    text = "".join(parts)
    capped = capped_findings(text, None, DEFAULT, cap)
    full = normalize(text).findings
    assert capped.findings == full[:cap]
    if not capped.unexamined:
        assert capped.more == max(0, len(full) - cap)


# --- item 8: records, streams and reports of bounded size -----------------------------------


def _line(text: str) -> bytes:
    return orjson.dumps({"role": "assistant", "content": text}) + b"\n"


def test_a_record_over_the_limit_is_reported_and_never_parsed(tmp_path: Path) -> None:
    big = _line("<think>" + "x" * 5000 + "</think>answer")
    path = tmp_path / "s.jsonl"
    path.write_bytes(_line("<think>a</think>b") + big + _line("<think>c</think>d"))
    report = scan([str(path)], ScanOptions(inputs=CHAT, max_record_size=1000))
    [error] = report.errors
    assert error.kind == "too_large" and error.line == 2
    assert "over the 1,000-byte limit" in error.message and "--max-record-size" in error.message
    assert report.summary.findings == 2  # the records around it are scanned as usual


def test_repair_copies_a_too_large_record_through_untouched(tmp_path: Path) -> None:
    big = _line("<think>" + "x" * 5000 + "</think>answer")
    src = tmp_path / "in" / "s.jsonl"
    src.parent.mkdir()
    src.write_bytes(_line("<think>a</think>b") + big)
    scan_options = ScanOptions(inputs=CHAT, max_record_size=1000)
    result = repair_paths(
        [str(src)],
        RepairOptions(
            mode=WriteMode.OUT,
            scan=scan_options,
            out_dir=str(tmp_path / "out"),
            run_dir=str(tmp_path / "run"),
            jobs=1,
        ),
    )
    [f] = result.files
    assert [e.kind for e in f.errors] == ["too_large"] and "copied through untouched" in f.errors[
        0
    ].message
    out = (tmp_path / "out" / "s.jsonl").read_bytes()
    assert out.endswith(big) and b"<think>a" not in out  # the first repaired, the big one kept


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_decompression_bomb_is_a_clear_error_for_its_file(tmp_path: Path, kind: str) -> None:
    # One line of 8 MiB that compresses to a few KiB; the limit makes repair stop at 1 MiB.
    body = b'{"role":"assistant","content":"' + b"A" * (8 << 20) + b'"}\n'
    data = gzip.compress(body) if kind == "gzip" else zstandard.ZstdCompressor().compress(body)
    path = tmp_path / f"bomb.jsonl.{'gz' if kind == 'gzip' else 'zst'}"
    path.write_bytes(data)
    options = ScanOptions(inputs=CHAT, max_record_size=64 << 10)
    result = repair_paths([str(path)], RepairOptions(mode=WriteMode.CHECK, scan=options, jobs=1))
    [error] = result.all_errors
    assert "decompresses to more than 1,048,576 bytes" in error.message
    assert "compression bomb" in error.message and not error.message.endswith("repair: ")
    report = scan([str(path)], options)
    [error] = report.errors
    assert error.kind == "too_large" and "more than" in error.message


class _Endless(io.RawIOBase):
    """/dev/zero for `blocks` reads: no newline, ever."""

    def __init__(self, blocks: int) -> None:
        self.left = blocks

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.left:
            return 0
        self.left -= 1
        buffer[:] = bytes(len(buffer))
        return len(buffer)


def test_an_endless_line_holds_memory_at_the_limit(tmp_path: Path) -> None:
    """`scan --format openai-chat /dev/zero` grew without end; now a line past the limit is
    read on without being kept (here 256 MiB of zeros against a 1 MiB limit)."""
    set_record_limit(1 << 20)
    try:
        reader = SparseReader(
            FORMATS["openai-chat"], io.BufferedReader(_Endless(64), buffer_size=1 << 22)
        )
        tracemalloc.start()
        records = list(reader)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        set_record_limit(DEFAULT_RECORD_LIMIT)
    assert [r.error is not None and r.error.startswith("too large") for r in records] == [True]
    assert peak < 24 << 20, peak  # a few blocks, not 256 MiB


def test_failure_messages_always_say_what_happened() -> None:
    assert describe(MemoryError()) == "out of memory"
    assert describe(KeyError("type")).startswith("KeyError")
    assert describe(ValueError("")) == "ValueError: no details"


def test_the_text_report_keeps_no_state_per_clean_file() -> None:
    """100k tiny clean files cost the text reporter 948 MB; it now drops the per-file
    counts unless --statistics asks for them (the peak no longer follows the file count)."""

    def peak(n: int) -> int:
        by_file = {f"/sessions/s{i}.jsonl": MessageCounts(1, 0, 0, "openai-chat") for i in range(n)}
        report = Report(summary=Summary(files=n, assistant_messages=n, by_file=by_file))
        get_reporter("text").render_bytes(report, RenderOptions())
        tracemalloc.start()
        get_reporter("text").render_bytes(report, RenderOptions())
        used = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return used

    assert peak(20_000) - peak(0) < 1 << 20  # was ~6.5 MB for 20k files


def test_a_hostile_message_is_never_normalized_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later check (does the text show anything once repaired?) normalized every leaking
    text a second time, whole, which undid the cap: a 50 MB hostile line took 158 s."""
    import thinkfix.engine.scan.findings as engine

    real = engine.normalize

    def guarded(text: str, *args: Any, **kwargs: Any) -> Any:
        assert len(text) < 100_000, "a capped text was normalized whole"
        return real(text, *args, **kwargs)

    monkeypatch.setattr(engine, "normalize", guarded)
    report = scan([str(_chat(tmp_path / "h.jsonl", HOSTILE * 40_000))], ScanOptions(inputs=CHAT))
    assert report.summary.findings == 1000


def test_repair_reports_a_line_too_long_to_keep(tmp_path: Path) -> None:
    """Past the limit inside one read block, the survey keeps none of the line: it was still
    reported by scan but silently passed by repair --check."""
    big = _line("<think>" + "x" * (9 << 20) + "</think>answer")  # over two read blocks
    path = tmp_path / "s.jsonl"
    path.write_bytes(_line("<think>a</think>b") + big)
    options = ScanOptions(inputs=CHAT, max_record_size=1 << 20)
    result = repair_paths([str(path)], RepairOptions(mode=WriteMode.CHECK, scan=options, jobs=1))
    assert [(e.kind, e.line) for e in result.all_errors] == [("too_large", 2)]


# --- readers other than scan's: a line past the limit is never held (#11 item 8) ------------

_LONG = 24 << 20  # the over-long line: 24 times the 1 MB limit below


def _long_session(path: Path, first: bytes) -> Path:
    """A valid first line, a 24 MB assistant line, and one more valid line."""
    with open(path, "wb") as fp:
        fp.write(first + b"\n")
        fp.write(b'{"type": "assistant", "junk": "' + b"x" * _LONG + b'"}\n')
        fp.write(first + b"\n")
    return path


def _peak(fn: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _read_at_a_megabyte(fmt: SessionFormat, path: Path) -> tuple[list[Record], int]:
    """The records `fmt` reads from `path` with the record limit at 1 MiB, and the peak of
    memory the reading held."""
    set_record_limit(1 << 20)
    try:
        with open(path, "rb") as fp:
            return _peak(lambda: list(fmt.read(fp)))
    finally:
        set_record_limit(DEFAULT_RECORD_LIMIT)


@pytest.mark.parametrize("name", [n for n, f in FORMATS.items() if f.line_records])
def test_format_readers_read_past_a_line_over_the_limit(tmp_path: Path, name: str) -> None:
    fmt = FORMATS[name]
    path = _long_session(tmp_path / "s.jsonl", b'{"type": "user", "n": 1}')
    records, peak = _read_at_a_megabyte(fmt, path)
    assert peak < _LONG // 3, f"{name}: the reader held {peak:,} bytes"  # was the whole line
    assert [r.index for r in records] == [0, 1, 2]
    assert records[1].raw == b"" and (records[1].error or "").startswith("too large")
    assert "25,165,8" in (records[1].error or "")  # its exact size, though never held
    assert records[2].raw == b'{"type": "user", "n": 1}' and records[2].error is None


def test_a_document_over_the_limit_is_read_past_not_held(tmp_path: Path) -> None:
    fmt = FORMATS["gemini-cli"]
    path = tmp_path / "session.json"
    path.write_bytes(
        b'{\n  "sessionId": "s",\n  "messages": [],\n  "junk": "' + b"x" * _LONG + b'"\n}\n'
    )
    records, peak = _read_at_a_megabyte(fmt, path)
    assert peak < _LONG // 3, f"the reader held {peak:,} bytes"
    [record] = records
    assert record.raw == b"" and (record.error or "").startswith("too large")


def test_show_takes_the_record_limit_and_never_holds_a_longer_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from thinkfix.cli import main

    fixture = (
        Path(__file__).resolve().parents[2]
        / "fixtures"
        / "claude-code"
        / "7f3c2a91-5d4e-4b8a-9c1f-2e6d8a0b4c37.jsonl"
    )
    lines = fixture.read_bytes().splitlines()
    path = tmp_path / "s.jsonl"
    with open(path, "wb") as fp:
        fp.write(b"\n".join(lines[:3]) + b"\n")
        fp.write(b'{"type": "assistant", "junk": "' + b"x" * _LONG + b'"}\n')
        fp.write(b"\n".join(lines[3:]) + b"\n")
    result, peak = _peak(
        lambda: CliRunner().invoke(
            main, ["show", "--no-pager", "--max-record-size", "1MB", str(path)]
        )
    )
    assert result.exit_code == 0, result.output
    assert "line 4: too large" in result.output  # named (stderr), left out
    assert peak < 12 << 20, f"show held {peak:,} bytes"  # the line is 24 MB
