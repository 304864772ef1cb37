"""Accumulator: live normalization and the assembled message, and that they agree."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.normalizer.kinds import LeakKind
from thinkfix.normalizer.policy import NativeMode, Policy
from thinkfix.providers.accumulator import Accumulator
from thinkfix.providers.base import Channel, Phase, ReasoningChunk
from thinkfix.providers.message import AssembledMessage, Block, BlockType, Source


def c(phase: str, channel: str, text: str = "", index: int = 0, **meta: object) -> ReasoningChunk:
    return ReasoningChunk("test", Phase(phase), Channel(channel), text, index, phase == "end", meta)


def segment(channel: str, *texts: str, index: int = 0, **meta: object) -> list[ReasoningChunk]:
    return [
        c("start", channel, "", index, **meta),
        *(c("delta", channel, t, index) for t in texts),
        c("end", channel, "", index),
    ]


def feed_all(
    chunks: list[ReasoningChunk], **kwargs: object
) -> tuple[list[ReasoningChunk], AssembledMessage]:
    acc = Accumulator(**kwargs)  # type: ignore[arg-type]
    live: list[ReasoningChunk] = []
    for chunk in chunks:
        live.extend(acc.feed(chunk))
    live.extend(acc.finish())
    return live, acc.message()


def live_text(live: list[ReasoningChunk], channel: Channel) -> str:
    return "".join(x.text for x in live if x.channel is channel)


def test_accumulator_inline_tags_split_across_chunks() -> None:
    live, message = feed_all(segment("visible", "<thi", "nk>plan</thi", "nk>\n\nAnswer"))
    assert [(b.type, b.text, b.source) for b in message.blocks] == [
        (BlockType.THINKING, "plan", Source.INLINE),
        (BlockType.TEXT, "Answer", None),
    ]
    assert live_text(live, Channel.VISIBLE) == "Answer"
    inline = [x for x in live if x.channel is Channel.THINKING]
    assert [x.phase for x in inline] == [Phase.START, Phase.DELTA, Phase.END]
    assert all(x.metadata == {"source": "inline"} for x in inline)
    assert live_text(live, Channel.THINKING) == "plan"
    assert message.leaked and [leak.kind for leak in message.leaks] == [LeakKind.BLOCK]
    assert message.raw_visible == ("<think>plan</think>\n\nAnswer",)


def test_accumulator_native_first_dedupe_no_double_reasoning() -> None:
    chunks = segment("thinking", "I plan", " carefully.") + segment(
        "visible", "<think>I plan carefully.</think>", "Answer"
    )
    live, message = feed_all(chunks)
    assert [(b.type, b.text, b.source) for b in message.blocks] == [
        (BlockType.THINKING, "I plan carefully.", Source.NATIVE),
        (BlockType.TEXT, "Answer", None),
    ]
    assert (
        live_text(live, Channel.THINKING) == "I plan carefully."
    )  # the inline copy never streamed
    assert [leak.kind for leak in message.leaks] == [LeakKind.DUPLICATE]


def test_accumulator_merge_policy_keeps_both() -> None:
    chunks = segment("thinking", "native") + segment("visible", "<think>inline</think>Answer")
    _, message = feed_all(chunks, policy=Policy(native=NativeMode.MERGE))
    assert message.thinking == ("native", "inline")


def test_accumulator_native_arriving_during_the_run_is_deduped_in_the_message() -> None:
    # A relay copying reasoning_content into content: both fields open in parallel.
    chunks = [
        c("start", "visible"),
        c("delta", "visible", "<think>"),
        c("start", "thinking"),
        c("delta", "thinking", "plan"),
        c("delta", "visible", "plan"),
        c("delta", "visible", "</think>ok"),
        c("end", "thinking"),
        c("end", "visible"),
    ]
    live, message = feed_all(chunks)
    assert [(b.type, b.text, b.source) for b in message.blocks] == [
        (BlockType.THINKING, "plan", Source.NATIVE),
        (BlockType.TEXT, "ok", None),
    ]
    assert live_text(live, Channel.VISIBLE) == message.text


def test_accumulator_signature_kept_exactly() -> None:
    sig = ["EqQBCkgIBxAB", "GAIiQL4j+/==", " \n"]
    chunks = [
        c("start", "thinking", "", 0),
        c("delta", "thinking", "t", 0),
        *(c("delta", "signature", s, 0) for s in sig),
        c("end", "thinking", "", 0),
    ]
    _, message = feed_all(chunks)
    assert message.blocks == (Block(BlockType.THINKING, "t", "".join(sig), Source.NATIVE, 0),)


def test_accumulator_signature_without_a_block_makes_an_empty_thinking_block() -> None:
    _, message = feed_all([c("delta", "signature", "gAAAA", 4)])
    assert message.blocks == (Block(BlockType.THINKING, "", "gAAAA", Source.NATIVE, 4),)


def test_accumulator_signature_on_a_visible_run_goes_to_its_last_text_block() -> None:
    chunks = [
        c("start", "visible", "", 1),
        c("delta", "visible", "Hi", 1),
        c("delta", "signature", "S", 1),
        c("end", "visible", "", 1),
        c("start", "visible", "", 2),
        c("delta", "signature", "T", 2),
        c("end", "visible", "", 2),
    ]
    _, message = feed_all(chunks)
    assert [(b.text, b.signature) for b in message.blocks] == [("Hi", "S"), ("", "T")]


def test_accumulator_flushes_a_block_at_every_channel_switch() -> None:
    chunks = (
        segment("thinking", "t1", index=0)
        + segment("visible", "a1", index=1)
        + segment("thinking", "t2", index=2)
        + segment("visible", "a2", index=3)
    )
    _, message = feed_all(chunks)
    assert [(b.type.value, b.text) for b in message.blocks] == [
        ("thinking", "t1"),
        ("text", "a1"),
        ("thinking", "t2"),
        ("text", "a2"),
    ]
    assert message.text == "a1a2" and message.thinking == ("t1", "t2")


def test_accumulator_runs_are_normalized_and_reported_separately() -> None:
    chunks = segment("visible", "clean", index=0) + segment("visible", "x</think>", index=1)
    _, message = feed_all(chunks)
    assert [(leak.run, leak.content_index, leak.kind) for leak in message.leaks] == [
        (1, 1, LeakKind.STRAY_CLOSE)
    ]
    assert message.leaks[0].text == "</think>"
    assert message.text == "cleanx"


def test_accumulator_tool_call_and_redacted_blocks() -> None:
    chunks = segment("redacted_thinking", "opaque", index=0) + segment(
        "tool_call", '{"a":', "1}", index=1, id="call_1", name="f"
    )
    _, message = feed_all(chunks)
    assert [b.to_dict() for b in message.blocks] == [
        {"type": "redacted_thinking", "data": "opaque", "content_index": 0},
        {
            "type": "tool_call",
            "id": "call_1",
            "name": "f",
            "arguments": '{"a":1}',
            "content_index": 1,
        },
    ]


def test_accumulator_start_in_reasoning_applies_to_the_first_run_only() -> None:
    chunks = segment("visible", "plan</think>Answer", index=0) + segment(
        "visible", "plain", index=1
    )
    _, message = feed_all(chunks, start_in_reasoning=True)
    assert [(b.type.value, b.text) for b in message.blocks] == [
        ("thinking", "plan"),
        ("text", "Answer"),
        ("text", "plain"),
    ]


def test_accumulator_finite_holdback_message_follows_what_streamed() -> None:
    text = "I think the answer needs care here.\n</think>\n\nAnswer: 4."
    live, message = feed_all(segment("visible", text[:20], text[20:40], text[40:]), holdback=10)
    assert (
        live_text(live, Channel.VISIBLE)
        == message.text
        == "I think the answer needs care here.\nAnswer: 4."
    )
    assert [leak.kind for leak in message.leaks] == [LeakKind.ORPHAN_CLOSE]  # what the raw text was


def test_accumulator_unbounded_holdback_splits_the_orphan_close() -> None:
    text = "I think the answer needs care here.\n</think>\n\nAnswer: 4."
    live, message = feed_all(segment("visible", text[:20], text[20:40], text[40:]))
    assert live_text(live, Channel.VISIBLE) == message.text == "Answer: 4."
    assert message.thinking == ("I think the answer needs care here.",)


def test_accumulator_delta_without_start_opens_its_block() -> None:
    live, message = feed_all([c("delta", "visible", "hi")])
    assert message.text == "hi" and live_text(live, Channel.VISIBLE) == "hi"


def test_accumulator_message_metadata_and_empty_message() -> None:
    chunks = [
        c("start", "message", id="msg_1", model="m"),
        c("end", "message", stop_reason="stop", usage={"n": 1}),
    ]
    _, message = feed_all(chunks)
    assert (message.id, message.model, message.stop_reason, message.usage) == (
        "msg_1",
        "m",
        "stop",
        {"n": 1},
    )
    assert message.blocks == () and not message.leaked and message.provider == "test"


def test_accumulator_feed_after_finish_raises() -> None:
    acc = Accumulator()
    acc.finish()
    with pytest.raises(RuntimeError):
        acc.feed(c("delta", "visible", "x"))
    assert acc.finish() == ()


def test_accumulator_message_to_dict_is_plain_json() -> None:
    _, message = feed_all(segment("visible", "<think>p</think>A"))
    doc = message.to_dict()
    assert doc["blocks"] == [
        {"type": "thinking", "thinking": "p", "source": "inline", "content_index": 0},
        {"type": "text", "text": "A", "content_index": 0},
    ]
    assert doc["leaked"] is True and doc["leaks"][0]["kind"] == "block"


TEXTS = st.lists(
    st.sampled_from(["<think>", "</think>", "plan ", "Answer", "\n", "`<think>`", "a < b", " "]),
    max_size=12,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    text=TEXTS,
    cuts=st.lists(st.integers(0, 80), max_size=6),
    native=st.sampled_from([None, "plan"]),
)
def test_accumulator_streamed_visible_equals_message_for_any_split(
    text: str, cuts: list[int], native: str | None
) -> None:
    bounds = [0, *sorted(x for x in cuts if x < len(text)), len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds) if text[a:b]]
    chunks = (segment("thinking", native) if native else []) + segment("visible", *pieces)
    live, message = feed_all(chunks)
    _, whole = feed_all((segment("thinking", native) if native else []) + segment("visible", text))
    assert live_text(live, Channel.VISIBLE) == message.text
    assert message == whole


def test_accumulator_finite_holdback_releases_visible_text_while_streaming() -> None:
    acc = Accumulator(holdback=8)
    acc.feed(c("start", "visible"))
    out = acc.feed(c("delta", "visible", "A long clean answer, streamed as it comes."))
    assert live_text(list(out), Channel.VISIBLE)  # a live runtime is not kept waiting
    rest = list(acc.feed(c("end", "visible"))) + list(acc.finish())
    assert live_text([*out, *rest], Channel.VISIBLE) == acc.message().text


# Rule 4's evidence: a tool call that follows the text in the same message makes the text
# before a trailing `</think>` reasoning; without one, only the delimiter goes (DESIGN.md).
THOUGHT = "I should look the file up first.\n</think>\n"


def test_accumulator_a_tool_call_after_the_text_is_rule_4_evidence() -> None:
    chunks = segment("visible", THOUGHT[:12], THOUGHT[12:]) + segment(
        "tool_call", '{"path": "a"}', index=1, id="call_1", name="read"
    )
    live, message = feed_all(chunks)
    assert message.thinking == ("I should look the file up first.",)
    assert message.text == live_text(live, Channel.VISIBLE) == ""
    assert [leak.kind for leak in message.leaks] == [LeakKind.ORPHAN_CLOSE]
    assert [b.type for b in message.blocks] == [BlockType.THINKING, BlockType.TOOL_CALL]


def test_accumulator_without_a_tool_call_the_text_stays_visible() -> None:
    for tail in ([], [c("end", "message", stop_reason="end_turn")]):
        live, message = feed_all(segment("visible", THOUGHT) + tail)
        assert (
            message.text == live_text(live, Channel.VISIBLE) == "I should look the file up first.\n"
        )
        assert [leak.kind for leak in message.leaks] == [LeakKind.STRAY_CLOSE]


def test_accumulator_message_agrees_with_a_whole_text_normalized_with_its_evidence() -> None:
    from thinkfix.normalizer.batch import normalize

    chunks = segment("visible", THOUGHT) + segment("tool_call", "{}", index=1, name="f")
    _, message = feed_all(chunks)
    assert message.text == normalize(THOUGHT, followed_by_tool_call=True).visible


@settings(max_examples=200, deadline=None)
@given(
    text=TEXTS,
    cuts=st.lists(st.integers(0, 80), max_size=6),
    tool=st.booleans(),
    holdback=st.sampled_from([None, 4, 64]),
)
def test_accumulator_live_and_message_agree_with_or_without_a_tool_call(
    text: str, cuts: list[int], tool: bool, holdback: int | None
) -> None:
    bounds = [0, *sorted(x for x in cuts if x < len(text)), len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds) if text[a:b]]
    after = segment("tool_call", "{}", index=1, name="f") if tool else []
    live, message = feed_all(segment("visible", *pieces) + after, holdback=holdback)
    assert live_text(live, Channel.VISIBLE) == message.text
    # the visible run's END comes after every visible delta of it, never before
    run = [x.phase for x in live if x.channel is Channel.VISIBLE]
    ends = [i for i, phase in enumerate(run) if phase is Phase.END]
    deltas = [i for i, phase in enumerate(run) if phase is Phase.DELTA]
    assert not deltas or not ends or max(deltas) < min(ends)
    if holdback is None:
        _, whole = feed_all(segment("visible", text) + after)
        assert message == whole
