"""Shared helpers: the shipped captures, and re-chunking their events' text."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from thinkfix.providers.base import Wire

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
EXPECTED = Path(__file__).resolve().parent / "expected"
CAPTURES = sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".sse", ".ndjson"))

Event = dict[str, Any]


def _pieces(text: str, cuts: Sequence[int]) -> list[str]:
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _split(
    event: Event,
    texts: list[tuple[Callable[[Event], Any], Callable[[Event, str], None]]],
    strip_tail: Callable[[Event], None],
    cuts: Sequence[int],
) -> list[Event]:
    """Split an event whose text fields hold one text (or mirrors of it) into several events."""
    values = [get(event) for get, _ in texts]
    present = [v for v in values if isinstance(v, str) and v]
    if not present or len(set(present)) != 1:
        return [event]
    pieces = _pieces(present[0], cuts)
    out = []
    for i, piece in enumerate(pieces):
        new = copy.deepcopy(event)
        for (_, put), value in zip(texts, values, strict=True):
            if isinstance(value, str) and value:
                put(new, piece)
        if i < len(pieces) - 1:
            strip_tail(new)
        out.append(new)
    return out


def _field(*path: str | int) -> tuple[Callable[[Event], Any], Callable[[Event, str], None]]:
    def get(event: Event) -> Any:
        node: Any = event
        for key in path:
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                return None
        return node

    def put(event: Event, value: str) -> None:
        node: Any = event
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return get, put


def _chat(event: Event, cuts: Sequence[int]) -> list[Event]:
    delta = _field("choices", 0, "delta")[0](event)
    if not isinstance(delta, dict):
        return [event]
    texts = [
        _field("choices", 0, "delta", name)
        for name in ("content", "reasoning_content", "reasoning")
    ]
    texts += [
        _field("choices", 0, "delta", "reasoning_details", i, "text")
        for i in range(len(delta.get("reasoning_details") or []))
    ]

    def tail(new: Event) -> None:
        new["choices"][0]["finish_reason"] = None
        new["choices"][0]["delta"].pop("tool_calls", None)
        new.pop("usage", None)

    return _split(event, texts, tail, cuts)


def _responses(event: Event, cuts: Sequence[int]) -> list[Event]:
    if not str(event.get("type", "")).endswith(".delta"):
        return [event]
    return _split(event, [_field("delta")], lambda new: None, cuts)


def _anthropic(event: Event, cuts: Sequence[int]) -> list[Event]:
    if event.get("type") != "content_block_delta":
        return [event]
    name = {
        "text_delta": "text",
        "thinking_delta": "thinking",
        "input_json_delta": "partial_json",
    }.get(event["delta"].get("type"))
    if name is None:
        return [event]
    return _split(event, [_field("delta", name)], lambda new: None, cuts)


def _ollama(event: Event, cuts: Sequence[int]) -> list[Event]:
    def tail(new: Event) -> None:
        new["done"] = False
        for key in [k for k in new if k.endswith(("_duration", "_count")) or k == "done_reason"]:
            del new[key]
        new.get("message", {}).pop("tool_calls", None)

    return _split(event, [_field("message", "content"), _field("message", "thinking")], tail, cuts)


def _gemini(event: Event, cuts: Sequence[int]) -> list[Event]:
    parts = _field("candidates", 0, "content", "parts")[0](event)
    if not isinstance(parts, list) or len(parts) != 1:
        return [event]

    def tail(new: Event) -> None:
        new["candidates"][0].pop("finishReason", None)
        new["candidates"][0]["content"]["parts"][0].pop("thoughtSignature", None)

    return _split(event, [_field("candidates", 0, "content", "parts", 0, "text")], tail, cuts)


SPLITTERS: dict[Wire, Callable[[Event, Sequence[int]], list[Event]]] = {
    Wire.CHAT: _chat,
    Wire.RESPONSES: _responses,
    Wire.ANTHROPIC: _anthropic,
    Wire.OLLAMA: _ollama,
    Wire.GEMINI: _gemini,
}


def splittable_length(event: Event, wire: Wire) -> int:
    """The length of the text an event could be split in (0 when it cannot)."""
    pieces = SPLITTERS[wire](event, list(range(1, 10_000)))
    return len(pieces) if len(pieces) > 1 else 0


def rechunk(events: Sequence[Event], wire: Wire, cuts: Sequence[Sequence[int]]) -> list[Event]:
    """Every event's text re-split at `cuts[i]` (positions in its text)."""
    out: list[Event] = []
    for event, event_cuts in zip(events, cuts, strict=True):
        out.extend(SPLITTERS[wire](event, event_cuts))
    return out
