"""Reading captured streams and recognising their provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.streams import FIXTURES
from thinkfix.providers.base import Wire
from thinkfix.providers.capture import (
    CaptureError,
    Encoding,
    detect,
    detect_wire,
    parse_capture,
    read_capture,
)


def test_capture_sse_events_comments_done_and_event_names() -> None:
    raw = (
        b': keep-alive\n\nevent: message_start\ndata: {"type":"message_start"}\n\n'
        b'data: {"a": 1}\n\ndata: [DONE]\n\n'
    )
    capture = parse_capture(raw)
    assert capture.encoding is Encoding.SSE and capture.done
    assert [(e.event, dict(e.data), e.line) for e in capture.events] == [
        ("message_start", {"type": "message_start"}, 4),
        (None, {"a": 1}, 6),
    ]


def test_capture_sse_crlf_and_cr_line_ends() -> None:
    for sep in (b"\r\n", b"\r"):
        raw = sep.join([b'data: {"a": 1}', b"", b'data: {"a": 2}', b"", b""])
        assert [e.data["a"] for e in parse_capture(raw).events] == [1, 2]


def test_capture_sse_multiline_data_and_no_space_after_colon() -> None:
    raw = 'data:{"a":\ndata: 1}\n\n'
    assert parse_capture(raw).payloads == ({"a": 1},)


def test_capture_sse_last_event_without_blank_line_still_counts() -> None:
    assert parse_capture('data: {"a": 1}\n\ndata: {"a": 2}').payloads == ({"a": 1}, {"a": 2})


def test_capture_sse_keeps_unicode_line_separators_inside_json() -> None:
    raw = 'data: {"t": "a\u2028b"}\n\n'.encode()
    assert parse_capture(raw).payloads == ({"t": "a\u2028b"},)


def test_capture_proxy_dump_with_http_headers() -> None:
    raw = b'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {"a": 1}\r\n\r\n'
    assert parse_capture(raw).payloads == ({"a": 1},)


def test_capture_ndjson_and_json_array_and_bom() -> None:
    capture = parse_capture(b'\xef\xbb\xbf{"done": false}\n\n{"done": true}\n')
    assert capture.encoding is Encoding.NDJSON
    assert [(e.data["done"], e.line) for e in capture.events] == [(False, 1), (True, 3)]
    capture = parse_capture(b'[{"type": "ping"}, {"type": "message_stop"}]')
    assert capture.encoding is Encoding.JSON and len(capture.events) == 2


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "empty"),
        (b"\n\n  \n", "empty"),
        (b"\xff\xfe\x00", "UTF-8"),
        (b"data: {not json}\n\n", "line 1: not JSON"),
        (b"data: [1, 2]\n\n", "JSON object"),
        (b'{"a": 1}\n{broken\n', "line 2"),
        (b"hello world\n", "neither SSE nor NDJSON"),
        (b"[1, 2]", "array of event objects"),
    ],
)
def test_capture_unreadable_input_is_an_error(raw: bytes, message: str) -> None:
    with pytest.raises(CaptureError, match=message):
        parse_capture(raw)


def test_capture_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="cannot read"):
        read_capture(tmp_path / "nope.sse")


@pytest.mark.parametrize(
    ("name", "wire"),
    [
        ("openai_chat_tool_call.sse", Wire.CHAT),
        ("deepseek_reasoner.sse", Wire.CHAT),
        ("openai_responses_reasoning.sse", Wire.RESPONSES),
        ("anthropic_thinking_tool_use.sse", Wire.ANTHROPIC),
        ("ollama_qwen3_thinking.ndjson", Wire.OLLAMA),
        ("gemini_thoughts.sse", Wire.GEMINI),
    ],
)
def test_capture_detects_the_wire_from_event_shapes(name: str, wire: Wire) -> None:
    assert detect_wire(read_capture(FIXTURES / name)) is wire


def test_capture_detect_with_explicit_provider() -> None:
    capture = read_capture(FIXTURES / "vllm_qwen3_think_leak.sse")
    assert detect(capture).adapter == "openai"
    assert (detect(capture, "fallback").adapter, detect(capture, "fallback").rule) == (
        "fallback",
        "explicit",
    )
    assert detect(capture, "together").adapter == "openai"
    with pytest.raises(CaptureError, match="unknown provider 'nope'"):
        detect(capture, "nope")


def test_capture_only_text_events_fall_back_and_unknown_shapes_fail() -> None:
    assert detect(parse_capture(b'{"text": "a"}\n')).adapter == "fallback"
    with pytest.raises(CaptureError, match="no provider adapter"):
        detect(parse_capture(b'{"foo": 1}\n'))
    with pytest.raises(CaptureError, match="no events"):
        detect(parse_capture(b"data: [DONE]\n\n"))
