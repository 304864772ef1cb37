"""Read then write with no repairs gives identical bytes: fixtures, data files, real samples."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.formats.support import (
    DATA,
    FIXTURES,
    SAMPLES,
    detect,
    is_store,
    read,
    session_files,
    write,
)
from thinkfix.formats.registry import FORMATS
from thinkfix.formats.registry import detect as registry_detect

# A database store is never written back as bytes (its rows change in a transaction):
# tests/formats/test_store_fixtures.py holds its "no repair changes nothing" check.
FILES = [p for p in session_files(FIXTURES) + session_files(DATA) if not is_store(p)]
SAMPLE_FILES = [p for p in session_files(SAMPLES) if p.suffix != ".md"] if SAMPLES.is_dir() else []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_roundtrip_identity_with_detected_format(path: Path) -> None:
    data = path.read_bytes()
    fmt = detect(data, path)
    assert write(fmt, read(fmt, data)) == data


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_roundtrip_identity_with_every_format(path: Path, name: str) -> None:
    data = path.read_bytes()
    assert write(FORMATS[name], read(FORMATS[name], data)) == data


@pytest.mark.parametrize("data", [b"", b"\n", b"\n\n", b"{}", b"{}\n", b"{}\r\n{}", b" \t\n"])
def test_roundtrip_edge_shapes(data: bytes) -> None:
    for fmt in FORMATS.values():
        assert write(fmt, read(fmt, data)) == data


@pytest.mark.skipif(not SAMPLE_FILES, reason="../shared/samples is not present")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_roundtrip_real_samples(path: Path) -> None:
    """Local check against the real files in ../shared/samples (skipped elsewhere)."""
    data = path.read_bytes()
    found = registry_detect(data[:65536], str(path))
    formats = [found[0]] if found else list(FORMATS.values())
    for fmt in formats:
        records = read(fmt, data)
        assert write(fmt, records) == data
        assert all(r.error is None for r in records)


def test_roundtrip_read_streams_without_loading_the_file() -> None:
    line = (FIXTURES / "claude-code").glob("*.jsonl").__next__().read_bytes().split(b"\n")[0]
    data = (line + b"\n") * 20000
    fp = io.BufferedReader(io.BytesIO(data))
    first = next(FORMATS["claude-code"].read(fp))
    assert first.raw == line
    assert fp.tell() < len(data) // 10
