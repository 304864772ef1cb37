"""Where a zstd stream's frames end, read from their headers as the bytes stream past.

python-zstandard's `stream_reader` returns what it decoded and then EOF when its input ends
inside a frame, where gzip's reader raises: a session cut short read as a shorter whole one,
or as empty, and was counted clean; `repair --in-place` then wrote the prefix back as a
complete frame, hiding the damage (review8, finding 10). `Frames` follows the frame format
(RFC 8878 section 3.1: a frame's header, its blocks' three-byte headers, its checksum; a
skippable frame's length) without decoding anything, and `checked_reader` raises EOFError at
the end of a stream that stops inside a frame. Decoding stays python-zstandard's, its output
bounded per read as before (a zstd bomb is still read a block at a time).
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO

_MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # to 0x184D2A5F
_FCS_SIZES = (0, 2, 4, 8)
_DICT_ID_SIZES = (0, 1, 2, 4)


class Frames:
    """The frame structure of a zstd stream fed in pieces: `complete` when it ends between
    frames. Bad structure (a reserved block type, an unknown magic) is left to the decoder,
    which raises for it; this only tells a clean end from a cut one."""

    __slots__ = ("_broken", "_checksum", "_held", "_skip", "_state")

    def __init__(self) -> None:
        self._held = bytearray()  # bytes of a header not yet whole
        self._skip = 0  # bytes of content (a block's, a skippable frame's) still to pass
        self._state = "magic"  # magic (between frames) | block | checksum
        self._checksum = False  # the frame being read ends with a 4-byte checksum
        self._broken = False  # bytes that are no frame: never complete

    @property
    def complete(self) -> bool:
        """Does the stream so far end between frames?"""
        return self._state == "magic" and not self._held and not self._skip and not self._broken

    def feed(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while not self._broken:
            if self._skip:
                if not view:
                    return
                n = min(self._skip, len(view))
                self._skip -= n
                view = view[n:]
                continue
            need = self._need()
            if need is None:  # no frame: the decoder raises for it, and this never ends
                self._broken = True
                return
            if len(self._held) == need:
                self._header(bytes(self._held))
                continue
            if not view:
                return
            take = need - len(self._held)
            self._held += view[:take]
            view = view[take:]

    def _need(self) -> int | None:
        """The size of the header being read, as far as the bytes held tell (a frame's grows
        from its magic to its descriptor to the fields the descriptor names); None for bytes
        that start no frame."""
        if self._state == "block":
            return 3
        if self._state == "checksum":
            return 4
        held = self._held
        if len(held) < 4:
            return 4
        magic = int.from_bytes(held[:4], "little")
        if magic & 0xFFFFFFF0 == _SKIPPABLE:
            return 8
        if magic != _MAGIC:
            return None
        if len(held) < 5:
            return 5
        descriptor = held[4]
        single = descriptor >> 5 & 1
        fcs = _FCS_SIZES[descriptor >> 6] or single
        return 5 + (not single) + _DICT_ID_SIZES[descriptor & 3] + fcs

    def _header(self, header: bytes) -> None:
        """One whole header read: what follows it."""
        self._held.clear()
        if self._state == "checksum":
            self._state = "magic"
        elif self._state == "block":
            word = int.from_bytes(header, "little")
            last, kind, size = word & 1, word >> 1 & 3, word >> 3
            self._skip = 1 if kind == 1 else size  # an RLE block holds one byte
            if last:
                self._state = "checksum" if self._checksum else "magic"
        elif int.from_bytes(header[:4], "little") == _MAGIC:
            self._checksum = bool(header[4] >> 2 & 1)
            self._state = "block"
        else:  # a skippable frame: its length, then its bytes
            self._skip = int.from_bytes(header[4:8], "little")


class _Wrapped(io.RawIOBase):
    """A readable stream over `inner` (closed with it) that watches the frames of a zstd
    stream; `readinto` says what it does with each read."""

    def __init__(self, inner: Any, frames: Frames) -> None:
        self._inner = inner
        self._frames = frames

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()


class _Fed(_Wrapped):
    """The compressed stream, each byte read also fed to `frames`."""

    def readinto(self, buffer: Any) -> int:
        n: int = self._inner.readinto(buffer)
        if n:
            self._frames.feed(memoryview(buffer)[:n])
        return n


class _Checked(_Wrapped):
    """The decoded stream; its end an EOFError where the input stopped inside a frame. Its
    `name` is the compressed file's, as `GzipFile` gives it: a reader may look beside the
    file (a zstd OpenCode part lost its message's file, and its role, without it)."""

    def __init__(self, inner: Any, frames: Frames, raw: BinaryIO) -> None:
        super().__init__(inner, frames)
        self._raw = raw

    @property
    def name(self) -> Any:
        return self._raw.name

    def readinto(self, buffer: Any) -> int:
        n: int = self._inner.readinto(buffer)
        if n == 0 and len(buffer) and not self._frames.complete:
            raise EOFError("compressed file ended inside a zstd frame (cut short?)")
        return n


def checked_reader(raw: BinaryIO, zstandard: Any) -> BinaryIO:
    """A buffered decoding reader of the zstd stream `raw` (every frame in turn) whose end
    is an error where `raw` stopped inside a frame."""
    frames = Frames()
    reader = zstandard.ZstdDecompressor().stream_reader(
        io.BufferedReader(_Fed(raw, frames)), read_across_frames=True, closefd=True
    )
    return io.BufferedReader(_Checked(reader, frames, raw))
