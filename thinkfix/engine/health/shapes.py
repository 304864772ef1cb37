"""Where each format keeps tool calls, tool results and thinking blocks inside a record.

Read from the runtimes' own shapes (docs/health.md cites each): a format is listed only
where its calls and results are known, and nested values are never searched blindly (a
Claude Code `progress` record embeds a sub-agent's messages, a tool's input may hold any
JSON), so each reader walks the few fields its runtime writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: One tool event: (True for a call, False for a result, the call id, its JSON path).
ToolEvent = tuple[bool, str, str]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _blocks(blocks: Any, base: str) -> Iterator[ToolEvent]:
    """Anthropic content blocks: `tool_use` (and `server_tool_use`, `mcp_tool_use`) by `id`,
    `tool_result` (and the server tools' `*_tool_result`) by `tool_use_id`."""
    for i, b in enumerate(as_list(blocks)):
        b = as_dict(b)
        kind = b.get("type")
        if not isinstance(kind, str):
            continue
        if kind.endswith("tool_use") and (call := as_id(b.get("id"))):
            yield True, call, f"{base}[{i}]"
        elif kind.endswith("tool_result") and (ref := as_id(b.get("tool_use_id"))):
            yield False, ref, f"{base}[{i}]"


def _openai(message: Any, base: str) -> Iterator[ToolEvent]:
    """A Chat Completions message: `tool_calls[].id`, answered by a `tool` message's
    `tool_call_id`."""
    m = as_dict(message)
    for j, call in enumerate(as_list(m.get("tool_calls"))):
        if call_id := as_id(as_dict(call).get("id")):
            yield True, call_id, f"{base}tool_calls[{j}]"
    if m.get("role") == "tool" and (ref := as_id(m.get("tool_call_id"))):
        yield False, ref, base.rstrip(".") or "$"


def _messages(
    doc: Any, key: str, each: Callable[[Any, str], Iterator[ToolEvent]]
) -> Iterator[ToolEvent]:
    for k, m in enumerate(as_list(as_dict(doc).get(key))):
        yield from each(m, f"{key}[{k}].")


def _claude_code(o: dict[str, Any]) -> Iterator[ToolEvent]:
    if o.get("type") in ("user", "assistant"):
        yield from _blocks(as_dict(o.get("message")).get("content"), "message.content")


def _factory_droid(o: dict[str, Any]) -> Iterator[ToolEvent]:
    if o.get("type") == "message":
        yield from _blocks(as_dict(o.get("message")).get("content"), "message.content")


def _claw_code(o: dict[str, Any]) -> Iterator[ToolEvent]:
    if o.get("type") == "message":
        yield from _blocks(as_dict(o.get("message")).get("blocks"), "message.blocks")
    for k, m in enumerate(as_list(o.get("messages"))):  # the legacy whole-file JSON
        yield from _blocks(as_dict(m).get("blocks"), f"messages[{k}].blocks")


def _cline(doc: Any) -> Iterator[ToolEvent]:
    for k, m in enumerate(as_list(doc)):
        yield from _blocks(as_dict(m).get("content"), f"[{k}].content")


def _anthropic(o: dict[str, Any]) -> Iterator[ToolEvent]:
    request = as_dict(o.get("request"))
    for k, m in enumerate(as_list(request.get("messages"))):
        yield from _blocks(as_dict(m).get("content"), f"request.messages[{k}].content")


def _openai_chat(doc: Any) -> Iterator[ToolEvent]:
    if isinstance(doc, list):  # a bare array of messages
        for k, m in enumerate(doc):
            yield from _openai(m, f"[{k}].")
        return
    o = as_dict(doc)
    if "messages" in o:
        yield from _messages(o, "messages", _openai)
    else:  # one message a line
        yield from _openai(o, "")


def _copilot_cli(o: dict[str, Any]) -> Iterator[ToolEvent]:
    data = as_dict(o.get("data"))
    kind = o.get("type")
    if kind == "assistant.message":
        for j, r in enumerate(as_list(data.get("toolRequests"))):
            if call := as_id(as_dict(r).get("toolCallId")):
                yield True, call, f"data.toolRequests[{j}]"
    elif kind == "tool.execution_complete" and (ref := as_id(data.get("toolCallId"))):
        yield False, ref, "data"
    yield from _messages(o, "chatMessages", _openai)  # the legacy history file


_CODEX_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_CODEX_RESULTS = frozenset({"function_call_output", "custom_tool_call_output"})


def _codex(o: dict[str, Any]) -> Iterator[ToolEvent]:
    """`response_item` payloads (and the bare items of rollouts from before the envelope):
    a call's `call_id` answered by a `*_output` item's (codex-rs protocol `ResponseItem`)."""
    item, base = (
        (as_dict(o.get("payload")), "payload") if o.get("type") == "response_item" else (o, "")
    )
    kind = item.get("type")
    call_id = as_id(item.get("call_id"))
    if call_id is None:
        return
    where = base or "$"
    if kind in _CODEX_CALLS:
        yield True, call_id, where
    elif kind in _CODEX_RESULTS:
        yield False, call_id, where


def _pi(o: dict[str, Any]) -> Iterator[ToolEvent]:
    if o.get("type") != "message":
        return
    m = as_dict(o.get("message"))
    if m.get("role") == "assistant":
        for i, b in enumerate(as_list(m.get("content"))):
            b = as_dict(b)
            if b.get("type") == "toolCall" and (call := as_id(b.get("id"))):
                yield True, call, f"message.content[{i}]"
    elif m.get("role") == "toolResult" and (ref := as_id(m.get("toolCallId"))):
        yield False, ref, "message"


def _goose(o: dict[str, Any]) -> Iterator[ToolEvent]:
    for i, item in enumerate(as_list(o.get("content"))):
        item = as_dict(item)
        kind, ref = item.get("type"), as_id(item.get("id"))
        if ref and kind == "toolRequest":
            yield True, ref, f"content[{i}]"
        elif ref and kind == "toolResponse":
            yield False, ref, f"content[{i}]"


def _qwen(o: dict[str, Any]) -> Iterator[ToolEvent]:
    for i, part in enumerate(as_list(as_dict(o.get("message")).get("parts"))):
        part = as_dict(part)
        if call := as_id(as_dict(part.get("functionCall")).get("id")):
            yield True, call, f"message.parts[{i}].functionCall"
        if ref := as_id(as_dict(part.get("functionResponse")).get("id")):
            yield False, ref, f"message.parts[{i}].functionResponse"


def gemini_message(m: Any, base: str) -> tuple[ToolEvent, ...]:
    """A `gemini` message's calls and results as `convertSessionToClientHistory`
    (packages/core/src/utils/sessionUtils.ts) sends them: its calls are the `functionCall`
    parts of `content` when that holds a call or a thought (a current session: "content is
    the source of truth for all parts"), else its `toolCalls`; a
    `functionResponse` goes out only for a `toolCalls` entry that holds a `result`."""
    m = as_dict(m)
    if m.get("type") != "gemini":
        return ()
    found: list[ToolEvent] = []
    content = [as_dict(p) for p in as_list(m.get("content"))]
    for i, part in enumerate(content):
        if call_id := as_id(as_dict(part.get("functionCall")).get("id")):
            found.append((True, call_id, f"{base}content[{i}].functionCall"))
    in_content = any(p.get("functionCall") or p.get("thought") for p in content)
    for j, call in enumerate(as_list(m.get("toolCalls"))):
        call = as_dict(call)
        if call_id := as_id(call.get("id")):
            if not in_content:
                found.append((True, call_id, f"{base}toolCalls[{j}]"))
            if call.get("result"):
                found.append((False, call_id, f"{base}toolCalls[{j}]"))
    return tuple(found)


def _gemini(o: dict[str, Any]) -> Iterator[ToolEvent]:
    """Every version of every message a Gemini CLI record holds (what the runtime loads of
    them: `engine/health/loaded.py`)."""
    yield from gemini_message(o, "")  # a message line of the 0.40+ JSONL
    for k, m in enumerate(as_list(o.get("messages"))):  # the chat JSON
        yield from gemini_message(m, f"messages[{k}].")
    for k, m in enumerate(as_list(as_dict(o.get("$set")).get("messages"))):  # a checkpoint
        yield from gemini_message(m, f"$set.messages[{k}].")


#: A tool part OpenCode finished (`MessageV2.ToolPart` `state.status`); `pending` and
#: `running` are calls an interrupt left without a result.
_OPENCODE_DONE = frozenset({"completed", "error"})


def _opencode_part(part: dict[str, Any], where: str) -> Iterator[ToolEvent]:
    if part.get("type") != "tool":
        return
    call = as_id(part.get("callID")) or as_id(part.get("id"))
    if call is None:
        return
    yield True, call, where
    if as_dict(part.get("state")).get("status") in _OPENCODE_DONE:
        yield False, call, where


def _opencode(o: dict[str, Any]) -> Iterator[ToolEvent]:
    yield from _opencode_part(o, "$")  # a part file of the file store
    for i, part in enumerate(as_list(o.get("parts"))):  # a message of the SQLite store
        yield from _opencode_part(as_dict(part), f"parts[{i}]")


@dataclass(frozen=True)
class Loaded:
    """What one record does to the messages its runtime loads and sends back
    (`engine/health/loaded.py`): the message `key` (a later one with the same key replaces
    it where it stood) with its tool events, paired with the other messages of its `scope`;
    `clear` drops the messages so far whose key starts with it, `cut` the message of that
    key and every later one (every one when it is not there and `cut_all`)."""

    key: str = ""
    events: tuple[ToolEvent, ...] = ()
    scope: str = ""
    clear: str | None = None
    cut: str | None = None
    cut_all: bool = True


@dataclass(frozen=True)
class ToolShape:
    """A format's tool events, and whether calls pair within the file or each record (an
    Anthropic log line holds a whole request history of its own); `loads`, where a runtime
    sends back less than the file holds or pairs per message, says what it loads."""

    events: Callable[[Any], Iterator[ToolEvent]]
    per_record: bool = False
    loads: Callable[[Any], Iterator[Loaded]] | None = None
    #: Where a result's call must be, as the finding says it.
    within: str = "the session"


def _objects(
    read: Callable[[dict[str, Any]], Iterator[ToolEvent]],
) -> Callable[[Any], Iterator[ToolEvent]]:
    def events(data: Any) -> Iterator[ToolEvent]:
        return read(data) if isinstance(data, dict) else iter(())

    return events


TOOL_SHAPES: dict[str, ToolShape] = {
    "claude-code": ToolShape(_objects(_claude_code)),
    "factory-droid": ToolShape(_objects(_factory_droid)),
    "claw-code": ToolShape(_objects(_claw_code)),
    "cline": ToolShape(_cline),
    "roo-code": ToolShape(_cline),
    "kilo-code": ToolShape(_cline),
    "anthropic": ToolShape(_objects(_anthropic), per_record=True),
    "openai-chat": ToolShape(_openai_chat),
    "hermes": ToolShape(_openai_chat),
    "kimi-cli": ToolShape(_openai_chat),
    "codex": ToolShape(_objects(_codex)),
    "pi": ToolShape(_objects(_pi)),
    "goose": ToolShape(_objects(_goose)),
    "copilot-cli": ToolShape(_objects(_copilot_cli)),
    "qwen-code": ToolShape(_objects(_qwen)),
    "gemini-cli": ToolShape(_objects(_gemini)),
    "opencode": ToolShape(_objects(_opencode)),
    "kilo": ToolShape(_objects(_opencode)),
}


# --- thinking blocks ---


@dataclass(frozen=True)
class Thinking:
    """A thinking block the runtime sends back to its API: where it is, its signature
    (None: the field is absent), and whether the runtime requires one there."""

    path: str
    signature: str | None
    text: str
    redacted: bool = False


_ANTHROPIC_MODEL = re.compile(r"claude|anthropic|\bopus\b|\bsonnet\b|\bhaiku\b", re.IGNORECASE)


def _thinking_blocks(blocks: Any, base: str) -> Iterator[Thinking]:
    """Anthropic `thinking` blocks (`signature`) and `redacted_thinking` (`data`)."""
    for i, b in enumerate(as_list(blocks)):
        b = as_dict(b)
        kind = b.get("type")
        if kind == "thinking":
            sig = b.get("signature")
            text = b.get("thinking")
            yield Thinking(
                f"{base}[{i}]",
                sig if isinstance(sig, str) else None,
                text if isinstance(text, str) else "",
            )
        elif kind == "redacted_thinking":
            data = b.get("data")
            yield Thinking(f"{base}[{i}]", data if isinstance(data, str) else None, "", True)


def _cc_thinking(o: dict[str, Any], model: str | None) -> Iterator[Thinking]:
    if o.get("type") == "assistant":
        yield from _thinking_blocks(as_dict(o.get("message")).get("content"), "message.content")


def _claw_thinking(o: dict[str, Any], model: str | None) -> Iterator[Thinking]:
    # claw-code sends thinking blocks back for every provider; only Anthropic refuses an
    # unsigned one (formats/claw_code.py)
    if not (model and _ANTHROPIC_MODEL.search(model)):
        return
    if o.get("type") == "message" and as_dict(o.get("message")).get("role") == "assistant":
        yield from _thinking_blocks(as_dict(o.get("message")).get("blocks"), "message.blocks")
    for k, m in enumerate(as_list(o.get("messages"))):
        if as_dict(m).get("role") == "assistant":
            yield from _thinking_blocks(as_dict(m).get("blocks"), f"messages[{k}].blocks")


def _anthropic_thinking(o: dict[str, Any], model: str | None) -> Iterator[Thinking]:
    # a request history is what was sent: a response is a log nothing replays
    for k, m in enumerate(as_list(as_dict(o.get("request")).get("messages"))):
        if as_dict(m).get("role") == "assistant":
            yield from _thinking_blocks(as_dict(m).get("content"), f"request.messages[{k}].content")


def _pi_thinking(o: dict[str, Any], model: str | None) -> Iterator[Thinking]:
    """pi turns an unsigned thinking block into text before it sends it (pi-ai
    providers/anthropic.ts `convertMessages`), but a redacted one goes out as
    `redacted_thinking` with its `thinkingSignature` as the data: empty, Anthropic refuses."""
    m = as_dict(o.get("message")) if o.get("type") == "message" else {}
    if m.get("role") != "assistant" or m.get("api") != "anthropic-messages":
        return
    for i, b in enumerate(as_list(m.get("content"))):
        b = as_dict(b)
        if b.get("type") == "thinking" and b.get("redacted") is True:
            sig = b.get("thinkingSignature")
            yield Thinking(f"message.content[{i}]", sig if isinstance(sig, str) else None, "", True)


@dataclass(frozen=True)
class ThinkingShape:
    """A format's replayed thinking blocks, and whether a duplicate is looked for within
    each record (a request history holds the earlier turns again) or the whole file."""

    blocks: Callable[[dict[str, Any], str | None], Iterator[Thinking]]
    per_record: bool = False


#: Formats whose runtime replays thinking blocks to an API that checks their signature.
THINKING_SHAPES: dict[str, ThinkingShape] = {
    "claude-code": ThinkingShape(_cc_thinking),
    "claw-code": ThinkingShape(_claw_thinking),
    "anthropic": ThinkingShape(_anthropic_thinking, per_record=True),
    "pi": ThinkingShape(_pi_thinking),
}
