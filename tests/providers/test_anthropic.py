"""Anthropic Messages stream events."""

from __future__ import annotations

from typing import Any

from tests.providers.conftest import SdkEvent, run, summary
from thinkfix.providers.anthropic import AnthropicAdapter
from thinkfix.providers.base import Channel, Phase


def start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **d: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}
MESSAGE_END = [
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 42},
    },
    {"type": "message_stop"},
]


def test_anthropic_thinking_signature_text_lifecycle() -> None:
    events = [
        MESSAGE_START,
        start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        {"type": "ping"},
        delta(0, type="thinking_delta", thinking="Let me"),
        delta(0, type="thinking_delta", thinking=" think."),
        delta(0, type="signature_delta", signature="EqQBCkgI=="),
        stop(0),
        start(1, {"type": "text", "text": ""}),
        delta(1, type="text_delta", text="Answer."),
        stop(1),
        *MESSAGE_END,
    ]
    chunks = run(AnthropicAdapter(), events, finish=False)
    assert summary(chunks) == [
        ("start", "message", "", 0),
        ("start", "thinking", "", 0),
        ("delta", "thinking", "Let me", 0),
        ("delta", "thinking", " think.", 0),
        ("delta", "signature", "EqQBCkgI==", 0),
        ("end", "thinking", "", 0),
        ("start", "visible", "", 1),
        ("delta", "visible", "Answer.", 1),
        ("end", "visible", "", 1),
        ("end", "message", "", 0),
    ]
    assert chunks[0].metadata == {"id": "msg_1", "model": "claude-sonnet-4-20250514"}
    assert chunks[-1].metadata == {
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 42},
    }
    assert run(AnthropicAdapter(), [], finish=True) == []


def test_anthropic_redacted_thinking_carries_its_data() -> None:
    chunks = run(
        AnthropicAdapter(),
        [MESSAGE_START, start(0, {"type": "redacted_thinking", "data": "EmwK"}), stop(0)],
    )
    assert summary(chunks)[1:] == [
        ("start", "redacted_thinking", "", 0),
        ("delta", "redacted_thinking", "EmwK", 0),
        ("end", "redacted_thinking", "", 0),
        ("end", "message", "", 0),
    ]


def test_anthropic_tool_use_with_input_json_deltas() -> None:
    events = [
        MESSAGE_START,
        start(2, {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}),
        delta(2, type="input_json_delta", partial_json=""),
        delta(2, type="input_json_delta", partial_json='{"city": "Paris"}'),
        stop(2),
    ]
    chunks = run(AnthropicAdapter(), events)
    [begin] = [c for c in chunks if c.channel is Channel.TOOL_CALL and c.phase is Phase.START]
    assert begin.metadata == {"id": "toolu_1", "name": "get_weather"} and begin.content_index == 2
    assert "".join(c.text for c in chunks if c.channel is Channel.TOOL_CALL) == '{"city": "Paris"}'


def test_anthropic_unknown_blocks_and_deltas_give_nothing() -> None:
    events = [
        MESSAGE_START,
        start(0, {"type": "web_search_tool_result", "tool_use_id": "x", "content": []}),
        stop(0),
        start(1, {"type": "text", "text": ""}),
        delta(1, type="citations_delta", citation={"type": "char_location"}),
        stop(1),
    ]
    assert [c for c in run(AnthropicAdapter(), events) if c.phase is Phase.DELTA] == []


def test_anthropic_thinking_without_signature_has_no_signature_chunk() -> None:
    events = [
        MESSAGE_START,
        start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="x"),
        stop(0),
    ]
    assert not [c for c in run(AnthropicAdapter(), events) if c.channel is Channel.SIGNATURE]


def test_anthropic_error_event_ends_the_message() -> None:
    error = {"type": "overloaded_error", "message": "Overloaded"}
    chunks = run(
        AnthropicAdapter(),
        [
            MESSAGE_START,
            start(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="Hal"),
            {"type": "error", "error": error},
        ],
    )
    assert summary(chunks)[-2:] == [("end", "visible", "", 0), ("end", "message", "", 0)]
    assert chunks[-1].metadata["error"] == error


def test_anthropic_stream_cut_off_is_closed_by_finish() -> None:
    chunks = run(
        AnthropicAdapter(),
        [
            MESSAGE_START,
            start(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="Hal"),
        ],
    )
    assert summary(chunks)[-2:] == [("end", "visible", "", 0), ("end", "message", "", 0)]


def test_anthropic_sdk_events() -> None:
    chunks = run(
        AnthropicAdapter(),
        [
            SdkEvent(MESSAGE_START),
            SdkEvent(start(0, {"type": "text", "text": ""})),
            SdkEvent(delta(0, type="text_delta", text="ok")),
        ],
    )
    assert ("delta", "visible", "ok", 0) in summary(chunks)


def test_anthropic_claims_and_model() -> None:
    assert AnthropicAdapter.claims(MESSAGE_START)
    assert not AnthropicAdapter.claims({"type": "response.created"})
    assert AnthropicAdapter.model_of(MESSAGE_START) == "claude-sonnet-4-20250514"
