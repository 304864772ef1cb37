"""OpenAI Chat Completions chunks."""

from __future__ import annotations

from typing import Any

from tests.providers.conftest import SdkEvent, run, summary
from thinkfix.providers.base import Channel, Phase
from thinkfix.providers.openai_chat import OpenAIChatAdapter, native_texts


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    event = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    event.update(extra)
    return event


def test_openai_chat_content_lifecycle() -> None:
    chunks = run(
        OpenAIChatAdapter(),
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hi"}),
            chunk({"content": " there"}),
            chunk({}, "stop"),
        ],
    )
    assert summary(chunks) == [
        ("start", "message", "", 0),
        ("start", "visible", "", 0),
        ("delta", "visible", "Hi", 0),
        ("delta", "visible", " there", 0),
        ("end", "visible", "", 0),
        ("end", "message", "", 0),
    ]
    assert chunks[0].metadata == {"id": "chatcmpl-1", "model": "m"}
    assert chunks[-1].metadata == {"stop_reason": "stop"}
    assert all(c.provider == "openai" for c in chunks)


def test_openai_chat_native_fields_each_read() -> None:
    for name in ("reasoning_content", "reasoning", "thinking"):
        chunks = run(OpenAIChatAdapter(), [chunk({name: "plan", "content": None})])
        assert ("delta", "thinking", "plan", 0) in summary(chunks)


def test_openai_chat_mirrored_reasoning_counts_once() -> None:
    delta = {
        "reasoning_content": "plan",
        "reasoning": "plan",
        "reasoning_details": [{"type": "reasoning.text", "text": "plan", "index": 0}],
    }
    chunks = run(OpenAIChatAdapter(), [chunk(delta)])
    assert [c.text for c in chunks if c.channel is Channel.THINKING and c.text] == ["plan"]


def test_openai_chat_different_native_texts_both_kept_in_priority_order() -> None:
    assert native_texts({"reasoning": "b", "reasoning_content": "a"}) == ["a", "b"]


def test_openai_chat_reasoning_details_alone_and_their_signature() -> None:
    details = [
        {
            "type": "reasoning.text",
            "text": "plan",
            "signature": "sig==",
            "format": "anthropic-claude-v1",
        }
    ]
    chunks = run(OpenAIChatAdapter(), [chunk({"content": "", "reasoning_details": details})])
    assert ("delta", "thinking", "plan", 0) in summary(chunks)
    assert ("delta", "signature", "sig==", 0) in summary(chunks)


def test_openai_chat_encrypted_reasoning_details_are_redacted_thinking() -> None:
    details = [{"type": "reasoning.encrypted", "data": "opaque"}]
    chunks = run(OpenAIChatAdapter(), [chunk({"reasoning_details": details})])
    assert [c.text for c in chunks if c.channel is Channel.REDACTED and c.phase is Phase.DELTA] == [
        "opaque"
    ]


def test_openai_chat_reasoning_then_content_are_parallel_fields() -> None:
    chunks = run(
        OpenAIChatAdapter(),
        [
            chunk({"reasoning_content": "a", "content": None}),
            chunk({"reasoning_content": None, "content": "b"}),
            chunk({}, "stop"),
        ],
    )
    assert summary(chunks)[1:-1] == [
        ("start", "thinking", "", 0),
        ("delta", "thinking", "a", 0),
        ("start", "visible", "", 0),
        ("delta", "visible", "b", 0),
        ("end", "thinking", "", 0),
        ("end", "visible", "", 0),
    ]


def test_openai_chat_tool_calls_by_index() -> None:
    events = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "f", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x":'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "g", "arguments": "{}"},
                    }
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
    chunks = run(OpenAIChatAdapter(), events)
    starts = [c for c in chunks if c.channel is Channel.TOOL_CALL and c.phase is Phase.START]
    assert [(c.content_index, dict(c.metadata)) for c in starts] == [
        (0, {"id": "call_a", "name": "f"}),
        (1, {"id": "call_b", "name": "g"}),
    ]
    assert (
        "".join(c.text for c in chunks if c.channel is Channel.TOOL_CALL and c.content_index == 0)
        == '{"x":1}'
    )


def test_openai_chat_usage_chunk_after_finish_reaches_the_message_end() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    chunks = run(
        OpenAIChatAdapter(),
        [
            chunk({"content": "a"}),
            chunk({}, "stop"),
            {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": usage},
        ],
    )
    assert chunks[-1].metadata == {"stop_reason": "stop", "usage": usage}


def test_openai_chat_other_choices_ignored() -> None:
    event = chunk({"content": "a"})
    event["choices"].append({"index": 1, "delta": {"content": "b"}, "finish_reason": None})
    assert [c.text for c in run(OpenAIChatAdapter(), [event]) if c.text] == ["a"]


def test_openai_chat_nulls_everywhere_are_harmless() -> None:
    chunks = run(
        OpenAIChatAdapter(),
        [
            chunk({"role": None, "content": None, "reasoning_content": None, "tool_calls": None}),
            chunk(None),
        ],
    )  # type: ignore[arg-type]
    assert summary(chunks) == [("start", "message", "", 0), ("end", "message", "", 0)]


def test_openai_chat_error_event_ends_the_message() -> None:
    chunks = run(OpenAIChatAdapter(), [{"error": {"message": "overloaded", "code": 529}}])
    assert chunks[-1].metadata == {"error": {"message": "overloaded", "code": 529}}
    assert chunks[-1].is_complete


def test_openai_chat_sdk_objects_via_model_dump() -> None:
    chunks = run(
        OpenAIChatAdapter(), [SdkEvent(chunk({"content": "x", "reasoning_content": None}))]
    )
    assert ("delta", "visible", "x", 0) in summary(chunks)


def test_openai_chat_magistral_content_parts() -> None:
    content = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "plan"}]},
        {"type": "text", "text": "ok"},
    ]
    chunks = run(OpenAIChatAdapter(), [chunk({"content": content})])
    assert ("delta", "thinking", "plan", 0) in summary(chunks)
    assert ("delta", "visible", "ok", 0) in summary(chunks)


def test_openai_chat_reset_forgets_the_previous_message() -> None:
    adapter = OpenAIChatAdapter()
    run(adapter, [chunk({"content": "a"})])
    adapter.reset()
    chunks = run(adapter, [chunk({"content": "b"})])
    assert summary(chunks)[0] == ("start", "message", "", 0)


def test_openai_chat_claims_chunks_only() -> None:
    assert OpenAIChatAdapter.claims(chunk({}))
    assert OpenAIChatAdapter.claims({"choices": [{"delta": {}}]})
    assert not OpenAIChatAdapter.claims({"type": "message_start"})
    assert not OpenAIChatAdapter.claims({"choices": [{"message": {}}]})
