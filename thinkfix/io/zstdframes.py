"""Where a zstd stream's frames end, read from their headers as the bytes stream past.

python-zstandard's `stream_reader` returns what it decoded and then EOF when its input ends
inside a frame, where gzip's reader raises: a session cut short read as a shorter whole one,
or as empty, and was counted clean; `repair --in-place` then wrote the prefix back as a
complete frame, hiding the damage (review8, finding 10). `Frames` follows the frame format
(RFC 8878 section 3.1: a frame's header, its blocks' three-byte headers, its checksum; a
skippable frame's length) without decoding anything, and `checked_reader` raises EOFError at
the end of a stream that stops inside a frame. Decoding stays python-zstandard's (its
`stream_reader`), given its input up to one block's end at a time as `Frames` finds them
and read one source read at a time: a decode's output is at most one block (128 KiB; a zstd
bomb is read a block at a time), and a failure (a damaged block, a checksum, garbage after
the last frame) costs none of the bytes decoded before it, which the reader returns before
it raises (a read of many blocks kept nothing when one failed: a leak before the damage
went unscanned).
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO

from thinkfix.io.blockread import Decoded

_MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # to 0x184D2A5F
_FCS_SIZES = (0, 2, 4, 8)
_DICT_ID_SIZES = (0, 1, 2, 4)


class Frames:
    """The frame structure of a zstd stream fed in pieces: `complete` when it ends between
    frames, and where each block ends (`through_block`). Bad structure (a reserved block
    type, an unknown magic) is left to the decoder, which raises for it; this only tells a
    clean end from a cut one."""

    __slots__ = ("_broken", "_checksum", "_ending", "_held", "_skip", "_state")

    def __init__(self) -> None:
        self._held = bytearray()  # bytes of a header not yet whole
        self._skip = 0  # bytes of content (a block's, a skippable frame's) still to pass
        self._state = "magic"  # magic (between frames) | block | checksum
        self._checksum = False  # the frame being read ends with a 4-byte checksum
        self._broken = False  # bytes that are no frame: never complete
        self._ending = False  # the content being skipped is a block's

    @property
    def complete(self) -> bool:
        """Does the stream so far end between frames?"""
        return self._state == "magic" and not self._held and not self._skip and not self._broken

    def feed(self, data: bytes | memoryview) -> None:
        self._take(memoryview(data), stop=False)

    def through_block(self, data: bytes | memoryview) -> int:
        """Feeds `data` through the end of the first block whose content ends in it (all of
        it when none does, or when it is no frame); how many bytes that took."""
        return len(data) - len(self._take(memoryview(data), stop=True))

    def _take(self, view: memoryview, *, stop: bool) -> memoryview:
        """Reads `view`'s structure; what is left of it (something only where `stop` and a
        block's content ended before its end)."""
        while not self._broken:
            if self._skip:
                if not view:
                    return view
                n = min(self._skip, len(view))
                self._skip -= n
                view = view[n:]
                continue
            if self._ending:  # a block's content read whole
                self._ending = False
                if stop:
                    return view
            need = self._need()
            if need is None:  # no frame: the decoder raises for it, and this never ends
                self._broken = True
                break
            if len(self._held) == need:
                self._header(bytes(self._held))
                continue
            if not view:
                return view
            take = need - len(self._held)
            self._held += view[:take]
            view = view[take:]
        return view[:0]

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
            self._ending = True
            if last:
                self._state = "checksum" if self._checksum else "magic"
        elif int.from_bytes(header[:4], "little") == _MAGIC:
            self._checksum = bool(header[4] >> 2 & 1)
            self._state = "block"
        else:  # a skippable frame: its length, then its bytes
            self._skip = int.from_bytes(header[4:8], "little")


class _Blocks:
    """The compressed stream as python-zstandard's reader reads it: each read ends at the
    end of a block (`Frames.through_block`), so a read of the reader's that decodes one
    source read (`readinto1`) decodes at most one block."""

    __slots__ = ("_frames", "_input", "_raw", "ended")

    def __init__(self, raw: BinaryIO, frames: Frames) -> None:
        self._raw = raw
        self._frames = frames
        self._input = memoryview(b"")  # read, not yet given
        self.ended = False  # `raw` read to its end

    def read(self, size: int = -1) -> memoryview:
        """The input to the next block's end (a view, never a copy: python-zstandard reads
        any buffer)."""
        if not self._input:
            self._input = memoryview(self._raw.read(_RAW_BLOCK))
            if not self._input:
                self.ended = True
                return self._input
        n = self._frames.through_block(self._input)
        piece = self._input[:n]
        self._input = self._input[n:]
        return piece


class _Decoded(Decoded):
    """The decoded stream of the zstd stream `raw`, a block at a time: python-zstandard's
    `stream_reader` decodes into the caller's buffer and kept nothing of a read that failed
    part-way, so a session damaged after a leak lost the leak's chunk, up to the scan's
    whole block, unscanned beside the error. Its `readinto1` decodes one source read, one
    block here (128 KiB at most: a zstd bomb is read a block at a time), and `Decoded`
    returns what decoded before a failure, raising it on the next read. Its end is an
    EOFError where `raw` stopped inside a frame. Its `name` is the compressed file's, as
    `GzipFile` gives it: a reader may look beside the file (a zstd OpenCode part lost its
    message's file, and its role, without it)."""

    def __init__(self, raw: BinaryIO, zstandard: Any) -> None:
        super().__init__()
        self._raw = raw
        self._frames = Frames()
        self._blocks = _Blocks(raw, self._frames)
        self._reader = zstandard.ZstdDecompressor().stream_reader(
            self._blocks, read_size=_RAW_BLOCK, read_across_frames=True, closefd=False
        )
        # a block decoded into a smaller buffer: python-zstandard holds the rest, and gives
        # it only with more input (none where the file was cut short there)
        self._stage = bytearray(_BLOCK_MAX)
        self._staged = memoryview(b"")  # decoded into `_stage`, not yet returned

    @property
    def name(self) -> Any:
        return self._raw.name

    def _into(self, view: memoryview) -> int | None:
        if not self._staged and len(view) >= _BLOCK_MAX:
            n: int = self._reader.readinto1(view)  # straight into the caller's buffer
        else:
            if not self._staged:
                self._staged = memoryview(self._stage)[: self._reader.readinto1(self._stage)]
            n = min(len(self._staged), len(view))
            view[:n] = self._staged[:n]
            self._staged = self._staged[n:]
        if n or not self._blocks.ended:
            return n  # 0: a header, a skippable frame, an empty block
        if not self._frames.complete:
            raise EOFError("compressed file ended inside a zstd frame (cut short?)")
        return None

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


#: Compressed bytes read at a time (python-zstandard's own reader read 128 KiB + 3).
_RAW_BLOCK = 1 << 17
#: The most a block decodes to (RFC 8878 3.1.1.2.3: Block_Maximum_Size).
_BLOCK_MAX = 1 << 17


def checked_reader(raw: BinaryIO, zstandard: Any) -> BinaryIO:
    """A buffered decoding reader of the zstd stream `raw` (every frame in turn) whose end
    is an error where `raw` stopped inside a frame, and whose failed read keeps the bytes
    decoded before the failure."""
    return io.BufferedReader(_Decoded(raw, zstandard))
