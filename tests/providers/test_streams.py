"""Every shipped capture replays to its expected message, whatever the chunking."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.providers.streams import CAPTURES, EXPECTED, FIXTURES, rechunk, splittable_length
from thinkfix.providers.accumulator import replay_events
from thinkfix.providers.base import Channel
from thinkfix.providers.capture import detect, read_capture
from thinkfix.providers.message import BlockType
from thinkfix.providers.registry import ADAPTERS


def _replay(name: str):  # type: ignore[no-untyped-def]
    capture = read_capture(FIXTURES / name)
    resolution = detect(capture)
    events = [dict(e) for e in capture.payloads]
    return resolution, events


def test_streams_every_capture_has_an_expectation() -> None:
    assert sorted(p.name.removesuffix(".json") for p in EXPECTED.iterdir()) == CAPTURES


@pytest.mark.parametrize("name", CAPTURES)
def test_streams_capture_replays_to_expected_message(name: str) -> None:
    expected = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
    resolution, events = _replay(name)
    message = replay_events(events, resolution.create()).message
    assert resolution.adapter == expected["adapter"]
    assert resolution.rule == expected["rule"]
    assert message.model == expected["model"]
    assert message.stop_reason == expected["stop_reason"]
    assert message.leaked is expected["leaked"]
    assert [b.to_dict() for b in message.blocks] == expected["blocks"]
    assert [
        {k: v for k, v in leak.to_dict().items() if k != "text"} for leak in message.leaks
    ] == expected["leaks"]


@pytest.mark.parametrize("name", CAPTURES)
def test_streams_leaking_capture_normalizes_clean(name: str) -> None:
    resolution, events = _replay(name)
    message = replay_events(events, resolution.create()).message
    for block in message.blocks:
        if block.type is BlockType.TEXT:
            for tag in ("<think>", "</think>", "<think", "think>"):
                assert tag not in block.text
    if message.leaked:
        assert any(tag in "".join(message.raw_visible) for tag in ("<think>", "</think>"))


@pytest.mark.parametrize("name", CAPTURES)
def test_streams_live_visible_text_agrees_with_message(name: str) -> None:
    resolution, events = _replay(name)
    replay = replay_events(events, resolution.create())
    live = "".join(c.text for c in replay.chunks if c.channel is Channel.VISIBLE)
    assert live == replay.message.text


@pytest.mark.parametrize("name", CAPTURES)
def test_streams_live_thinking_agrees_with_message_when_native_comes_first(name: str) -> None:
    resolution, events = _replay(name)
    replay = replay_events(events, resolution.create())
    live = [c.text for c in replay.chunks if c.channel is Channel.THINKING and c.text]
    if name.startswith("relay_"):
        # The relay interleaves native and inline reasoning, so the live stream also has
        # the inline copy (documented on Accumulator); the message holds it once.
        inline = [
            c.text
            for c in replay.chunks
            if c.channel is Channel.THINKING and c.metadata.get("source")
        ]
        native = [
            c.text
            for c in replay.chunks
            if c.channel is Channel.THINKING and not c.metadata.get("source")
        ]
        assert replay.message.thinking == ("".join(inline),) == ("".join(native),)
    else:
        assert "".join(live) == "".join(replay.message.thinking)


@pytest.mark.parametrize("name", CAPTURES)
def test_streams_one_character_chunks_give_the_same_message(name: str) -> None:
    resolution, events = _replay(name)
    wire = ADAPTERS[resolution.adapter].wire
    cuts = [list(range(1, 10_000)) for _ in events]
    whole = replay_events(events, resolution.create()).message
    split = replay_events(rechunk(events, wire, cuts), resolution.create()).message
    assert split == whole


@pytest.mark.parametrize("name", CAPTURES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_random_rechunking_gives_the_same_message(name: str, data: st.DataObject) -> None:
    resolution, events = _replay(name)
    wire = ADAPTERS[resolution.adapter].wire
    cuts = []
    for event in events:
        n = splittable_length(event, wire)
        cuts.append(data.draw(st.lists(st.integers(1, n - 1), max_size=4)) if n > 1 else [])
    whole = replay_events(events, resolution.create())
    split = replay_events(rechunk(events, wire, cuts), resolution.create())
    assert split.message == whole.message
    assert (
        "".join(c.text for c in split.chunks if c.channel is Channel.VISIBLE) == split.message.text
    )
