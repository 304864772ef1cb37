"""Ollama NDJSON."""

from __future__ import annotations

from typing import Any

from tests.providers.conftest import run, summary
from thinkfix.providers.base import Channel, Phase
from thinkfix.providers.ollama import OllamaAdapter


def line(message: dict[str, Any] | None = None, done: bool = False, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "qwen3:8b",
        "created_at": "2025-07-28T14:02:11.418233Z",
        "done": done,
    }
    if message is not None:
        out["message"] = {"role": "assistant", **message}
    out.update(extra)
    return out


def test_ollama_thinking_then_content_then_done() -> None:
    chunks = run(
        OllamaAdapter(),
        [
            line({"content": "", "thinking": "Hmm"}),
            line({"content": "Yes"}),
            line({"content": ""}, True, done_reason="stop", eval_count=3),
        ],
        finish=False,
    )
    assert summary(chunks) == [
        ("start", "message", "", 0),
        ("start", "thinking", "", 0),
        ("delta", "thinking", "Hmm", 0),
        ("start", "visible", "", 0),
        ("delta", "visible", "Yes", 0),
        ("end", "thinking", "", 0),
        ("end", "visible", "", 0),
        ("end", "message", "", 0),
    ]
    assert chunks[-1].metadata == {"stop_reason": "stop", "usage": {"eval_count": 3}}


def test_ollama_whole_tool_calls() -> None:
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    chunks = run(OllamaAdapter(), [line({"content": "", "tool_calls": [call, call]})])
    starts = [c for c in chunks if c.channel is Channel.TOOL_CALL and c.phase is Phase.START]
    assert len({c.content_index for c in starts}) == 2
    assert [c.text for c in chunks if c.channel is Channel.TOOL_CALL and c.text] == [
        '{"city": "Paris"}'
    ] * 2


def test_ollama_generate_endpoint_shape() -> None:
    chunks = run(
        OllamaAdapter(), [line(None, response="", thinking="Hmm"), line(None, response="Yes")]
    )
    assert ("delta", "thinking", "Hmm", 0) in summary(chunks)
    assert ("delta", "visible", "Yes", 0) in summary(chunks)


def test_ollama_error_line() -> None:
    chunks = run(OllamaAdapter(), [{"error": "model 'x' not found"}])
    assert chunks[-1].metadata == {"error": "model 'x' not found"}


def test_ollama_claims() -> None:
    assert OllamaAdapter.claims(line({"content": "a"}))
    assert not OllamaAdapter.claims({"choices": []})
