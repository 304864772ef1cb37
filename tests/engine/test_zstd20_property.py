"""A compressed session damaged past some point loses none of the leaks decoded before it.

Across the four compressions (gzip, zstd, bz2, xz), as one stream or several: the session
compressed, then cut short, a byte flipped, a run of bytes overwritten or its tail replaced
by garbage, anywhere past the bytes that decode its detection head (a file damaged there is
an error before any record is read, as any file whose format cannot be told). Each leak on a
line that a decoder fed a byte at a time decodes intact before its first error is reported,
beside one error for the file; a file the reference decodes whole (a flipped bit of padding,
zeros after a gzip member) reads clean, as the reference does. zstd frames carry their
checksum here, as the `zstd` tool writes them: without it a flipped literal byte decodes to
other text without an error in any decoder.

The examples failed before: zstd's reader lost the chunk it was decoding; a bz2 block, the
xz text before a flipped byte, and the gzip text before a zlib error were lost with the
decode call that failed.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import itertools
import lzma
import random
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.engine.test_bulk import RUNTIME_LINES
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats.detection import HEAD_BYTES

CLEAN = RUNTIME_LINES["claude-code"]


def _data() -> tuple[bytes, frozenset[int]]:
    """About 400 KB of session, a leak on every 41st line from the 8th; the leaks' lines."""
    rng = random.Random(20)
    lines, leaks = [], set()
    for i in range(1200):
        words = " ".join(f"{rng.getrandbits(24):06x}" for _ in range(6))
        text = b"Done. " + words.encode()
        if i % 41 == 7:
            text = b"<think>plan " + words.encode() + b"</think>" + text
            leaks.add(i + 1)
        lines.append(CLEAN.replace(b"Done.", text).replace(b'"u1"', b'"u%d"' % i) + b"\n")
    return b"".join(lines), frozenset(leaks)


DATA, LEAKS = _data()

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "zstd": zstandard.ZstdCompressor(write_checksum=True).compress,
    "bzip2": lambda data: bz2.compress(data, 1),  # 100 kB blocks: several in the session
    "xz": lambda data: lzma.compress(data, lzma.FORMAT_XZ),
}
SUFFIX = {"gzip": ".gz", "zstd": ".zst", "bzip2": ".bz2", "xz": ".xz"}


def _decoder(kind: str) -> Any:
    if kind == "gzip":
        return zlib.decompressobj(31)
    if kind == "zstd":
        return zstandard.ZstdDecompressor().decompressobj()
    return bz2.BZ2Decompressor() if kind == "bzip2" else lzma.LZMADecompressor(lzma.FORMAT_XZ)


def _padding(rest: bytes, kind: str) -> int | None:
    """How many bytes of padding begin `rest` after a whole stream (None: a bad padding)."""
    zeros = len(rest) - len(rest.lstrip(b"\0"))
    if kind == "gzip":  # gzip reads zeros after a member as the end (`gzip -d` warns)
        return len(rest) if zeros == len(rest) else 0
    if kind == "xz":  # null bytes in fours between and after streams
        return zeros if zeros % 4 == 0 else None
    return 0


def _reference(data: bytes, kind: str) -> tuple[bytes, bool, int | None]:
    """What `data` decodes to fed a byte at a time, up to its first error; whether it
    decoded whole; and where `HEAD_BYTES` and 16 KiB more had decoded (None: never)."""
    out: list[bytes] = []
    got, head = 0, None
    decoder, at = None, 0
    while at < len(data):
        if decoder is None or decoder.eof:
            if decoder is not None:
                pad = _padding(data[at:], kind)
                if pad is None:
                    return b"".join(out), False, head
                at += pad
                if at == len(data):
                    break
            decoder = _decoder(kind)
        try:
            piece = decoder.decompress(data[at : at + 1])
        except Exception:  # noqa: BLE001 - each decoder its own type: the damage found
            return b"".join(out), False, head
        at += 1
        out.append(piece)
        got += len(piece)
        if head is None and got >= HEAD_BYTES + (16 << 10):
            head = at
    return b"".join(out), decoder is None or decoder.eof, head


@functools.cache
def _packed(kind: str, cuts: tuple[int, ...]) -> tuple[bytes, int]:
    """The session as one stream per piece between `cuts`; where its head has decoded."""
    bounds = [0, *sorted({min(cut, len(DATA)) for cut in cuts}), len(DATA)]
    packed = b"".join(COMPRESS[kind](DATA[a:b]) for a, b in itertools.pairwise(bounds))
    out, whole, head = _reference(packed, kind)
    assert out == DATA and whole and head is not None
    return packed, head


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(kind="bzip2", cuts=(), damage="flip", where=0, xor=1, garbage=b"\0")
@example(kind="xz", cuts=(), damage="flip", where=0, xor=1, garbage=b"\0")
@example(kind="zstd", cuts=(), damage="flip", where=15000, xor=1, garbage=b"\0")
@example(
    kind="gzip",
    cuts=(),
    damage="overwrite",
    where=10711,
    xor=1,
    garbage=b"\xe3\xa0Z\xe0\x86?S\x9a;\xfc?",
)
@example(kind="zstd", cuts=(), damage="cut", where=0, xor=1, garbage=b"\0")  # a small read
@given(
    kind=st.sampled_from(sorted(COMPRESS)),
    cuts=st.lists(st.integers(0, len(DATA)), max_size=2).map(tuple),
    damage=st.sampled_from(["cut", "flip", "overwrite", "garbage"]),
    where=st.integers(0, 1 << 30),
    xor=st.integers(1, 255),
    garbage=st.binary(min_size=1, max_size=40),
)
def test_a_damaged_compressed_session_reports_every_leak_decoded_before_the_damage(
    tmp_path: Path,
    kind: str,
    cuts: tuple[int, ...],
    damage: str,
    where: int,
    xor: int,
    garbage: bytes,
) -> None:
    packed, head = _packed(kind, cuts)
    at = head + where % (len(packed) - head)
    if damage == "cut":
        bad = packed[:at]
    elif damage == "flip":
        bad = packed[:at] + bytes([packed[at] ^ xor]) + packed[at + 1 :]
    elif damage == "overwrite":  # a run of bytes replaced, the rest kept
        bad = packed[:at] + garbage + packed[at + len(garbage) :]
    else:
        bad = packed[:at] + garbage
    decoded, whole, _ = _reference(bad, kind)
    path = tmp_path / f"s{at}-{damage}.jsonl{SUFFIX[kind]}"
    path.write_bytes(bad)
    report = scan([str(path)], ScanOptions(), jobs=1)
    found = {f.line for f in report.findings}
    if whole:  # read as a whole file by every decoder: what it decodes to is scanned
        assert not report.errors, report.errors
        plain = tmp_path / "plain.jsonl"
        plain.write_bytes(decoded)
        assert found == {f.line for f in scan([str(plain)], ScanOptions(), jobs=1).findings}
        return
    (error,) = [e for e in report.errors if e.line is None]  # beside lines it garbled
    assert error.kind.value == "unreadable", error.message
    assert error.message.startswith("read failed after "), error.message
    intact = len(decoded) if DATA.startswith(decoded) else _common(decoded, DATA)
    lines = DATA[:intact].count(b"\n")  # the lines decoded whole and intact
    lost = {line for line in LEAKS if line <= lines} - found
    assert not lost, (sorted(lost), lines, error.message)


def _common(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of `a` and `b`."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
