"""Tag fallback: only the text is read."""

from __future__ import annotations

import pytest

from tests.providers.conftest import run, summary
from thinkfix.providers.fallback import TagFallbackAdapter, event_text


@pytest.mark.parametrize(
    ("event", "text"),
    [
        ({"choices": [{"index": 0, "delta": {"content": "a"}}]}, "a"),
        ({"choices": [{"index": 0, "text": "a", "finish_reason": None}]}, "a"),
        ({"message": {"role": "assistant", "content": "a"}}, "a"),
        ({"response": "a", "done": False}, "a"),
        ({"token": {"id": 1, "text": "a", "special": False}}, "a"),
        ({"delta": {"text": "a"}}, "a"),
        ({"text": "a"}, "a"),
        ({"content": "a"}, "a"),
        ({"foo": 1}, None),
    ],
)
def test_fallback_event_text_shapes(event: dict[str, object], text: str | None) -> None:
    assert event_text(event) == text
    assert TagFallbackAdapter.claims(event) is (text is not None)


def test_fallback_ignores_native_reasoning_and_keeps_tags_for_the_normalizer() -> None:
    events = [
        {"model": "m", "choices": [{"delta": {"reasoning_content": "x", "content": "<think>a"}}]},
        {"choices": [{"delta": {"content": "</think>b"}}]},
    ]
    assert summary(run(TagFallbackAdapter(), events)) == [
        ("start", "message", "", 0),
        ("start", "visible", "", 0),
        ("delta", "visible", "<think>a", 0),
        ("delta", "visible", "</think>b", 0),
        ("end", "visible", "", 0),
        ("end", "message", "", 0),
    ]
