"""OpenAI Responses API events."""

from __future__ import annotations

from typing import Any

from tests.providers.conftest import run, summary
from thinkfix.providers.base import Channel, Phase
from thinkfix.providers.openai_responses import OpenAIResponsesAdapter

RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "status": "in_progress",
    "model": "o4-mini",
    "output": [],
    "usage": None,
    "error": None,
    "incomplete_details": None,
}


def ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "sequence_number": 0, **fields}


def test_openai_responses_summary_parts_are_separate_segments() -> None:
    events = [
        ev("response.created", response=RESPONSE),
        ev(
            "response.output_item.added",
            output_index=0,
            item={"id": "rs_1", "type": "reasoning", "summary": []},
        ),
    ]
    for i, text in enumerate(["First.", "Second."]):
        events += [
            ev(
                "response.reasoning_summary_part.added",
                item_id="rs_1",
                output_index=0,
                summary_index=i,
                part={"type": "summary_text", "text": ""},
            ),
            ev(
                "response.reasoning_summary_text.delta",
                item_id="rs_1",
                output_index=0,
                summary_index=i,
                delta=text,
            ),
            ev(
                "response.reasoning_summary_part.done",
                item_id="rs_1",
                output_index=0,
                summary_index=i,
                part={"type": "summary_text", "text": text},
            ),
        ]
    events += [
        ev(
            "response.output_item.done",
            output_index=0,
            item={"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAA", "summary": []},
        ),
        ev(
            "response.content_part.added",
            item_id="msg_1",
            output_index=1,
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": []},
        ),
        ev(
            "response.output_text.delta",
            item_id="msg_1",
            output_index=1,
            content_index=0,
            delta="Hi",
        ),
        ev("response.content_part.done", item_id="msg_1", output_index=1, content_index=0, part={}),
        ev(
            "response.completed",
            response=dict(RESPONSE, status="completed", usage={"total_tokens": 9}),
        ),
    ]
    chunks = run(OpenAIResponsesAdapter(), events, finish=False)
    assert summary(chunks) == [
        ("start", "message", "", 0),
        ("start", "thinking", "", 0),
        ("delta", "thinking", "First.", 0),
        ("end", "thinking", "", 0),
        ("start", "thinking", "", 0),
        ("delta", "thinking", "Second.", 0),
        ("end", "thinking", "", 0),
        ("delta", "signature", "gAAA", 0),
        ("start", "visible", "", 1),
        ("delta", "visible", "Hi", 1),
        ("end", "visible", "", 1),
        ("end", "message", "", 0),
    ]
    assert chunks[0].metadata == {"id": "resp_1", "model": "o4-mini"}
    assert chunks[-1].metadata == {"stop_reason": "completed", "usage": {"total_tokens": 9}}


def test_openai_responses_reasoning_text_deltas() -> None:
    chunks = run(
        OpenAIResponsesAdapter(),
        [
            ev(
                "response.reasoning_text.delta",
                item_id="rs_1",
                output_index=0,
                content_index=0,
                delta="raw cot",
            )
        ],
    )
    assert ("delta", "thinking", "raw cot", 0) in summary(chunks)


def test_openai_responses_function_call_arguments() -> None:
    chunks = run(
        OpenAIResponsesAdapter(),
        [
            ev(
                "response.output_item.added",
                output_index=2,
                item={
                    "id": "fc_1",
                    "type": "function_call",
                    "call_id": "call_9",
                    "name": "f",
                    "arguments": "",
                },
            ),
            ev(
                "response.function_call_arguments.delta",
                item_id="fc_1",
                output_index=2,
                delta='{"a":',
            ),
            ev(
                "response.function_call_arguments.delta", item_id="fc_1", output_index=2, delta="1}"
            ),
            ev(
                "response.output_item.done",
                output_index=2,
                item={"id": "fc_1", "type": "function_call"},
            ),
        ],
    )
    [begin] = [c for c in chunks if c.channel is Channel.TOOL_CALL and c.phase is Phase.START]
    assert (
        begin.metadata == {"id": "call_9", "name": "f", "item_id": "fc_1"}
        and begin.content_index == 2
    )
    assert "".join(c.text for c in chunks if c.channel is Channel.TOOL_CALL) == '{"a":1}'


def test_openai_responses_incomplete_and_failed() -> None:
    incomplete = dict(
        RESPONSE, status="incomplete", incomplete_details={"reason": "max_output_tokens"}
    )
    chunks = run(OpenAIResponsesAdapter(), [ev("response.incomplete", response=incomplete)])
    assert chunks[-1].metadata == {"stop_reason": "max_output_tokens"}
    chunks = run(
        OpenAIResponsesAdapter(), [ev("error", code="server_error", message="boom", param=None)]
    )
    assert chunks[-1].metadata == {
        "error": {"code": "server_error", "message": "boom", "param": None}
    }


def test_openai_responses_claims_and_model() -> None:
    created = ev("response.created", response=RESPONSE)
    assert OpenAIResponsesAdapter.claims(created)
    assert not OpenAIResponsesAdapter.claims({"type": "message_start"})
    assert OpenAIResponsesAdapter.model_of(created) == "o4-mini"
