"""A file that fails part-way says how many records were read before it failed (edges12).

A compressed session with bytes after its last stream that start no stream is read, then
fails: its error said `read failed after 0 records` on the scan's fast path (the sparse
reader counts the lines it reads; `_FileScan.records` is set from that count only once the
file is read to its end) and gave no count at all for a zstd stream (its error is no
`OSError`). Now each says the records read. On the fast path a block's read that failed
part-way kept nothing of what it had decoded: that block's records were not scanned, its
leaks not reported. The sparse reader's reads keep those bytes and raise the failure on the
next read (`io.blockread`): every record before the failure is read, on every path.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from tests.engine.test_bulk import RUNTIME_LINES
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.sparse import BLOCK

CLAUDE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "claude-code"
    / "7f3c2a91-5d4e-4b8a-9c1f-2e6d8a0b4c37.jsonl"
)
#: A block and a half of records: the failure comes in the fast path's second block.
DATA = CLAUDE.read_bytes() * (BLOCK * 3 // 2 // CLAUDE.stat().st_size)

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lambda data: lzma.compress(data, lzma.FORMAT_XZ, preset=0),
    ".zst": zstandard.ZstdCompressor().compress,
}


@functools.cache
def _compressed(suffix: str) -> bytes:
    return COMPRESS[suffix](DATA)


def _damaged(tmp_path: Path, suffix: str, prefilter: bool) -> tuple[str, int]:
    """`DATA` compressed with `junk` after its stream; and the records read before the error."""
    path = tmp_path / f"s.jsonl{suffix}"
    path.write_bytes(_compressed(suffix) + b"junk\n")
    return str(path), DATA.count(b"\n")


@pytest.mark.parametrize("prefilter", [True, False], ids=["fast", "parse-all"])
def test_read_failure_names_the_records_read_before_it(tmp_path: Path, prefilter: bool) -> None:
    path, records = _damaged(tmp_path, ".gz", prefilter)
    report = scan([path], ScanOptions(prefilter=prefilter), jobs=1)
    (error,) = report.errors
    assert records > 0
    assert error.message == f"read failed after {records} records: Not a gzipped file (b'ju')"


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
@pytest.mark.parametrize("prefilter", [True, False], ids=["fast", "parse-all"])
def test_read_failure_count_is_true_in_every_compression(
    tmp_path: Path, suffix: str, prefilter: bool
) -> None:
    path, records = _damaged(tmp_path, suffix, prefilter)
    report = scan([path], ScanOptions(prefilter=prefilter), jobs=1)
    (error,) = report.errors
    assert error.kind.value == "unreadable"
    assert error.message.startswith(f"read failed after {records} records: "), error.message


@pytest.mark.parametrize("suffix", [".bz2", ".gz", ".xz", ".zst"])
def test_the_block_a_read_fails_in_is_scanned(tmp_path: Path, suffix: str) -> None:
    """A leak in the last block before the failure is reported beside the error: the sparse
    reader's read keeps the bytes decoded before the failure (an xz session lost the block
    before: its leak unreported, though the file's error was loud)."""
    leak = RUNTIME_LINES["claude-code"].replace(b"Done.", b"<think>plan</think>Done.")
    data = DATA + leak + b"\n"
    path = tmp_path / f"s.jsonl{suffix}"
    path.write_bytes(COMPRESS[suffix](data) + b"junk\n")
    report = scan([str(path)], ScanOptions(), jobs=1)
    (error,) = report.errors
    assert error.kind.value == "unreadable"
    assert DATA.count(b"\n") + 1 in {f.line for f in report.findings}, error.message
