"""Compressed sessions read and write transparently, recognised by magic bytes."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
import zstandard

from tests.formats.support import fixture, read, sites
from thinkfix.formats.registry import detect_file, get
from thinkfix.io import compression as c

SESSION = fixture("rollout-2026-03-02").read_bytes()


def _decompressed(path: Path) -> bytes:
    with c.open_read(path) as fp:
        return fp.read()


@pytest.mark.parametrize("kind", list(c.Compression))
def test_compression_round_trip_through_a_format(kind: c.Compression, tmp_path: Path) -> None:
    fmt = get("codex")
    src = tmp_path / "in.jsonl"
    src.write_bytes(c.compress(SESSION, kind))
    with c.open_read(src) as fp:
        records = list(fmt.read(fp))
    assert len(sites(fmt, records)) == 4
    suffix = {"none": "", "gzip": ".gz", "zstd": ".zst", "bzip2": ".bz2", "xz": ".xz"}
    dst = tmp_path / ("out.jsonl" + suffix[kind.value])
    with c.wrap_writer(open(dst, "wb"), kind) as fp:  # as repair writes a compressed session
        fmt.write(records, fp)
    assert c.sniff(dst.read_bytes()) is kind
    assert _decompressed(dst) == SESSION


def test_compression_is_sniffed_not_guessed_from_the_name(tmp_path: Path) -> None:
    misnamed = tmp_path / "session.jsonl"
    misnamed.write_bytes(gzip.compress(SESSION))
    assert _decompressed(misnamed) == SESSION
    assert detect_file(str(misnamed)).id == "codex"


def test_compression_multi_frame_zstd_reads_every_frame(tmp_path: Path) -> None:
    half = len(SESSION) // 2
    cctx = zstandard.ZstdCompressor()
    path = tmp_path / "s.jsonl.zst"
    path.write_bytes(cctx.compress(SESSION[:half]) + cctx.compress(SESSION[half:]))
    assert _decompressed(path) == SESSION
    with c.open_read(path) as fp:
        assert len(read(get("codex"), fp.read())) == SESSION.count(b"\n")


def test_compression_gzip_output_is_deterministic() -> None:
    assert c.compress(SESSION, c.Compression.GZIP) == c.compress(SESSION, c.Compression.GZIP)


def test_compression_plain_text_sniffs_as_none() -> None:
    assert c.sniff(b"{") is c.Compression.NONE


def test_compression_wrap_reader_iterates_lines() -> None:
    stream = c.wrap_reader(io.BytesIO(c.compress(SESSION, c.Compression.ZSTD)))
    assert sum(1 for _ in stream) == SESSION.count(b"\n")
