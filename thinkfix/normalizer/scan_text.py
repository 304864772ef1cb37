"""The text a scanner was fed: kept as the chunks that came, read back by absolute offset,
and released from the front once every span before a point is out."""

from __future__ import annotations

from bisect import bisect_right

from thinkfix.normalizer.scan_state import ScanBase


class ChunkText(ScanBase):
    """Chunk storage: no chunk is joined or copied until a span or a look-back reads it."""

    _chunks: list[str]
    _starts: list[int]  # absolute offset of each chunk
    _chunk_base: int  # absolute offset of the first chunk kept
    _dropped: int  # chunks released from the front (kept as a count: no list shifting)

    def _init_text(self) -> None:
        self.length = 0
        self._chunks = []
        self._starts = []
        self._chunk_base = 0
        self._dropped = 0

    def feed(self, chunk: str) -> None:
        if chunk:
            self._chunks.append(chunk)
            self._starts.append(self.length)
            self.length += len(chunk)

    def text_at(self, start: int, end: int) -> str:
        """The fed text between two absolute offsets (both at or after the released point)."""
        if start >= end:
            return ""
        if self._dropped == len(self._chunks) - 1:  # one chunk kept (a batch text's only one)
            base = self._starts[-1]
            return self._chunks[-1][start - base : end - base]
        i = max(bisect_right(self._starts, start, lo=self._dropped) - 1, self._dropped)
        first = self._chunks[i]
        base = self._starts[i]
        if end <= base + len(first):
            return first[start - base : end - base]
        out = [first[start - base :]]
        chunks = self._chunks
        base += len(first)
        for j in range(i + 1, len(chunks)):  # by index: a slice would copy the whole tail
            chunk = chunks[j]
            if end <= base + len(chunk):
                out.append(chunk[: end - base])
                break
            out.append(chunk)
            base += len(chunk)
        return "".join(out)

    def release(self, upto: int) -> None:
        """Forget text before `upto`; the caller has taken what it needs from it (the text a
        pending decision may still read is kept whatever `upto` says)."""
        st, ck = self.st, self._ck
        upto = min(
            upto,
            self.pos - self.context,
            st.seg,
            ck.pos if ck else upto,
            self.spans[0].start if self.spans else upto,
            st.window if st.window is not None else upto,
        )
        chunks, starts = self._chunks, self._starts
        n = self._dropped
        while n < len(chunks) - 1 and starts[n + 1] <= upto:
            chunks[n] = ""
            n += 1
        self._dropped = n
        self._chunk_base = starts[n] if starts else 0
        if n > 1024 and n * 2 > len(chunks):  # compact now and then
            del chunks[:n], starts[:n]
            self._dropped = 0

    def absorb_emitted(self, length: int, tail: str) -> None:
        """Account for `length` characters the caller emitted itself; `tail` ends them."""
        if len(tail) == length < self.context and self.length > self._chunk_base:
            # a short run: keep the text before it too, for the look-back at the next token
            keep = max(self._chunk_base, self.length - (self.context - length))
            tail = self.text_at(keep, self.length) + tail
        start = self.length + length - len(tail)
        self._chunks[:] = [tail]  # nothing before it is needed: the scanner was settled
        self._starts[:] = [start]
        self._dropped, self._chunk_base = 0, start
        self.length += length
        self.pos = self.length
        self.st.seg = self.length

    def _look_back(self, lo: int, hi: int, w: str, off: int) -> str:
        """The text between absolute `lo` and `hi`: from the scan window `w` (whose first
        character is at `off`) when it holds it, else from the kept chunks."""
        return w[lo - off : hi - off] if lo - off >= 0 else self.text_at(lo, hi)
