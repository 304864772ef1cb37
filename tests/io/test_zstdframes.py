"""`io.zstdframes`: a zstd stream cut short is an error, never a shorter whole one.

python-zstandard's reader returns what it decoded and then EOF when its input stops inside a
frame (review8, finding 10). `Frames` reads the frame structure as the bytes pass; these
properties hold it to real streams (python-zstandard's frames: one or many, with and
without a checksum or the content size, skippable frames between them, RLE blocks), cut at
every byte and fed in every split.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.io.compression import open_read
from thinkfix.io.zstdframes import Frames, checked_reader

payloads = st.one_of(
    st.binary(max_size=3000),
    st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=8), st.integers(1, 40_000)),
)


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, bytes, set[int]]:
    """(the compressed stream, what it decodes to, where its frames end): frames of drawn
    payloads and settings, skippable frames among them."""
    parts: list[bytes] = []
    plain: list[bytes] = []
    ends: set[int] = set()
    for payload in draw(st.lists(payloads, min_size=1, max_size=4)):
        if draw(st.booleans()):
            size = draw(st.integers(0, 20))
            parts.append((0x184D2A50 + draw(st.integers(0, 15))).to_bytes(4, "little"))
            parts.append(size.to_bytes(4, "little") + b"\x00" * size)
            ends.add(len(b"".join(parts)))
        compressor = zstandard.ZstdCompressor(
            level=draw(st.integers(1, 5)),
            write_checksum=draw(st.booleans()),
            write_content_size=draw(st.booleans()),
        )
        parts.append(compressor.compress(payload))
        plain.append(payload)
        ends.add(len(b"".join(parts)))
    return b"".join(parts), b"".join(plain), ends


def _fed(data: bytes, cuts: list[int]) -> Frames:
    frames = Frames()
    at = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        frames.feed(data[at:cut])
        at = cut
    frames.feed(data[at:])
    return frames


@settings(max_examples=60, deadline=None)
@given(streams(), st.lists(st.integers(0, 1 << 20), max_size=5))
def test_a_stream_is_complete_only_whole(
    stream: tuple[bytes, bytes, set[int]], cuts: list[int]
) -> None:
    """Whole, in any split, it is complete; cut at any byte but a frame's end, it is not."""
    data, _, ends = stream
    assert _fed(data, cuts).complete
    for cut in range(len(data)):
        assert _fed(data[:cut], cuts).complete == (cut == 0 or cut in ends), cut


@settings(max_examples=30, deadline=None)
@given(streams(), st.data())
def test_the_reader_decodes_a_whole_stream_and_refuses_a_cut_one(
    stream: tuple[bytes, bytes, set[int]], data: st.DataObject
) -> None:
    """Whole, it decodes to the payloads; cut inside a frame, its read raises (where
    python-zstandard's own reader returned a prefix and EOF)."""
    raw, plain, _ = stream
    assert checked_reader(io.BytesIO(raw), zstandard).read() == plain
    inside = [cut for cut in range(1, len(raw)) if not _fed(raw[:cut], []).complete]
    assert inside  # not vacuous: every frame has bytes after its first
    cut = data.draw(st.sampled_from(inside))
    with pytest.raises((EOFError, zstandard.ZstdError)):
        checked_reader(io.BytesIO(raw[:cut]), zstandard).read()


def test_a_session_file_cut_short_is_an_error_where_gzip_is_one_too(tmp_path: Path) -> None:
    """Through `open_read`, as every reader opens a session: the cut zstd file raises as the
    cut gzip file does (both EOFError), the whole one reads."""
    import gzip

    text = b'{"type":"assistant"}\n' * 5000
    for name, packed in (
        ("s.jsonl.zst", zstandard.ZstdCompressor().compress(text)),
        ("s.jsonl.gz", gzip.compress(text)),
    ):
        path = tmp_path / name
        path.write_bytes(packed)
        with open_read(path) as fp:
            assert fp.read() == text
        path.write_bytes(packed[: len(packed) // 2])
        with open_read(path) as fp, pytest.raises(EOFError):
            fp.read()
