"""A newline bomb (#22 item 10): a .gz/.zst of a few KB that decompresses to millions of
empty lines. The record limit bounds one record and the bomb limit the decompressed bytes,
but neither bounds the number of lines: scan held ~580 MB (detection split its 32 MB head into
a list of every line, twice) and repair 8 bytes a line (its line index: 4.8 GB for 580 MB of
newlines). Each command runs in a fresh process and its peak RSS is measured, as
test_repair_memory.py does."""

from __future__ import annotations

import gzip
import os
import tracemalloc
from pathlib import Path

import orjson
import pytest
import zstandard

from tests.engine.memory_probe import thinkfix_peak
from tests.formats.support import eager_head
from thinkfix.formats.detection import MAX_LINES, sample

#: Empty lines in the bomb: 16 Mi of them, 16 MiB decompressed. What the bound is for, a cost
#: per line, still breaks it clearly: 8 bytes a line (the old line index) is 128 MiB more than
#: the ~80-100 MB these runs peak at, the head split into a list of lines (twice) 256 MiB more.
NEWLINES = 16 << 20
LIMIT_MB = 150  # the interpreter and its imports take ~45-90 MB of it

_LEAK = (
    orjson.dumps(
        {
            "type": "assistant",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "<think>plan</think>Answer"}],
            },
        }
    )
    + b"\n"
)


def _bomb(path: Path, kind: str) -> Path:
    """A leaking record, NEWLINES empty lines, the record again: compressed as it is made."""
    chunk = b"\n" * (1 << 20)
    with open(path, "wb") as raw:
        if kind == "gzip":
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fp:
                fp.write(_LEAK)
                for _ in range(NEWLINES // len(chunk)):
                    fp.write(chunk)
                fp.write(_LEAK)
        else:
            with zstandard.ZstdCompressor(level=19).stream_writer(raw) as fp:
                fp.write(_LEAK)
                for _ in range(NEWLINES // len(chunk)):
                    fp.write(chunk)
                fp.write(_LEAK)
    os.utime(path, (1e9, 1e9))  # not a live session
    return path


def _run(tmp: Path, *args: str) -> tuple[int, float, str]:
    """Exit code, peak RSS (MB) and output of `thinkfix ARGS` in a fresh process."""
    return thinkfix_peak(*args, env={**os.environ, "THINKFIX_STATE_DIR": str(tmp / "state")})


@pytest.fixture(scope="module", params=["gzip", "zstd"])
def bomb(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bomb")
    suffix = "gz" if request.param == "gzip" else "zst"
    path = _bomb(folder / f"1b2c3d4e-bomb.jsonl.{suffix}", request.param)
    assert path.stat().st_size < 100_000  # a few KB (gzip) or less: 16 MiB inside
    return path


@pytest.mark.memory
def test_scan_of_a_newline_bomb_holds_bounded_memory(bomb: Path, tmp_path: Path) -> None:
    code, peak, out = _run(tmp_path, "scan", "--isolated", "--output-format", "json", str(bomb))
    assert code == 1 and peak < LIMIT_MB, (code, peak, out[-500:])
    assert '"findings": 2' in out or '"leaking_messages": 2' in out, out[-2000:]


@pytest.mark.memory
def test_repair_of_a_newline_bomb_holds_bounded_memory(bomb: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    code, peak, out = _run(
        tmp_path, "repair", "--isolated", "--jobs", "1", "--out", str(out_dir), str(bomb)
    )
    assert code == 0 and peak < LIMIT_MB, (code, peak, out[-500:])
    data = (out_dir / bomb.name).read_bytes()
    if bomb.suffix == ".gz":
        content = gzip.decompress(data)
    else:
        content = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    # The run of empty lines kept exactly (after the first record's own newline), both
    # leaks repaired.
    run = b"\n" * (NEWLINES + 1)
    assert run in content and run + b"\n" not in content
    assert b"<think>" not in content


def test_detection_parses_a_head_of_empty_lines_without_a_list_of_them() -> None:
    """The head is capped at 32 MB, but every line of it was split into a list (and the list
    copied): ~540 MB for 32 MB of newlines. Only the first MAX_LINES lines are looked at."""
    head = _LEAK + b"\n" * (16 << 20) + _LEAK
    sample.cache_clear()
    tracemalloc.start()
    parsed = sample(head)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    sample.cache_clear()
    assert parsed.lines == 1 and len(parsed.values) == 1
    assert peak < 4 << 20, peak  # 16 MiB of newlines split was 256 MiB


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"{}",
        b'{"a":1}\n',
        b'{"a":1}\n{"b":2}',
        b'{"a":1}\n{"b":',
        b"\n" * (MAX_LINES - 1) + b'{"a":1}',
        b"\n" * MAX_LINES + b'{"a":1}',
        b"\n" * (MAX_LINES + 1) + b'{"a":1}\n',
        b'{"a":1}\n' * (MAX_LINES + 5),
        b'{"a":1}\n' * MAX_LINES + b'{"b":2}',
    ],
)
def test_detection_sample_is_unchanged_around_the_line_cap(head: bytes) -> None:
    """The bounded split gives the sample the full split gave (the old code, inlined)."""
    sample.cache_clear()
    got = sample(head)
    complete, looked = eager_head(head, MAX_LINES)
    assert got.lines == len(looked)
    assert list(got.values) == [orjson.loads(p) for p in looked]
    assert (got.doc is not None) == (len(looked) == 1 and len(complete) == 1)
