"""A zstd session damaged after a leak: the leak is reported beside the file's error.

python-zstandard's `stream_reader` decodes into the caller's buffer and keeps nothing of a
read that fails part-way: a `.jsonl.zst` damaged after its last leak (a flipped byte in a
later block, the file cut short mid-frame, garbage after it) lost the chunk it was decoding,
up to the sparse reader's whole block (4 MiB), so the leak before the damage went unreported
beside the loud error (exit 2). The zstd reader now feeds python-zstandard's decoder one
block at a time (`io.zstdframes`) and keeps what decoded before a failure, raising it on the
next read, as the bz2/xz reader does (`tests/engine/test_read_failure_count.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from tests.commands import invoke
from tests.engine.test_bulk import RUNTIME_LINES
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan

CLEAN = RUNTIME_LINES["claude-code"]
LEAK = CLEAN.replace(b"Done.", b"<think>plan the fix</think>Done.")
#: Lines before the leak, and after it (those after are where the damage falls).
BEFORE, AFTER = 6000, 3000


def _session() -> tuple[bytes, int]:
    """The session's bytes, and the leak's line number (1-based)."""
    lines = [CLEAN.replace(b'"u1"', b'"u%d"' % i) for i in range(BEFORE + AFTER)]
    lines.insert(BEFORE, LEAK)
    return b"".join(line + b"\n" for line in lines), BEFORE + 1


def _blocks(frame: bytes) -> list[tuple[int, int]]:
    """(start, end) of each block's content in a one-frame stream without a dictionary."""
    descriptor = frame[4]
    single = descriptor >> 5 & 1
    fcs = (0, 2, 4, 8)[descriptor >> 6] or single
    at = 5 + (not single) + (0, 1, 2, 4)[descriptor & 3] + fcs
    blocks = []
    while True:
        word = int.from_bytes(frame[at : at + 3], "little")
        size = 1 if word >> 1 & 3 == 1 else word >> 3
        blocks.append((at + 3, at + 3 + size))
        at += 3 + size
        if word & 1:
            return blocks


def _damaged(how: str) -> tuple[bytes, int]:
    """The session as a checksummed frame (as the `zstd` tool writes), damaged `how` in a
    block after the leak's; and the leak's line."""
    data, line = _session()
    packed = zstandard.ZstdCompressor(write_checksum=True).compress(data)
    blocks = _blocks(packed)
    assert len(blocks) > 4  # not vacuous: many blocks, and the damage after the leak's
    start, end = blocks[-2]  # the leak (2/3 in) decodes in an earlier block
    if how == "flipped":
        middle = (start + end) // 2
        return packed[:middle] + bytes([packed[middle] ^ 0x55]) + packed[middle + 1 :], line
    if how == "cut":
        return packed[: (start + end) // 2], line
    return packed + b"junk\n", line


@pytest.mark.parametrize("how", ["flipped", "cut", "garbage"])
@pytest.mark.parametrize("prefilter", [True, False], ids=["fast", "parse-all"])
def test_the_leak_before_the_damage_is_reported_with_the_error(
    tmp_path: Path, how: str, prefilter: bool
) -> None:
    packed, line = _damaged(how)
    path = tmp_path / "s.jsonl.zst"
    path.write_bytes(packed)
    report = scan([str(path)], ScanOptions(prefilter=prefilter), jobs=1)
    (error,) = report.errors
    assert error.kind.value == "unreadable"
    read = int(error.message.removeprefix("read failed after ").split(" ")[0])
    total = BEFORE + AFTER + 1
    assert (read == total) if how == "garbage" else (line <= read < total), error.message
    assert [f.line for f in report.findings] == [line], error.message


@pytest.mark.parametrize("how", ["flipped", "cut", "garbage"])
def test_the_cli_says_both_and_exits_2(tmp_path: Path, how: str) -> None:
    packed, line = _damaged(how)
    path = tmp_path / "s.jsonl.zst"
    path.write_bytes(packed)
    result = invoke("scan", "--isolated", "--output-format", "json", str(path))
    report = json.loads(result.stdout)
    assert result.exit_code == 2, report["summary"]
    assert [f["line"] for f in report["findings"]] == [line]
    assert report["errors"][0]["message"].startswith("read failed after ")
