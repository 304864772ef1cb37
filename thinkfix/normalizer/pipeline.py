"""Scanner and stages wired together; the engine behind `normalize` and `StreamNormalizer`."""

from __future__ import annotations

from thinkfix.normalizer.kinds import Label, LeakKind
from thinkfix.normalizer.policy import Policy
from thinkfix.normalizer.scanner import Scanner
from thinkfix.normalizer.spans import Finding, Result, Span
from thinkfix.normalizer.stages import Deduper, Piece, Trimmer


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
        self.deduper = Deduper(policy, native)
        self.native = native
        self.spans: list[Span] = []  # what batch mode keeps (`keep`); streaming drains it
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
        block = scanner.st.block if label is Label.THINKING else None
        piece = Piece(start, scanner.length, label, block, chunk)
        scanner.release(start)
        return self.deduper.push(self.trimmer.push([piece]))

    def finish(self, last: str = "") -> list[Piece]:
        """Settle everything; `last`, the text's last chunk, is read knowing it is the last
        (so the scan never asks whether a delimiter could go on past it)."""
        if last:
            self.scanner.feed(last)
        self.scanner.run(final=True)
        out = self._drain()
        tail = self.deduper.push(self.trimmer.finish()) + self.deduper.finish()
        self.finished = True
        return out + tail

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
            return Label.VISIBLE if trimmer.visible_flowing() else None
        if deduper.active or not trimmer.thinking_flowing(self.scanner.st.block):
            return None
        return Label.THINKING

    def _drain(self) -> list[Piece]:
        scanner = self.scanner
        raw = scanner.take()
        pieces = [
            Piece(s.start, s.end, s.label, s.block, scanner.text_at(s.start, s.end)) for s in raw
        ]
        if raw:
            scanner.release(raw[-1].end)
        return self.deduper.push(self.trimmer.push(pieces))

    def findings(self) -> tuple[Finding, ...]:
        """Findings so far (all of them once finished), duplicates relabelled."""
        out = []
        for bf in self.scanner.findings:
            f = bf.finding
            if (
                bf.block is not None
                and bf.block in self.deduper.duplicates
                and f.kind is LeakKind.BLOCK
            ):
                f = Finding(LeakKind.DUPLICATE, f.tag, f.start, f.end)
            out.append(f)
        return tuple(sorted(out, key=lambda f: (f.start, f.end)))

    def keep(self, pieces: list[Piece]) -> None:
        """Batch mode: add `pieces` to the result's spans, each merged into the last it
        continues, so a text of many tokens keeps a few spans, not a piece per token."""
        spans = self.spans
        for p in pieces:
            if p.end <= p.start:
                continue
            last = spans[-1] if spans else None
            if last is not None and last.end == p.start:
                if last.label is p.label and last.block == p.block:
                    spans[-1] = Span(last.start, p.end, p.label, p.block)
                    continue
            elif last is not None:
                self._in_order = False
            spans.append(Span(p.start, p.end, p.label, p.block))

    def result(self, text: str) -> Result:
        spans = self.spans if self._in_order else _merge(sorted(self.spans, key=_start))
        return Result(text, tuple(spans), self.findings(), self.native)


def _start(span: Span) -> int:
    return span.start


def _merge(spans) -> tuple[Span, ...]:  # type: ignore[no-untyped-def]
    out: list[Span] = []
    for s in spans:
        if s.end <= s.start:
            continue
        if out and out[-1].label is s.label and out[-1].block == s.block and out[-1].end == s.start:
            out[-1] = Span(out[-1].start, s.end, s.label, s.block)
        else:
            out.append(s)
    return tuple(out)
