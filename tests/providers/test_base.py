"""The chunk shape, event reading and segment bookkeeping shared by every adapter."""

from __future__ import annotations

import dataclasses

import pytest

from tests.providers.conftest import SdkEvent, summary
from thinkfix.providers.base import Channel, Phase, ReasoningChunk, Segments, event_dict


def test_base_chunk_is_frozen() -> None:
    chunk = ReasoningChunk("openai", Phase.DELTA, Channel.VISIBLE, "hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.text = "no"  # type: ignore[misc]
    assert chunk.content_index == 0 and not chunk.is_complete and chunk.metadata == {}


def test_base_event_dict_reads_dicts_and_sdk_objects() -> None:
    assert event_dict({"a": 1}) == {"a": 1}
    assert event_dict(SdkEvent({"type": "ping"})) == {"type": "ping"}
    with pytest.raises(TypeError):
        event_dict("data: {}")


def test_base_segments_sequential_switch_ends_the_open_segment() -> None:
    seg = Segments("x")
    out = (
        seg.delta(Channel.THINKING, "a")
        + seg.delta(Channel.THINKING, "b")
        + seg.delta(Channel.VISIBLE, "c")
    )
    out += seg.close()
    assert summary(out) == [
        ("start", "thinking", "", 0),
        ("delta", "thinking", "a", 0),
        ("delta", "thinking", "b", 0),
        ("end", "thinking", "", 0),
        ("start", "visible", "", 1),
        ("delta", "visible", "c", 1),
        ("end", "visible", "", 1),
    ]
    assert [c.is_complete for c in out if c.phase is Phase.END] == [True, True]


def test_base_segments_parallel_fields_stay_open_together() -> None:
    seg = Segments("x", parallel=True)
    out = (
        seg.delta(Channel.THINKING, "a", 0)
        + seg.delta(Channel.VISIBLE, "b", 0)
        + seg.delta(Channel.THINKING, "c", 0)
        + seg.close()
    )
    assert summary(out) == [
        ("start", "thinking", "", 0),
        ("delta", "thinking", "a", 0),
        ("start", "visible", "", 0),
        ("delta", "visible", "b", 0),
        ("delta", "thinking", "c", 0),
        ("end", "thinking", "", 0),
        ("end", "visible", "", 0),
    ]


def test_base_segments_empty_delta_opens_nothing() -> None:
    seg = Segments("x")
    assert seg.delta(Channel.VISIBLE, "") == []
    assert seg.current is None


def test_base_segments_signature_goes_to_the_open_segment() -> None:
    seg = Segments("x")
    seg.open(Channel.THINKING, 3)
    [sig] = seg.signature("abc")
    assert (sig.phase, sig.channel, sig.text, sig.content_index) == (
        Phase.DELTA,
        Channel.SIGNATURE,
        "abc",
        3,
    )
    assert seg.signature("") == []


def test_base_segments_metadata_drops_nulls() -> None:
    seg = Segments("x")
    [start] = seg.open(Channel.TOOL_CALL, 0, {"id": "call_1", "name": None})
    assert start.metadata == {"id": "call_1"}
