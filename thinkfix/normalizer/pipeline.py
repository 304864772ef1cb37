"""Scanner and stages wired together; the engine behind `normalize` and `StreamNormalizer`."""

from __future__ import annotations

from operator import itemgetter

from thinkfix.normalizer.kinds import THINKING, VISIBLE, Label, LeakKind
from thinkfix.normalizer.policy import Policy
from thinkfix.normalizer.scanner import Scanner
from thinkfix.normalizer.spans import Finding, Result, new_result, spans_of
from thinkfix.normalizer.stages import Deduper, Piece, Trimmer, new_piece

#: A span's fields, in order, before it is made a `Span`.
_Row = tuple[int, int, Label, int | None]
_NO_ROW: _Row = (-1, -1, VISIBLE, None)  # what `keep` compares a first piece with: it ends nowhere


class Pipeline:
    """Text in, final labelled pieces out, in order, as soon as they are settled."""

    def __init__(
        self,
        policy: Policy,
        *,
        native: str = "",
        start_in_reasoning: bool = False,
        holdback: int | None = None,
        followed_by_tool_call: bool = False,
        model: str | None = None,
    ) -> None:
        self.scanner = Scanner(
            policy,
            start_in_reasoning=start_in_reasoning,
            holdback=holdback,
            followed_by_tool_call=followed_by_tool_call,
            model=model,
        )
        self.trimmer = Trimmer(policy.trim)
        self.deduper = Deduper.of(policy, native)
        self.native = native
        # what batch mode keeps (`keep`): (start, end, label, block) rows, made spans at the end
        self._rows: list[_Row] = []
        self._in_order = True
        self.finished = False

    def feed(self, chunk: str) -> list[Piece]:
        scanner = self.scanner
        start, seg = scanner.length, scanner.st.seg
        label = scanner.skip_plain(chunk)
        if label is None:
            scanner.feed(chunk)
            scanner.run(final=False)
            return self._drain()
        if seg != start or not scanner.settled():
            return []  # it waits, with the text before it, for the scanner's next cut
        # the hot path of a live stream: plain text with nothing pending goes straight out
        scanner.pass_through()
        block = scanner.st.block if label is THINKING else None
        piece = Piece(start, scanner.length, label, block, chunk)
        scanner.release(start)
        return self.deduper.push(self.trimmer.push([piece]))

    def finish(self, last: str = "") -> list[Piece]:
        """Settle everything; `last`, the text's last chunk, is read knowing it is the last
        (so the scan never asks whether a delimiter could go on past it)."""
        if last:
            self.scanner.feed(last)
        self.scanner.run(final=True)
        out = self._drain(last=True)
        tail = self.trimmer.finish()
        deduper = self.deduper
        if deduper.active:
            tail = deduper.push(tail) + deduper.finish()
        self.finished = True
        return out + tail if tail else out

    def open_visible(self, chunk: str) -> bool:
        """Take a first chunk of plain visible text by setting the state reading it would reach.

        Only with holdback 0, where reading it settles it at once; the caller emits the
        chunk and accounts for it as the stream's fast lane does. False when it must be read.
        """
        scanner = self.scanner
        if (
            scanner.length
            or scanner.holdback != 0
            or scanner.start_in_reasoning
            or not self.trimmer.enabled
            or not scanner.lead_is_visible(chunk)
        ):
            return False
        scanner.open_visible()
        self.trimmer.open_visible()
        return True

    def waiting(self) -> bool:
        """True when a plain chunk could only be held: with unbounded holdback, its fate
        waits on a later delimiter or the end of the text (batch reads it all at once too)."""
        return self.scanner.holdback is None and self.scanner.waits_on_plain()

    def fast_label(self) -> Label | None:
        """The label every plain chunk would get right now, with nothing held anywhere; else None."""
        mode = self.scanner.plain_mode()
        trimmer, deduper = self.trimmer, self.deduper
        if mode is None or deduper.held or not trimmer.enabled:
            return None
        if mode.value == "out":
            return VISIBLE if trimmer.visible_flowing() else None
        if deduper.active or not trimmer.thinking_flowing(self.scanner.st.block):
            return None
        return THINKING

    def _drain(self, *, last: bool = False) -> list[Piece]:
        """The scanner's final spans as pieces, through the stages; `last` when the text is
        over (nothing reads it again, so it need not be released)."""
        scanner = self.scanner
        raw = scanner.take()
        if not raw:
            return []
        # the spans tile the text from the first to the last: one read, then slices of it
        lo, hi = raw[0].start, raw[-1].end
        text = scanner.text_at(lo, hi)
        pieces = [new_piece(Piece, (a, b, c, d, text[a - lo : b - lo])) for a, b, c, d in raw]
        if not last:
            scanner.release(hi)
        pieces = self.trimmer.push(pieces)
        return self.deduper.push(pieces) if self.deduper.active else pieces

    def findings(self) -> tuple[Finding, ...]:
        """Findings so far (all of them once finished), duplicates relabelled."""
        duplicates = self.deduper.duplicates
        out = [bf.finding for bf in self.scanner.findings]
        if duplicates:
            for n, (f, block) in enumerate(self.scanner.findings):
                if block is not None and block in duplicates and f.kind is LeakKind.BLOCK:
                    out[n] = Finding(LeakKind.DUPLICATE, f.tag, f.start, f.end)
        if len(out) > 1:
            out.sort(key=_offsets)
        return tuple(out)

    def keep(self, pieces: list[Piece]) -> None:
        """Batch mode: add `pieces` to the result's spans, each merged into the last it
        continues, so a text of many tokens keeps a few spans, not a piece per token."""
        rows = self._rows
        last = rows[-1] if rows else _NO_ROW
        for start, end, label, block, _ in pieces:
            if end <= start:
                continue
            if last[1] == start:
                if last[2] is label and last[3] == block:
                    last = rows[-1] = (last[0], end, label, block)
                    continue
            elif rows:
                self._in_order = False
            last = (start, end, label, block)
            rows.append(last)

    def result(self, text: str) -> Result:
        rows = self._rows if self._in_order else _merge(sorted(self._rows, key=_first))
        return new_result(text, spans_of(rows), self.findings(), self.native)


_first = itemgetter(0)


def _offsets(f: Finding) -> tuple[int, int]:
    return f.start, f.end


def _merge(rows: list[_Row]) -> list[_Row]:
    out: list[_Row] = []
    for row in rows:
        start, end, label, block = row
        if end <= start:
            continue
        if out and out[-1][2] is label and out[-1][3] == block and out[-1][1] == start:
            out[-1] = (out[-1][0], end, label, block)
        else:
            out.append(row)
    return out
