"""Where each line of a file opened for repair starts, held in memory bounded by its size.

The planner reads records by index (`source.FileRecords`): a record's bytes run from its
line's start to the next one's. Eight bytes a line was unbounded (a newline bomb), so a
start is kept every `SPACING` bytes and the others are found again when asked for."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Sequence
from typing import Protocol, TypeVar, cast, overload

from thinkfix.io.filestate import BLOCK, FileChanged

#: The line index keeps a line's start only when it is at least this many bytes past the last
#: start it kept (the others found again by reading 4 KB): 16 bytes per 4 KB of the file at
#: most. Every 256 bytes cost a dry run ~5-10% (a Python step a line, #26 item 4).
SPACING = 4096
#: Windows of skipped starts held for lines looked up again, `spacing` starts (8 bytes) each
#: at most: a planner goes back and forth between records (one held read each ~2x, #26).
WINDOWS = 64


T = TypeVar("T")


class Indexed(Sequence[T]):
    """A sequence whose items are found or read when asked (`_item`, for an index already
    checked): slices, negative indices and the bounds are dealt with here, once for the line
    indexes and the records of a file (`source.FileRecords`)."""

    def _item(self, index: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        size = len(self)
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(size))]
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        return self._item(index)


class Readable(Protocol):
    """What the index reads: a `source.Source`."""

    path: str
    size: int
    whole: bytes | None  # the whole content, where the survey read it in one block

    def read(self, start: int, end: int) -> bytes: ...


class LineIndex(Indexed[int]):
    """Where each line of a Source starts, held in memory bounded by the file's size.

    Eight bytes a line was unbounded (a newline bomb: a few KB of zstd holding hundreds of
    millions of empty lines made gigabytes of it). A start is kept when it is at least
    `spacing` bytes past the last one kept, with its line number once lines are skipped; a
    skipped line's start is found again from the nearest kept one (within `spacing` bytes)."""

    def __init__(self, source: Readable, spacing: int) -> None:
        self.source, self.spacing = source, spacing
        self.starts = array("q")  # the kept starts...
        self.lines: array[int] | None = None  # ...and their line numbers, once one is skipped
        self.total = 0
        self._windows: dict[int, array[int]] = {}  # kept entry -> its skipped lines' starts

    @classmethod
    def build(cls, source: Readable, spacing: int = 0) -> LineIndex:
        """The index of `source`, in one pass over its bytes (`bytes.find` and `count` jump
        over the lines not kept, so an empty line costs no Python step): the survey's own
        bytes where it read the file in one block (`Source.whole`: not read again, #26
        item 4), else block reads."""
        index = cls(source, spacing or SPACING)
        size, gap = source.size, index.spacing
        if not size:
            return index
        starts = index.starts
        keep = starts.append
        keep(0)
        lines = None  # index.lines, once a line is skipped
        newlines = at = 0
        want = gap  # the first start that may be kept
        while at < size:
            block = source.whole if source.whole is not None else b""
            if not block:
                block = source.read(at, min(size, at + BLOCK))
                if not block:
                    break
            end = at + len(block)
            p = max(want - 1, at) - at
            done = 0  # newlines of this block before `done` are counted
            find, count = block.find, block.count
            while (nl := find(b"\n", p)) >= 0 and at + nl + 1 < size:
                # none in p..nl: only the bytes the search jumped over are counted
                newlines += count(b"\n", done, p) + 1
                done = nl + 1
                start = at + done
                if lines is None:
                    if newlines == len(starts):  # every line kept so far: no numbers needed
                        keep(start)
                        want = start + gap
                        if want - 1 >= end:
                            break
                        p = want - 1 - at
                        continue
                    lines = index.lines = array("q", range(len(starts)))
                keep(start)
                lines.append(newlines)
                want = start + gap
                if want - 1 >= end:
                    break
                p = want - 1 - at
            newlines += count(b"\n", done)
            at = end
        index.total = newlines + (0 if source.read(at - 1, at) == b"\n" else 1)
        if index.lines is None and index.total != len(index.starts):  # the last lines skipped
            index.lines = array("q", range(len(index.starts)))
        return index

    def __len__(self) -> int:
        return self.total

    def _item(self, index: int) -> int:
        if self.lines is None:
            return self.starts[index]
        kept = bisect_right(self.lines, index) - 1
        first = self.lines[kept]
        if first == index:
            return self.starts[kept]
        window = self._windows.get(kept)
        if window is None:
            if len(self._windows) >= WINDOWS:
                self._windows.clear()
            window = self._windows[kept] = self._starts_after(kept)
        return window[index - first - 1]

    def _starts_after(self, kept: int) -> array[int]:
        """The starts of the lines skipped after kept entry `kept` (within `spacing` bytes)."""
        start, lines = self.starts[kept], cast("array[int]", self.lines)
        after = lines[kept + 1] if kept + 1 < len(lines) else self.total
        stop = min(self.source.size, start + self.spacing)
        whole = self.source.whole
        block, base = (whole, 0) if whole is not None else (self.source.read(start, stop), start)
        out, want = array("q"), after - lines[kept] - 1
        find, end = block.find, stop - base
        p = find(b"\n", start - base, end)
        while p >= 0 and len(out) < want:
            out.append(base + p + 1)
            p = find(b"\n", p + 1, end)
        return out


#: A start is found by stepping lines from the nearest one the survey saw when it is at most
#: this many lines on; farther, the whole-file index is built (once) and asked instead.
STEP = 64
#: Starts found by stepping held at most (past that the whole-file index, bounded by the
#: file's size, is built): a plan reading many records far apart holds no entry per line.
STEPPED = 1 << 16
#: Bytes read at a time while stepping where the survey kept no bytes (`Source.whole`).
CHUNK = 65536


class SeenLines(Indexed[int]):
    """Where each line of a Source starts, from the starts of the lines the survey's reader
    yielded (`SparseReader(offsets=True)`): a line near one of them (a record's end, a
    neighbour the planner reads) is found by stepping with `find`, and no whole-file index is
    built unless a start far from every seen one is asked for (a `bytes.count` over the file
    and a step per 4 KB, ~70 ms per 100 MB, #26 item 4)."""

    def __init__(self, source: Readable, seen: dict[int, int], total: int) -> None:
        self.source, self.total = source, total
        self.seen = dict(seen)
        if total:  # the first line starts the file; "the line after the last" ends it
            self.seen.setdefault(0, 0)
            self.seen[total] = source.size
        self.keys = sorted(self.seen)  # the lines the reader saw (those stepped to are added)
        self.starts = [self.seen[k] for k in self.keys]
        self.last = (0, 0, -1)  # `line_at`'s last answer: (line, its start, the byte asked)
        self.most = len(self.keys) + STEPPED  # starts held at most (else: the whole index)
        self.full: LineIndex | None = None

    def __len__(self) -> int:
        return self.total

    def _item(self, index: int) -> int:
        if self.full is not None:
            return self.full[index]
        at = self.seen.get(index)
        if at is not None:
            return at
        k = bisect_right(self.keys, index)
        # the nearest lines seen before and after (Codex's event copies are read backwards)
        first, after = self.keys[k - 1], self.keys[k]
        if min(index - first, after - index) > STEP or len(self.seen) > self.most:
            return self.whole()[index]
        if index - first <= after - index:
            at = self.seen[first]
            for line in range(first + 1, index + 1):
                at = self.seen[line] = self.line_end(at)
        else:
            at = self.seen[after]
            for line in range(after - 1, index - 1, -1):
                at = self.seen[line] = self.line_start(at)
        return at

    def whole(self) -> LineIndex:
        """The whole-file index, built once (a start asked for far from every seen one)."""
        if self.full is None:
            self.full = LineIndex.build(self.source)
            if len(self.full) != self.total:
                raise FileChanged(f"{self.source.path}: changed while it was being read; skipped")
        return self.full

    def line_end(self, start: int) -> int:
        """Where the line after the one starting at `start` starts (the file's size if none)."""
        source, size = self.source, self.source.size
        whole = source.whole
        if whole is not None:
            nl = whole.find(b"\n", start)
            return size if nl < 0 else nl + 1
        at = start
        while at < size:
            block = source.read(at, min(size, at + CHUNK))
            if not block:
                break
            nl = block.find(b"\n")
            if nl >= 0:
                return at + nl + 1
            at += len(block)
        return size

    def line_start(self, end: int) -> int:
        """Where the line before the one starting at `end` starts."""
        source, at = self.source, end - 1  # the byte at `at` is that line's newline
        if source.whole is not None:
            return source.whole.rfind(b"\n", 0, at) + 1
        while at > 0:
            low = max(0, at - CHUNK)
            nl = source.read(low, at).rfind(b"\n")
            if nl >= 0:
                return low + nl + 1
            at = low
        return 0

    def line_at(self, pos: int) -> tuple[int, int]:
        """The line holding byte `pos` and where it starts: counted from the nearest line seen
        at or before `pos`, or from the last `pos` asked for when that is nearer (a search
        asks in file order, for every assistant line of a file at times)."""
        k = bisect_right(self.starts, pos) - 1
        line, start = self.keys[k], self.starts[k]
        at = start
        last = self.last
        if start <= last[2] <= pos:
            line, start, at = last
        whole = self.source.whole
        while at < pos:  # the bytes between, a chunk at a time (a file is never held whole)
            end = pos if whole is not None else min(pos, at + BLOCK)
            block, base = (whole, 0) if whole is not None else (self.source.read(at, end), at)
            line += block.count(b"\n", at - base, end - base)
            nl = block.rfind(b"\n", at - base, end - base)
            if nl >= 0:
                start = base + nl + 1
            at = end
        self.last = (line, start, pos)
        return line, start
