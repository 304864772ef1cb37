"""Read a captured provider stream and tell which adapter it needs.

Captures come from `curl -N` (SSE exactly as sent: `event:` / `data:` lines, `: comment`
keep-alives, CRLF from some servers, `data: [DONE]`), from proxies (sometimes with the HTTP
status line and headers in front), or as NDJSON (Ollama). The provider is recognised from
the event shapes, never the file name, because a capture is often named after the bug.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import orjson

from thinkfix.providers.base import Wire
from thinkfix.providers.registry import (
    ADAPTERS,
    Resolution,
    provider_adapter,
    resolve,
    wire_default,
)


class CaptureError(Exception):
    """The capture cannot be read, or no adapter knows its events; the message says why."""


class Encoding(str, Enum):
    SSE = "sse"
    NDJSON = "ndjson"
    JSON = "json"  # one JSON array of events, as some loggers save them


@dataclass(frozen=True)
class CaptureEvent:
    """One event's parsed JSON, its SSE `event:` name if any, and the line it started on."""

    data: Mapping[str, Any]
    event: str | None = None
    line: int = 0


@dataclass(frozen=True)
class Capture:
    encoding: Encoding
    events: tuple[CaptureEvent, ...]
    done: bool = False  # saw `data: [DONE]`

    @property
    def payloads(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(e.data for e in self.events)


_LINES = re.compile(r"\r\n|\r|\n")  # not str.splitlines: U+2028 may sit raw inside JSON strings
_SSE_FIELD = re.compile(r"^(data|event|id|retry)(:|$)")


def _json(text: str, line: int) -> Mapping[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise CaptureError(f"line {line}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise CaptureError(f"line {line}: an event must be a JSON object")
    return value


def _sse(lines: list[tuple[int, str]]) -> Capture:
    events: list[CaptureEvent] = []
    done = False
    name: str | None = None
    data: list[str] = []
    first = 0

    def dispatch() -> None:
        nonlocal name, done
        if data:
            payload = "\n".join(data)
            if payload.strip() == "[DONE]":
                done = True
            else:
                events.append(CaptureEvent(_json(payload, first), name, first))
        data.clear()
        name = None

    for number, line in lines:
        if not line:
            dispatch()
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "data":
                first = first if data else number
                data.append(value)
            elif key == "event":
                name = value
    dispatch()  # a capture cut off without its final blank line still ends its last event
    return Capture(Encoding.SSE, tuple(events), done)


def parse_capture(raw: bytes | str) -> Capture:
    """Parse SSE, NDJSON or a JSON array of events; CaptureError when it is none of them."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CaptureError(f"not UTF-8 text ({exc})") from None
    else:
        text = raw.removeprefix("\ufeff")
    lines = list(enumerate(_LINES.split(text), start=1))
    if lines and re.match(r"HTTP/\d", lines[0][1]):
        # A proxy dump: skip the status line and headers up to the blank line.
        blank = next((i for i, (_, line) in enumerate(lines) if not line.strip()), len(lines) - 1)
        lines = lines[blank + 1 :]
    content = [(n, line) for n, line in lines if line.strip()]
    if not content:
        raise CaptureError("the capture is empty")
    head = content[0][1].lstrip()
    if head.startswith(":") or _SSE_FIELD.match(head):
        return _sse(lines)
    if head.startswith("["):
        try:
            array = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise CaptureError(f"not a JSON array of events ({exc})") from None
        if not isinstance(array, list) or not all(isinstance(e, dict) for e in array):
            raise CaptureError("a JSON capture must be an array of event objects")
        return Capture(Encoding.JSON, tuple(CaptureEvent(e) for e in array))
    if head.startswith("{"):
        return Capture(
            Encoding.NDJSON, tuple(CaptureEvent(_json(line, n), None, n) for n, line in content)
        )
    raise CaptureError(f"line {content[0][0]}: neither SSE nor NDJSON")


def read_capture(path: str | Path) -> Capture:
    """Read and parse a capture file; CaptureError for a missing or unreadable file too."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise CaptureError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_capture(raw)


def detect_wire(capture: Capture) -> Wire | None:
    """The wire of the first event any native adapter claims; TEXT if only the fallback reads it."""
    for data in capture.payloads:
        for cls in ADAPTERS.values():
            if cls.wire is not Wire.TEXT and cls.claims(data):
                return cls.wire
    if any(cls.claims(data) for data in capture.payloads for cls in ADAPTERS.values()):
        return Wire.TEXT
    return None


def capture_model(capture: Capture, wire: Wire) -> str | None:
    """The first model name the events give."""
    cls = ADAPTERS[wire_default(wire)]
    for data in capture.payloads:
        model = cls.model_of(data)
        if model:
            return model
    return None


def detect(capture: Capture, provider: str | None = None) -> Resolution:
    """The adapter for a capture: an adapter named by `provider` as is, else by shape and model."""
    if provider is not None:
        named = provider_adapter(provider)
        if named is None:
            known = ", ".join(sorted(ADAPTERS))
            raise CaptureError(f"unknown provider {provider!r} (adapters: {known})")
        if provider.strip().lower() in ADAPTERS:
            return Resolution(named, "explicit")
    if not capture.events:
        raise CaptureError("the capture holds no events")
    wire = detect_wire(capture)
    if wire is None:
        raise CaptureError("no provider adapter recognises these events")
    return resolve(provider, capture_model(capture, wire), wire=wire)
