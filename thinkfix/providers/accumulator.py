"""Normalize a live chunk stream and assemble the final assistant message from it.

Every visible delta passes through a `StreamNormalizer` (one per visible run, i.e. per
text block), so inline reasoning leaves the answer as it streams. The final message is
built once the stream ends by `normalize()` over each run's raw text, with the message's
native reasoning as `native_reasoning`: inline reasoning known natively is dropped as a
duplicate even when the native text arrived late, and the blocks keep the exact order of
thinking and text inside a run, which a stream of `Delta`s cannot tell.

What the live stream showed and what the message keeps agree: each run's text blocks
join to exactly the visible text streamed for it. Where a finite `holdback` made the
stream strip a late orphan `</think>` instead of splitting there, the message follows the
stream (the `strip` reading), so what is persisted is what was shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.kinds import Label
from thinkfix.normalizer.policy import DEFAULT, OrphanClose, Policy
from thinkfix.normalizer.spans import Delta, Result
from thinkfix.normalizer.stream import StreamNormalizer
from thinkfix.providers.base import Channel, Phase, ReasoningChunk, StreamAdapter
from thinkfix.providers.message import BLOCK_OF, AssembledMessage, Block, BlockType, Leak, Source


@dataclass
class _Building:
    """A non-visible block being received."""

    channel: Channel
    content_index: int
    metadata: Mapping[str, Any]
    first: int  # arrival number of its first chunk: blocks are ordered by it
    parts: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)


@dataclass
class _Run:
    """A visible run being received: its raw text and what the live normalizer released."""

    content_index: int
    provider: str
    normalizer: StreamNormalizer
    start_in_reasoning: bool
    first: int
    raw: list[str] = field(default_factory=list)
    arrivals: list[tuple[int, int]] = field(default_factory=list)  # (raw offset, arrival) per delta
    visible: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    inline_open: bool = False
    size: int = 0
    tool_after: bool = False  # a tool call followed it in the message: rule 4's evidence

    channel = Channel.VISIBLE

    def arrival_at(self, offset: int) -> int:
        """When the character at raw `offset` arrived."""
        when = self.first
        for start, arrival in self.arrivals:
            if start > offset:
                break
            when = arrival
        return when


_Slot = _Building | _Run


class Accumulator:
    """Feed it `ReasoningChunk`s; get back the normalized live chunks, and at the end the message.

    Block boundaries are the START / END phases the adapter reports (see `Segments`):
    several segments may be open at once on parallel wires. `policy`,
    `start_in_reasoning` (the template opened a reasoning block before the first visible
    text) and `holdback` go to each run's `StreamNormalizer`; `holdback=None` holds
    visible text until the run ends (exact, for replay), a live runtime sets a bound.

    Native reasoning that arrives while a run is already streaming (a relay copying
    `reasoning_content` into `content`, delta by delta) cannot reach that run's
    `StreamNormalizer`, so the live stream may carry the inline copy as `inline`
    thinking; the message drops it as a duplicate. Visible text always agrees.

    A visible run's end is held until the message says what follows it: a tool call is
    rule 4's evidence (`...</think>` then a call: the text was reasoning), another visible
    run or the message's end is not. Only what the run's normalizer still holds waits.
    """

    def __init__(
        self,
        *,
        policy: Policy = DEFAULT,
        start_in_reasoning: bool = False,
        holdback: int | None = None,
    ) -> None:
        self.policy = policy
        self.start_in_reasoning = start_in_reasoning
        self.holdback = holdback
        self.provider = ""
        self.message_start: dict[str, Any] = {}
        self.message_end: dict[str, Any] = {}
        self._slots: list[_Slot] = []
        self._open: dict[tuple[Channel, int], _Slot] = {}
        self._ended: list[tuple[_Run, ReasoningChunk]] = []  # runs waiting for what follows
        self._arrivals = 0
        self._finished = False

    # -- live side ---------------------------------------------------------------------

    def feed(self, chunk: ReasoningChunk) -> tuple[ReasoningChunk, ...]:
        """The chunks to show for `chunk`: visible text normalized, inline reasoning as thinking."""
        if self._finished:
            raise RuntimeError("feed() after finish()")
        self._arrivals += 1
        self.provider = self.provider or chunk.provider
        if chunk.channel is Channel.MESSAGE:
            settled = self._settle(chunk)
            (self.message_start if chunk.phase is Phase.START else self.message_end).update(
                chunk.metadata
            )
            return (*settled, chunk)
        if chunk.channel is Channel.SIGNATURE:
            self._attach_signature(chunk)
            return (chunk,)
        key = (chunk.channel, chunk.content_index)
        out = self._settle(chunk)
        if chunk.phase is Phase.START:
            out.extend(self._close(key))
            self._open_slot(chunk)
            out.append(chunk)
        elif chunk.phase is Phase.DELTA:
            slot = self._open.get(key) or self._open_slot(chunk)
            if isinstance(slot, _Run):
                slot.arrivals.append((slot.size, self._arrivals))
                slot.size += len(chunk.text)
                slot.raw.append(chunk.text)
                out.extend(self._release(slot, slot.normalizer.feed(chunk.text)))
            else:
                slot.parts.append(chunk.text)
                out.append(chunk)
        elif isinstance(run := self._open.get(key), _Run):
            del self._open[key]
            self._ended.append((run, chunk))
        else:
            out.extend(self._close(key))
            out.append(chunk)
        return tuple(out)

    def finish(self) -> tuple[ReasoningChunk, ...]:
        """Flush what the normalizers held back and close open blocks; feed nothing after."""
        if self._finished:
            return ()
        out = self._settle_runs(tool_after=False)
        for key in list(self._open):
            out.extend(self._close(key))
        self._finished = True
        return tuple(out)

    def _open_slot(self, chunk: ReasoningChunk) -> _Slot:
        slot: _Slot
        if chunk.channel is Channel.VISIBLE:
            first = not any(isinstance(s, _Run) for s in self._slots)
            start = self.start_in_reasoning and first
            native = self._native_text()
            slot = _Run(
                chunk.content_index,
                chunk.provider,
                StreamNormalizer(
                    self.policy,
                    start_in_reasoning=start,
                    holdback=self.holdback,
                    native_reasoning=native or None,
                ),
                start,
                self._arrivals,
            )
        else:
            slot = _Building(chunk.channel, chunk.content_index, chunk.metadata, self._arrivals)
        self._slots.append(slot)
        self._open[(chunk.channel, chunk.content_index)] = slot
        return slot

    def _settle(self, chunk: ReasoningChunk) -> list[ReasoningChunk]:
        """Finish the ended runs once `chunk` tells what follows them (rule 4's evidence)."""
        if not self._ended:
            return []
        if chunk.channel is Channel.TOOL_CALL:
            return self._settle_runs(tool_after=True)
        if chunk.channel is Channel.VISIBLE or (
            chunk.channel is Channel.MESSAGE and chunk.phase is Phase.END
        ):
            return self._settle_runs(tool_after=False)
        return []  # thinking or a signature between them: the answer is still to come

    def _settle_runs(self, *, tool_after: bool) -> list[ReasoningChunk]:
        out: list[ReasoningChunk] = []
        for run, end in self._ended:
            run.tool_after = tool_after
            out.extend(self._release(run, run.normalizer.finish(followed_by_tool_call=tool_after)))
            if run.inline_open:
                run.inline_open = False
                out.append(self._inline(run, Phase.END))
            out.append(end)
        self._ended.clear()
        return out

    def _close(self, key: tuple[Channel, int]) -> list[ReasoningChunk]:
        slot = self._open.pop(key, None)
        out: list[ReasoningChunk] = []
        if isinstance(slot, _Run):
            out.extend(self._release(slot, slot.normalizer.finish()))
            if slot.inline_open:
                slot.inline_open = False
                out.append(self._inline(slot, Phase.END))
        return out

    def _release(self, run: _Run, delta: Delta) -> list[ReasoningChunk]:
        # A Delta does not say whether its reasoning came before its text; reasoning
        # usually precedes the answer, so it is released first. The message is exact.
        out: list[ReasoningChunk] = []
        if delta.thinking:
            if not run.inline_open:
                run.inline_open = True
                out.append(self._inline(run, Phase.START))
            run.thinking.append(delta.thinking)
            out.append(self._inline(run, Phase.DELTA, delta.thinking))
        if delta.visible:
            if run.inline_open:
                run.inline_open = False
                out.append(self._inline(run, Phase.END))
            run.visible.append(delta.visible)
            out.append(
                ReasoningChunk(
                    run.provider, Phase.DELTA, Channel.VISIBLE, delta.visible, run.content_index
                )
            )
        return out

    @staticmethod
    def _inline(run: _Run, phase: Phase, text: str = "") -> ReasoningChunk:
        return ReasoningChunk(
            run.provider,
            phase,
            Channel.THINKING,
            text,
            run.content_index,
            phase is Phase.END,
            {"source": Source.INLINE.value},
        )

    def _attach_signature(self, chunk: ReasoningChunk) -> None:
        # Anthropic signs the thinking block the signature arrives in, Gemini the part it
        # rides on, Responses the reasoning item (whose last summary part is the latest
        # block at that index); a reasoning item with no summary gets an empty block.
        open_slots = list(self._open.values())
        candidates = [
            s
            for s in [*reversed(open_slots), *reversed(self._slots)]
            if s.content_index == chunk.content_index
        ]
        thinking = [s for s in candidates if s.channel is Channel.THINKING]
        if thinking or candidates:
            (thinking or candidates)[0].signature.append(chunk.text)
            return
        slot = _Building(Channel.THINKING, chunk.content_index, {}, self._arrivals)
        slot.signature.append(chunk.text)
        self._slots.append(slot)

    def _native_text(self) -> str:
        return "\n\n".join(
            "".join(s.parts)
            for s in self._slots
            if isinstance(s, _Building) and s.channel is Channel.THINKING and s.parts
        )

    # -- the assembled message ---------------------------------------------------------

    def message(self) -> AssembledMessage:
        """The final message (finishing the stream first if needed)."""
        self.finish()
        native = self._native_text() or None
        placed: list[tuple[tuple[int, int], Block]] = []
        raw_visible: list[str] = []
        leaks: list[Leak] = []
        for slot in self._slots:
            signature = "".join(slot.signature) if slot.signature else None
            if isinstance(slot, _Building):
                block = _building_block(slot, signature)
                if block.text or block.signature is not None or block.type is BlockType.TOOL_CALL:
                    placed.append(((slot.first, 0), block))
                continue
            run_number = len(raw_visible)
            raw = "".join(slot.raw)
            raw_visible.append(raw)
            reported, shown = self._normalize_run(slot, raw, native)
            leaks.extend(
                Leak(
                    run_number,
                    slot.content_index,
                    f.kind,
                    f.tag,
                    f.start,
                    f.end,
                    raw[f.start : f.end],
                )
                for f in reported.findings
            )
            run_blocks = (
                run_blocks_from(shown, slot.content_index)
                if shown is not None
                else _live_blocks(slot)
            )
            if signature is not None:
                run_blocks = _sign_last_text(run_blocks, signature, slot.content_index)
            placed.extend(
                ((slot.arrival_at(offset), offset), block) for offset, block in run_blocks
            )
        placed.sort(key=lambda item: item[0])  # stable: the order things arrived in
        return AssembledMessage(
            provider=self.provider,
            blocks=tuple(block for _, block in placed),
            raw_visible=tuple(raw_visible),
            leaks=tuple(leaks),
            id=self.message_start.get("id"),
            model=self.message_start.get("model"),
            stop_reason=self.message_end.get("stop_reason"),
            usage=self.message_end.get("usage"),
            error=self.message_end.get("error"),
        )

    def _normalize_run(
        self, run: _Run, raw: str, native: str | None
    ) -> tuple[Result, Result | None]:
        """The result to report leaks from, and the one whose visible text the stream showed."""
        reported = normalize(
            raw,
            native_reasoning=native,
            policy=self.policy,
            start_in_reasoning=run.start_in_reasoning,
            followed_by_tool_call=run.tool_after,
        )
        live = "".join(run.visible)
        if reported.visible == live:
            return reported, reported
        stripped = normalize(
            raw,
            native_reasoning=native,
            start_in_reasoning=run.start_in_reasoning,
            followed_by_tool_call=run.tool_after,
            policy=self.policy.with_changes(orphan_close=OrphanClose.STRIP),
        )
        return reported, (stripped if stripped.visible == live else None)


def _building_block(slot: _Building, signature: str | None) -> Block:
    tool = slot.channel is Channel.TOOL_CALL
    return Block(
        BLOCK_OF[slot.channel],
        "".join(slot.parts),
        signature,
        Source.NATIVE if slot.channel is Channel.THINKING else None,
        slot.content_index,
        slot.metadata.get("id") if tool else None,
        slot.metadata.get("name") if tool else None,
    )


def _live_blocks(run: _Run) -> list[tuple[int, Block]]:
    # Only reached if batch and stream disagree beyond the holdback rule: keep what was shown.
    out = [
        (
            0,
            Block(
                BlockType.THINKING, "".join(run.thinking), None, Source.INLINE, run.content_index
            ),
        ),
        (0, Block(BlockType.TEXT, "".join(run.visible), None, None, run.content_index)),
    ]
    return [(o, b) for o, b in out if b.text]


def run_blocks_from(result: Result, content_index: int) -> list[tuple[int, Block]]:
    """The ordered text and inline-thinking blocks of one normalized run, each with the raw
    offset it starts at (duplicates of native reasoning leave no block)."""
    blocks: list[tuple[int, Block]] = []
    key: object = None
    parts: list[str] = []
    start = 0

    def flush() -> None:
        text = "".join(parts)
        parts.clear()
        if not text:
            return
        if key == "text":
            blocks.append((start, Block(BlockType.TEXT, text, None, None, content_index)))
        else:
            blocks.append(
                (start, Block(BlockType.THINKING, text, None, Source.INLINE, content_index))
            )

    for span in result.spans:
        if span.label is Label.VISIBLE:
            span_key: object = "text"
        elif span.label is Label.THINKING and span.block is not None:
            span_key = span.block
        else:
            continue  # delimiters, trimmed whitespace and duplicates leave no block
        if span_key != key:
            flush()
            key, start = span_key, span.start
        parts.append(result.text[span.start : span.end])
    flush()
    return blocks


def _sign_last_text(
    blocks: list[tuple[int, Block]], signature: str, content_index: int
) -> list[tuple[int, Block]]:
    """Put a run's signature (Gemini) on its last text block, or on an empty one."""
    for i in range(len(blocks) - 1, -1, -1):
        offset, b = blocks[i]
        if b.type is BlockType.TEXT:
            blocks[i] = (offset, Block(b.type, b.text, signature, b.source, b.content_index))
            return blocks
    end = blocks[-1][0] if blocks else 0
    return [*blocks, (end, Block(BlockType.TEXT, "", signature, None, content_index))]


@dataclass(frozen=True)
class Replay:
    """A whole stream replayed: the normalized live chunks and the assembled message."""

    chunks: tuple[ReasoningChunk, ...]
    message: AssembledMessage


def replay_events(
    events: Iterable[Any],
    adapter: StreamAdapter,
    *,
    policy: Policy = DEFAULT,
    start_in_reasoning: bool = False,
    holdback: int | None = None,
) -> Replay:
    """Run raw events through `adapter` and an `Accumulator`, as a live runtime would."""
    accumulator = Accumulator(
        policy=policy, start_in_reasoning=start_in_reasoning, holdback=holdback
    )
    adapter.reset()
    chunks: list[ReasoningChunk] = []
    for event in events:
        for chunk in adapter.parse(event):
            chunks.extend(accumulator.feed(chunk))
    for chunk in adapter.finish():
        chunks.extend(accumulator.feed(chunk))
    chunks.extend(accumulator.finish())
    return Replay(tuple(chunks), accumulator.message())
