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
import tempfile
from pathlib import Path

import pytest
import zstandard

from tests.commands import invoke
from tests.engine.repair_helpers import run
from tests.engine.test_bulk import RUNTIME_LINES
from thinkfix.engine.ledger import restore
from thinkfix.engine.ledger.journal import load_manifest
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.io import compression as c

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


@pytest.mark.parametrize("how", ["flipped", "cut", "garbage"])
@pytest.mark.parametrize("mode", [WriteMode.IN_PLACE, WriteMode.OUT])
def test_repair_refuses_a_damaged_zstd_session_and_writes_nothing(
    tmp_path: Path, how: str, mode: WriteMode
) -> None:
    """The leak before the damage is read now: repair must still refuse the file whole (a
    prefix written back as a complete frame would hide the damage), name it, write nothing."""
    packed, _ = _damaged(how)
    work = tmp_path / "in" / "s.jsonl.zst"
    work.parent.mkdir()
    work.write_bytes(packed)
    out = tmp_path / "out"
    kw = {"out_dir": str(out)} if mode is WriteMode.OUT else {}
    result = run([work], mode, tmp_path / "state", backup=True, **kw)
    (file,) = result.files
    assert file.status is FileStatus.ERROR, file
    assert file.path == str(work) and file.errors
    assert work.read_bytes() == packed
    assert sorted(p.name for p in work.parent.iterdir()) == ["s.jsonl.zst"]
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))
    assert result.manifest_path is None or not load_manifest(result.manifest_path)["files"]


def test_repair_and_undo_of_a_many_block_zstd_session_are_exact(tmp_path: Path) -> None:
    """Read a block at a time, written back as zstd: the content the plain file's repair,
    undone to the original bytes (several frames, a checksum, a skippable frame)."""
    data, line = _session()
    half = data.index(b"\n", len(data) // 2) + 1
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    packed = (
        zstandard.ZstdCompressor(write_checksum=True).compress(data[:half])
        + skippable
        + zstandard.ZstdCompressor(level=1).compress(data[half:])
    )
    plain = tmp_path / "plain" / "s.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(data)
    run([plain], WriteMode.IN_PLACE, tmp_path / "plain-state", backup=False)
    work = tmp_path / "s.jsonl.zst"
    work.write_bytes(packed)
    result = run([work], WriteMode.IN_PLACE, tmp_path / "state", backup=False)
    assert result.files[0].status is FileStatus.REPAIRED
    assert c.sniff(work.read_bytes()[:4]) is c.Compression.ZSTD
    with c.open_read(work) as fp:
        assert fp.read() == plain.read_bytes() != data
    assert line in _lines(data) and not scan([str(work)], ScanOptions(), jobs=1).findings
    assert result.manifest_path is not None
    restore.undo(result.manifest_path)
    assert work.read_bytes() == packed


def _lines(data: bytes) -> set[int]:
    """The lines of `data` a scan reports."""
    path_dir = Path(tempfile.mkdtemp())
    plain = path_dir / "s.jsonl"
    plain.write_bytes(data)
    return {f.line for f in scan([str(plain)], ScanOptions(), jobs=1).findings}
