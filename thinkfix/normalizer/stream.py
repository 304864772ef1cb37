"""Streaming normalization: the same pipeline as `normalize`, fed chunk by chunk."""

from __future__ import annotations

from thinkfix.normalizer import deltas
from thinkfix.normalizer.batch import clean_native
from thinkfix.normalizer.grammar import grammar_for
from thinkfix.normalizer.kinds import Label
from thinkfix.normalizer.pipeline import Pipeline
from thinkfix.normalizer.policy import DEFAULT, Policy
from thinkfix.normalizer.spans import Delta, Finding
from thinkfix.normalizer.stages import WS_CHARS, Piece

_new_delta = tuple.__new__
# Enum members cost a class lookup each time (about 0.2 us in 3.11): the hot paths use these.
_VISIBLE, _THINKING = Label.VISIBLE, Label.THINKING
_NOTHING = Delta()
_CHUNK_MAX = deltas.CHUNK_MAX


class StreamNormalizer:
    """Feed answer text as it streams; get visible and reasoning deltas back.

    With `holdback=None` (the default) the output equals `normalize` on the whole
    text for every chunking. A live runtime that cannot wait for the first
    delimiter sets a finite `holdback` (visible text is withheld for at most that
    many characters), and `start_in_reasoning=True` when its chat template opened
    the reasoning block in the prompt. `followed_by_tool_call` (here or at `finish`) is
    rule 4's evidence from outside the text: a tool call follows it in its message; `model`
    the model that wrote it (a gpt-oss model's text may be detokenised Harmony).

    `shortcuts=False` turns off the first-chunk, waiting-lane and finish shortcuts (the
    output is the same; tests compare the two), and `delta_cache` replaces the cache of
    plain chunks' Deltas shared by streams of the same candidate characters.
    """

    def __init__(
        self,
        policy: Policy = DEFAULT,
        *,
        start_in_reasoning: bool = False,
        holdback: int | None = None,
        native_reasoning: str | None = None,
        followed_by_tool_call: bool = False,
        model: str | None = None,
        shortcuts: bool = True,
        delta_cache: deltas.DeltaCache | None = None,
    ) -> None:
        self._pipeline = Pipeline(
            policy,
            native=clean_native(native_reasoning, policy),
            start_in_reasoning=start_in_reasoning,
            holdback=holdback,
            followed_by_tool_call=followed_by_tool_call,
            model=model,
        )
        self._enabled = policy.enabled
        self._last_block: int | None = None
        self._thinking_out = False
        self._segments: list[list[str]] = []
        grammar = grammar_for(policy)
        self._candidate = grammar.candidate
        self._find_candidate = grammar.find_candidate
        self._shortcuts = shortcuts
        cache = delta_cache if delta_cache is not None else deltas.shared(grammar.start_chars)
        self._clean = cache.clean
        self._think = cache.think
        self._cache_limit = cache.limit
        # The fast lane: while nothing is held anywhere, a chunk with no candidate
        # character is emitted as it is, without entering the pipeline.
        self._fast_visible = False
        self._fast_thinking = False
        self._fast_chunks: list[str] = []
        self._fast_ws = ""  # whitespace the thinking lane holds back
        # The waiting lane: while the pipeline could only hold a plain chunk (its fate waits
        # on a later delimiter), plain chunks collect here and enter it together.
        self._waiting = False
        self._held: list[str] = []

    def feed(self, chunk: str) -> Delta:
        # The hot path of a live stream: a dictionary lookup and an append.
        if self._fast_visible:
            delta = self._clean.get(chunk)
            if delta is not None:
                self._fast_chunks.append(chunk)
                return delta
        elif self._fast_thinking:
            if not self._fast_ws:
                hit = self._think.get(chunk)
                if hit is not None:
                    delta, self._fast_ws = hit
                    self._fast_chunks.append(delta.thinking)
                    self._segments[-1].append(delta.thinking)
                    return delta
        elif self._waiting and chunk in self._clean:
            self._held.append(chunk)
            return _NOTHING
        return self._feed(chunk)

    def _feed(self, chunk: str) -> Delta:
        if self._fast_visible:
            if len(chunk) <= _CHUNK_MAX:
                if self._find_candidate(chunk) is None:
                    clean = self._clean
                    if len(clean) >= self._cache_limit:
                        clean.clear()
                    delta = clean[chunk] = _new_delta(Delta, (chunk, ""))
                    self._fast_chunks.append(chunk)
                    return delta
            elif not self._candidate(chunk):
                self._fast_chunks.append(chunk)
                return _new_delta(Delta, (chunk, ""))
        elif self._waiting and not self._candidate(chunk):
            self._held.append(chunk)
            return _NOTHING
        elif self._fast_thinking and not self._candidate(chunk):
            body = chunk.rstrip(WS_CHARS)
            if body:
                # trailing whitespace waits: it is dropped if the block ends right after it
                out = self._fast_ws + body
                ws = chunk[len(body) :]
                delta = _new_delta(Delta, ("", out))
                if not self._fast_ws and len(chunk) <= _CHUNK_MAX:
                    if len(self._think) >= self._cache_limit:
                        self._think.clear()
                    self._think[chunk] = (delta, ws)
                self._fast_chunks.append(out)
                self._fast_ws = ws
                self._segments[-1].append(out)
                return delta
            self._fast_ws += chunk  # blank: it waits with the rest
            return _NOTHING
        if self._pipeline.finished:
            raise RuntimeError("feed() after finish()")
        if not self._enabled:
            return Delta(chunk, "")
        if self._shortcuts and self._pipeline.open_visible(chunk):
            self._fast_visible = True
            self._fast_chunks.append(chunk)
            return Delta(chunk, "")
        chunk = self._leave_lanes() + chunk
        delta = self._delta(self._pipeline.feed(chunk))
        self._waiting = self._shortcuts and self._pipeline.waiting()
        fast = self._pipeline.fast_label()
        if fast is _THINKING and self._last_block != self._pipeline.scanner.st.block:
            fast = None
        self._fast_visible = fast is _VISIBLE
        self._fast_thinking = fast is _THINKING
        return delta

    def finish(self, *, followed_by_tool_call: bool | None = None) -> Delta:
        """Flush everything held back; the stream is over (and, if so told, a tool call
        followed it: rule 4's evidence)."""
        if self._pipeline.finished:
            return Delta()
        if followed_by_tool_call is not None:
            self._pipeline.scanner.followed_by_tool_call = followed_by_tool_call
        if self._shortcuts and self._fast_visible:
            # nothing is held anywhere, so the end of the text settles nothing new
            self._pipeline.finished = True
            self._fast_visible = False
            return Delta()
        held = self._leave_lanes()
        if held:
            self._delta(self._pipeline.feed(held))
        return self._delta(self._pipeline.finish())

    def _leave_lanes(self) -> str:
        """Settle the lanes: the text they still hold, for the pipeline to read next."""
        held = self._leave_fast_lane()
        if self._waiting:
            held += "".join(self._held)
            self._held.clear()
            self._waiting = False
        return held

    def _leave_fast_lane(self) -> str:
        """Hand the pipeline what the fast lane emitted; return the whitespace it held back."""
        chunks = self._fast_chunks
        if chunks:
            context = self._pipeline.scanner.context
            tail = "".join(chunks[-context:])[-context:]
            self._pipeline.scanner.absorb_emitted(sum(map(len, chunks)), tail)
            if self._fast_visible:
                self._pipeline.trimmer.saw_visible(tail)
            chunks.clear()
        held, self._fast_ws = self._fast_ws, ""
        self._fast_visible = self._fast_thinking = False
        return held

    @property
    def segments(self) -> tuple[str, ...]:
        """The extracted reasoning released so far, one string per block (as `Result.extracted`)."""
        return tuple("".join(parts) for parts in self._segments)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The leaks found so far (complete after `finish`)."""
        return self._pipeline.findings()

    def _delta(self, pieces: list[Piece]) -> Delta:
        visible: list[str] = []
        thinking: list[str] = []
        for p in pieces:
            if p.label is _VISIBLE:
                visible.append(p.text)
            elif p.label is _THINKING and p.text:
                if p.block != self._last_block:
                    if self._thinking_out:
                        thinking.append("\n\n")
                    self._last_block = p.block
                    self._segments.append([])
                self._segments[-1].append(p.text)
                thinking.append(p.text)
                self._thinking_out = True
        return Delta("".join(visible), "".join(thinking))


def normalize_in_chunks(
    text: str,
    size: int,
    *,
    policy: Policy = DEFAULT,
    holdback: int | None = None,
    native_reasoning: str | None = None,
    start_in_reasoning: bool = False,
    followed_by_tool_call: bool = False,
    model: str | None = None,
) -> tuple[str, tuple[str, ...], tuple[Finding, ...]]:
    """`text` streamed `size` characters at a time: the visible text let through, the
    reasoning (the cleaned native first) and the findings; what `normalize` answers for the
    whole string, reached the way a live stream reaches it (`thinkfix normalize
    --stream-chunk N` shows the two agree)."""
    stream = StreamNormalizer(
        policy,
        start_in_reasoning=start_in_reasoning,
        holdback=holdback,
        native_reasoning=native_reasoning,
        followed_by_tool_call=followed_by_tool_call,
        model=model,
    )
    parts = [stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
    parts.append(stream.finish())
    native = clean_native(native_reasoning, policy)
    thinking = tuple(t for t in (native, *stream.segments) if t)
    return "".join(p.visible for p in parts), thinking, stream.findings
