"""Anthropic Messages logs as turns: responses, requests and `{request, response}` pairs.

A request carries the whole history so far, so for a logged pair only the request's
new input (the messages after its last assistant message) is shown before the
response; otherwise each line would repeat the conversation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from thinkfix.formats.anthropic import is_response
from thinkfix.formats.base import Path, Record
from thinkfix.formats.common import as_str, fmt_path
from thinkfix.transcript.common import block_parts, output_text, split_results
from thinkfix.transcript.model import Part, PartKind, Role, Turn

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
_NORMAL_STOPS = {None, "end_turn", "tool_use", "stop_sequence", "pause_turn"}


def _message(m: Any, path: Path, timestamp: str | None, where: str,
             model: str | None = None) -> Iterator[Turn]:
    if not isinstance(m, dict) or m.get("role") not in _ROLES:
        return
    parts = block_parts(m.get("content"), path + ("content",))
    if m["role"] == "assistant":
        stop = m.get("stop_reason")
        yield Turn(Role.ASSISTANT, tuple(parts), timestamp, as_str(m.get("model")) or model,
                   as_str(m.get("id")), note=None if stop in _NORMAL_STOPS else f"stop: {stop}",
                   where=where)
    else:
        yield from split_results(Role.USER, parts, timestamp=timestamp, where=where)


def _history(messages: list[Any], base: Path, timestamp: str | None, model: str | None,
             start: int = 0) -> Iterator[Turn]:
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
        assistant = [j for j, m in enumerate(messages)
                     if isinstance(m, dict) and m.get("role") == "assistant"]
        start = assistant[-1] + 1 if assistant else 0
    yield from _history(messages, base + ("messages",), timestamp, as_str(request.get("model")),
                        start)


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
        yield from _request(value.get("request"), ("request",), timestamp,
                            new_only=is_response(response))
        if is_response(response):
            yield from _message(response, ("response",), timestamp, "")
        return
    yield from _request(value, (), timestamp, False)
