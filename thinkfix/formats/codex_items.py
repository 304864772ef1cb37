"""Codex rollout lines, item by item: how a rollout (and a legacy one) is recognised, where an item's message and its texts are, the copies an event keeps of a message, and reasoning items as Codex itself writes them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from thinkfix.formats.common import (
    as_str,
    block_slots,
    join_texts,
)
from thinkfix.formats.records import Site
from thinkfix.formats.repairs import TextSlot
from thinkfix.formats.turns import Path
from thinkfix.formats.values import UnexpectedShape

if TYPE_CHECKING:
    from thinkfix.formats.planner import Plan  # annotations only: a scan loads no planner

PARTIAL_ENVELOPE = re.compile(
    rb'^\s*\{\s*(?:"timestamp"\s*:\s*"[^"]*"\s*,\s*)?"type"\s*:\s*'
    rb'"(?:session_meta|response_item|event_msg|turn_context|compacted)"\s*,\s*"payload"\s*:\s*\{'
)

# An assistant message item as Codex writes it: the envelope's keys first, then the payload's.
ASSISTANT_ITEM = re.compile(
    rb'\{(?:"timestamp":"[^"\\]*",)?"type":"response_item","payload":\{"type":"message",'
    rb'(?:"id":"[^"\\]*",)?"role":"assistant",'
)
# A turn_context line as Codex writes it (the envelope's keys first).
TURN_CONTEXT = re.compile(rb'\{(?:"timestamp":"[^"\\]*",)?"type":"turn_context","payload":\{')
# The markers whose records may change a context that carries no reasoning (a message or a
# user turn only clears carried reasoning).
QUIET_MARKERS = (b"session_meta", b"turn_context", b'"reasoning"')

_KINDS = {
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
    "world_state",
    "inter_agent_communication_metadata",
}
_WINDOW = 64  # how far from a message its event copies are looked for


BARE_ITEMS = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
}
#: Tool calls other than function calls: (name shown, key holding the arguments).
CALLS = {
    "custom_tool_call": (None, "input"),
    "local_shell_call": ("shell", "action"),
    "web_search_call": ("web_search", "action"),
    "tool_search_call": ("tool_search", "arguments"),
    "image_generation_call": ("image_generation", "revised_prompt"),
}
#: The items that call a tool (rule 4's evidence for the message before them).
CALL_ITEMS = frozenset({"function_call", *CALLS})
OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}


def envelope_of(o: dict[str, Any]) -> bool:
    return as_str(o.get("type")) in _KINDS and "payload" in o


# The first line of a rollout before the envelope: codex-rs/core/src/rollout.rs `SessionMeta`
# (id, timestamp, optional instructions; `git` added later), written bare by
# `RolloutRecorder::new`.
_LEGACY_HEADER = {"id", "timestamp", "instructions", "git"}


def _legacy_header(o: dict[str, Any]) -> bool:
    return (
        isinstance(o.get("id"), str)
        and isinstance(o.get("timestamp"), str)
        and o.keys() <= _LEGACY_HEADER
    )


def _bare_item(o: dict[str, Any]) -> bool:
    """A response item written bare (no envelope), as rollouts before the envelope were."""
    return "payload" not in o and as_str(o.get("type")) in BARE_ITEMS


def _responses_content(o: dict[str, Any]) -> bool:
    """A message whose content parts are the Responses API's (`input_text`/`output_text`),
    never Anthropic's or Chat Completions' (`text`)."""
    content = o.get("content")
    return isinstance(content, list) and any(
        isinstance(c, dict) and c.get("type") in ("input_text", "output_text") for c in content
    )


def legacy_of(objects: Sequence[dict[str, Any]]) -> float:
    """A rollout from before the `{timestamp, type, payload}` envelope (codex-rs until
    rust-v0.32): a bare `{id, timestamp, instructions}` header, then bare response items
    (`message`, `reasoning`, `function_call`, `function_call_output`, ...) and
    `{"record_type": "state"}` lines (`RolloutRecorder`'s `StateLine`). Certain with the
    header or a state line beside a bare item: a bare assistant message otherwise looks like
    an Anthropic response, which would place its reasoning by Anthropic's rules."""
    states = sum(1 for o in objects if o.get("record_type") == "state")
    header = _legacy_header(objects[0])
    items = [o for o in objects if _bare_item(o)]
    others = len(objects) - len(items) - states - header
    if others > len(items) or not (items or (header and states)):
        return 0.0
    if header or states:
        return 0.95
    return 0.9 if any(_responses_content(o) for o in items) else 0.0


def reasoning_text(item: dict[str, Any]) -> str | None:
    """Raw reasoning of a reasoning item (its `content`), else its summary."""
    parts = item.get("content")
    raw = (
        join_texts(p.get("text") for p in parts if isinstance(p, dict))
        if isinstance(parts, list)
        else None
    )
    if raw:
        return raw
    summary = item.get("summary")
    return (
        join_texts(p.get("text") for p in summary if isinstance(p, dict))
        if isinstance(summary, list)
        else None
    )


def item_of(o: dict[str, Any]) -> tuple[dict[str, Any] | None, Path]:
    """The response item a line carries, and its path: enveloped, or bare (early rollouts)."""
    if o.get("type") == "response_item":
        payload = o.get("payload")
        return (payload, ("payload",)) if isinstance(payload, dict) else (None, ())
    if "payload" not in o and ("role" in o or o.get("type") == "message"):
        return o, ()
    return None, ()


def is_assistant(item: dict[str, Any]) -> bool:
    return item.get("role") == "assistant" and item.get("type", "message") == "message"


def slots(item: dict[str, Any], base: Path) -> list[TextSlot]:
    """A message's text parts. Codex always writes `content` (`ResponseItem::Message`'s
    `content: Vec<ContentItem>` has no serde default): a message without it is a shape Codex
    never writes, an error, not a message with nothing to read."""
    content = item.get("content")
    if content is None:
        raise UnexpectedShape((*base, "content"), None, "a list of content parts")
    if isinstance(content, str):
        return [TextSlot(base + ("content",), content)]
    return block_slots(content, base + ("content",), types=("output_text",))


def boundary(o: dict[str, Any]) -> bool:
    """A line that starts another message: event copies are not looked for past it."""
    item, _ = item_of(o)
    if item is not None and item.get("type", "message") == "message":
        return True
    payload = o.get("payload")
    return o.get("type") == "turn_context" or (
        o.get("type") == "event_msg"
        and isinstance(payload, dict)
        and payload.get("type") == "user_message"
    )


def _equal_strings(value: Any, target: str, path: Path) -> Iterator[Path]:
    if isinstance(value, str):
        if value == target:
            yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _equal_strings(v, target, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _equal_strings(v, target, path + (i,))


def copies_of(plan: Plan, site: Site) -> Iterator[tuple[int, Path]]:
    """(record, path) of each event copy of the site's text (agent_message, task_complete,
    ...): the event lines near the message, up to the next message or turn.

    Codex writes a message's events, then its item (codex-rs `handle_output_item_done`
    emits the completed turn item before it records the response item; rollouts before
    turn items recorded the items at the turn's end), so an event after the message is
    its copy only when the next message is not of the same text: one event is the copy of
    one message, never of two (two edits on its one span refused the whole file)."""
    i = site.record_index
    later, end = _events_until_boundary(plan, site.text, i, 1)
    if end is not None and _says(plan.records[end].obj, site.text):
        later = [c for c in later if end - c[0] > _WINDOW]  # the next message's own copies
    yield from later
    yield from _events_until_boundary(plan, site.text, i, -1)[0]


def _events_until_boundary(
    plan: Plan, text: str, i: int, step: int
) -> tuple[list[tuple[int, Path]], int | None]:
    """The copies of `text` from record `i` on in direction `step`, and the record of the
    boundary that ends them (None: the window or the file ends first)."""
    records = plan.records
    found: list[tuple[int, Path]] = []
    j = i + step
    while 0 <= j < len(records) and abs(j - i) <= _WINDOW:
        o = records[j].obj
        if o is not None:
            if boundary(o):
                return found, j
            found.extend(_event_copies(o, text, j))
        j += step
    return found, None


def _event_copies(o: dict[str, Any], text: str, j: int) -> Iterator[tuple[int, Path]]:
    if o.get("type") == "event_msg":
        for path in _equal_strings(o.get("payload"), text, ("payload",)):
            yield j, path


def _says(o: dict[str, Any] | None, text: str) -> bool:
    """Is the line an assistant message with `text` as one of its output texts?"""
    if o is None:
        return False
    item, base = item_of(o)
    return (
        item is not None and is_assistant(item) and any(s.text == text for s in slots(item, base))
    )


def reasoning_item(segments: tuple[str, ...]) -> dict[str, Any]:
    """The reasoning response_item Codex itself records for raw reasoning (OSS providers).

    `summary` stays empty: it is the model's own summary and is replayed as input to the
    Responses API, so copying the raw text there would send it twice; viewers find the
    text in the `agent_reasoning` events written beside the item (`reasoning_events`).
    """
    return {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": s} for s in segments],
        "encrypted_content": None,
    }


def reasoning_events(segments: tuple[str, ...]) -> list[dict[str, Any]]:
    """The `agent_reasoning` event_msg payloads Codex writes beside reasoning it displays.

    Display only (event_msg lines are never replayed to the model), and what the Codex
    TUI on resume and session viewers read, so the moved reasoning stays visible there.
    """
    return [{"type": "agent_reasoning", "text": s} for s in segments]
