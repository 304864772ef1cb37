"""DeepSeek: the chat wire under its own name."""

from __future__ import annotations

from tests.providers.conftest import run, summary
from thinkfix.providers.deepseek import DeepSeekAdapter
from thinkfix.providers.openai_chat import OpenAIChatAdapter


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "deepseek-reasoner",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def test_deepseek_reasoning_content_then_content() -> None:
    events = [
        _chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        _chunk({"content": None, "reasoning_content": "Think."}),
        _chunk({"content": "Answer.", "reasoning_content": None}),
        _chunk({"content": "", "reasoning_content": None}, "stop"),
    ]
    chunks = run(DeepSeekAdapter(), events)
    assert summary(chunks) == [
        ("start", "message", "", 0),
        ("start", "thinking", "", 0),
        ("delta", "thinking", "Think.", 0),
        ("start", "visible", "", 0),
        ("delta", "visible", "Answer.", 0),
        ("end", "thinking", "", 0),
        ("end", "visible", "", 0),
        ("end", "message", "", 0),
    ]
    assert {c.provider for c in chunks} == {"deepseek"}


def test_deepseek_parses_exactly_like_the_chat_adapter() -> None:
    events = [
        _chunk({"reasoning_content": "a"}),
        _chunk({"content": "<think>b</think>c"}),
        _chunk({}, "stop"),
    ]
    assert summary(run(DeepSeekAdapter(), events)) == summary(run(OpenAIChatAdapter(), events))
