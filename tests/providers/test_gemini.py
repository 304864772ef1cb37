"""Gemini stream chunks."""

from __future__ import annotations

from typing import Any

from tests.providers.conftest import run, summary
from thinkfix.providers.base import Channel
from thinkfix.providers.gemini import GeminiAdapter


def chunk(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 3},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }


def test_gemini_thought_then_text_then_signature_on_empty_part() -> None:
    chunks = run(
        GeminiAdapter(),
        [
            chunk({"text": "plan", "thought": True}),
            chunk({"text": "Answer"}),
            chunk({"text": "", "thoughtSignature": "CiQB"}, finish="STOP"),
        ],
        finish=False,
    )
    assert summary(chunks) == [
        ("start", "message", "", 0),
        ("start", "thinking", "", 0),
        ("delta", "thinking", "plan", 0),
        ("end", "thinking", "", 0),
        ("start", "visible", "", 1),
        ("delta", "visible", "Answer", 1),
        ("delta", "signature", "CiQB", 1),
        ("end", "visible", "", 1),
        ("end", "message", "", 0),
    ]
    assert chunks[0].metadata == {"id": "r1", "model": "gemini-2.5-flash"}
    assert chunks[-1].metadata == {"usage": {"promptTokenCount": 3}, "stop_reason": "STOP"}


def test_gemini_function_call_carries_its_signature() -> None:
    chunks = run(
        GeminiAdapter(),
        [
            chunk({"text": "plan", "thought": True}),
            chunk({"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "S"}),
        ],
    )
    tool = [c for c in chunks if c.channel is Channel.TOOL_CALL]
    [sig] = [c for c in chunks if c.channel is Channel.SIGNATURE]
    assert [c.text for c in tool if c.text] == ['{"a": 1}']
    assert sig.content_index == tool[0].content_index and dict(tool[0].metadata) == {"name": "f"}


def test_gemini_non_text_parts_are_skipped() -> None:
    chunks = run(GeminiAdapter(), [chunk({"inlineData": {"mimeType": "image/png", "data": "AAA"}})])
    assert summary(chunks) == [("start", "message", "", 0), ("end", "message", "", 0)]


def test_gemini_claims_and_model() -> None:
    assert GeminiAdapter.claims(chunk({"text": "a"}))
    assert GeminiAdapter.model_of(chunk()) == "gemini-2.5-flash"
    assert not GeminiAdapter.claims({"choices": []})


def test_gemini_error_event_ends_the_message() -> None:
    error = {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}
    chunks = run(GeminiAdapter(), [{"error": error}])
    assert chunks[-1].is_complete and chunks[-1].metadata == {"error": error}
    assert [c for c in chunks if c.channel is not Channel.MESSAGE] == []
