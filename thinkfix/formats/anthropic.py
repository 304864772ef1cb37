"""Anthropic Messages API logs: responses, requests, `{request, response}` pairs, and
bare MessageParam arrays (Cline/Roo `api_conversation_history.json`), as JSON or JSONL.

A response object was already returned and is not replayed, so an unsigned
`thinking` block before the text is fine there (archive). A request history is
replayed; an unsigned thinking block in it is a hard 400, so there the
reasoning stays in the repair manifest only.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import (
    FormatBase,
    as_str,
    block_reasoning,
    content_slots,
    place_elsewhere,
)
from thinkfix.formats.detection import has_keys, sample
from thinkfix.formats.openai_chat import ANTHROPIC_BLOCKS
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import AnthropicMode, PlacementKind
from thinkfix.formats.turn_shapes import block_parts, output_text, split_results
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import fmt_path, get_path

# Request keys only the Messages API has (`max_tokens` alone is shared with Chat Completions).
_REQUEST_KEYS = ("system", "anthropic_version", "thinking", "stop_sequences")


#: Content parts of the Responses API (a Codex rollout's bare message items), never Anthropic's.
_RESPONSES_PARTS = ("output_text", "input_text")


def is_response(o: Any) -> bool:
    """True for a Messages API response object (an assistant message with content blocks);
    a Codex rollout's bare message item has the same keys but Responses API parts (#21)."""
    return (
        isinstance(o, dict)
        and o.get("type") == "message"
        and o.get("role") == "assistant"
        and isinstance(o.get("content"), list)
        and not any(isinstance(b, dict) and b.get("type") in _RESPONSES_PARTS for b in o["content"])
    )


def _blocks(m: Any) -> bool:
    content = m.get("content") if isinstance(m, dict) else None
    return isinstance(content, list) and all(isinstance(b, dict) and "type" in b for b in content)


def _is_param(m: Any) -> bool:
    return isinstance(m, dict) and m.get("role") in ("user", "assistant") and "content" in m


def _units(value: Any, base: Path = ()) -> Iterator[tuple[Path, dict[str, Any], bool, Any]]:
    """(path, message, is_response, owner) for every assistant message in a record."""
    if is_response(value):
        yield base, value, True, value
    elif isinstance(value, list):
        for j, m in enumerate(value):
            if _is_param(m) and m.get("role") == "assistant":
                yield base + (j,), m, False, None
    elif isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            for j, m in enumerate(value["messages"]):
                if _is_param(m) and m.get("role") == "assistant":
                    yield base + ("messages", j), m, False, value
        for key in ("request", "response"):
            if isinstance(value.get(key), (dict, list)):
                yield from _units(value[key], base + (key,))


class Anthropic(FormatBase):
    id = "anthropic"
    description = (
        "Anthropic Messages API logs: responses, requests, {request, response} "
        "pairs, or bare MessageParam arrays (Cline/Roo histories), JSON or JSONL"
    )
    detection = (
        "{type: message, role: assistant, content: [blocks], stop_reason} responses, or "
        "messages whose content blocks use Anthropic types (tool_use, tool_result, "
        "thinking) or requests with max_tokens/system"
    )
    placement = (
        "responses (not replayed): an unsigned thinking block before the text block; "
        "request histories (replayed): the repair manifest only (--anthropic-mode "
        "auto, the default; manifest keeps every reasoning in the manifest only)"
    )
    shapes = (dict, list)
    doc_shapes = (dict, list)

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        values: list[Any] = list(s.values) if s.values else ([s.doc] if s.doc is not None else [])
        score = 0.0
        for v in values:
            if is_response(v) or (isinstance(v, dict) and is_response(v.get("response"))):
                return 0.9
            messages = [m for _, m, _, _ in _units(v)]
            everything = (
                v if isinstance(v, list) else v.get("messages") if isinstance(v, dict) else None
            )
            if (
                isinstance(everything, list)
                and everything
                and all(_is_param(m) for m in everything)
            ):
                if any(
                    isinstance(m.get("content"), list)
                    and any(
                        isinstance(b, dict) and as_str(b.get("type")) in ANTHROPIC_BLOCKS
                        for b in m["content"]
                    )
                    for m in everything
                ):
                    score = max(score, 0.8)
                elif (
                    isinstance(v, dict)
                    and any(k in v for k in _REQUEST_KEYS)
                    and all(_blocks(m) or isinstance(m.get("content"), str) for m in messages)
                ):
                    score = max(score, 0.65)
        if (
            not values
            and s.partial
            and has_keys(head, "role", "content")
            and any(f'"{t}"'.encode() in head for t in ANTHROPIC_BLOCKS | {"stop_reason"})
        ):
            score = 0.6
        return score

    def messages(self, record: Record) -> Iterator[Message]:
        for path, m, response, owner in _units(record.data):
            model = (
                m.get("model")
                if response
                else (owner.get("model") if isinstance(owner, dict) else None)
            )
            index = path[-1] if path and isinstance(path[-1], int) else record.index
            yield Message(
                path,
                index,
                partial(content_slots, m, path),
                native=partial(block_reasoning, m.get("content")),
                message_id=as_str(m.get("id")),
                model=as_str(model),
            )

    def archives(self, plan: Plan, draft: Draft) -> bool:
        """A response log is not replayed: it gets the thinking block (and a placeholder)."""
        return self._response_block(plan, draft)

    @staticmethod
    def _response_block(plan: Plan, draft: Draft) -> bool:
        site = draft.site
        in_block = len(site.path) >= 3 and isinstance(site.path[-2], int)
        msg = get_path(
            plan.records[site.record_index].data, site.path[:-3] if in_block else site.path[:-1]
        )
        return plan.options.anthropic_mode is AnthropicMode.AUTO and in_block and is_response(msg)

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        if self._response_block(plan, draft):
            self.place_blocks(
                draft,
                [{"type": "thinking", "thinking": s} for s in draft.segments],
                "unsigned thinking block (response log, not replayed)",
            )
            return
        place_elsewhere(
            draft,
            PlacementKind.MANIFEST,
            "repair manifest only (a request history is replayed, and an unsigned "
            "thinking block would be rejected)",
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- turns: the session as `show` reads it --------------------------------------------------
# Anthropic Messages logs as turns: responses, requests and `{request, response}` pairs.
#
# A request carries the whole history so far, so for a logged pair only the request's
# new input (the messages after its last assistant message) is shown before the
# response; otherwise each line would repeat the conversation.


_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
_NORMAL_STOPS = {None, "end_turn", "tool_use", "stop_sequence", "pause_turn"}


def _message(
    m: Any, path: Path, timestamp: str | None, where: str, model: str | None = None
) -> Iterator[Turn]:
    if not isinstance(m, dict) or m.get("role") not in _ROLES:
        return
    parts = block_parts(m.get("content"), path + ("content",))
    if m["role"] == "assistant":
        stop = m.get("stop_reason")
        yield Turn(
            Role.ASSISTANT,
            tuple(parts),
            timestamp,
            as_str(m.get("model")) or model,
            as_str(m.get("id")),
            note=None if stop in _NORMAL_STOPS else f"stop: {stop}",
            where=where,
        )
    else:
        yield from split_results(Role.USER, parts, timestamp=timestamp, where=where)


def _history(
    messages: list[Any], base: Path, timestamp: str | None, model: str | None, start: int = 0
) -> Iterator[Turn]:
    for j in range(start, len(messages)):
        path = base + (j,)
        yield from _message(messages[j], path, timestamp, fmt_path(path), model)


def _request(request: Any, base: Path, timestamp: str | None, new_only: bool) -> Iterator[Turn]:
    if isinstance(request, list):
        yield from _history(request, base, timestamp, None)
        return
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return
    system = output_text(request.get("system"))
    if system:
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, system),), timestamp, note="system prompt")
    messages = request["messages"]
    start = 0
    if new_only:
        assistant = [
            j
            for j, m in enumerate(messages)
            if isinstance(m, dict) and m.get("role") == "assistant"
        ]
        start = assistant[-1] + 1 if assistant else 0
    yield from _history(
        messages, base + ("messages",), timestamp, as_str(request.get("model")), start
    )


def turns(record: Record) -> Iterator[Turn]:
    value = record.data
    if record.error is not None or value is None:
        return
    if is_response(value):
        yield from _message(value, (), None, "")
        return
    if isinstance(value, list):
        yield from _request(value, (), None, False)
        return
    if not isinstance(value, dict):
        return
    timestamp = as_str(value.get("timestamp"))
    response = value.get("response")
    if "request" in value or "response" in value:
        yield from _request(
            value.get("request"), ("request",), timestamp, new_only=is_response(response)
        )
        if is_response(response):
            yield from _message(response, ("response",), timestamp, "")
        return
    yield from _request(value, (), timestamp, False)
