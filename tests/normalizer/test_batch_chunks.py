"""`normalize` feeds a long text to the pipeline in chunks (#22 item 9): the result is the
one the whole text fed at once gives, for any chunk size.

A text of many tokens kept a raw span and a piece per token until the end when fed whole
(~14x the text); `batch.CHUNK` characters at a time, the pieces merge into spans as they
come. Here the chunk is made tiny so that every generated text crosses chunk edges.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given
from hypothesis import strategies as st

from thinkfix import Policy, Result, normalize
from thinkfix.normalizer import batch

from .strategies import MODELS, NATIVE, POLICIES, SETTINGS, TEXTS


@contextmanager
def chunk(size: int) -> Iterator[None]:
    saved, batch.CHUNK = batch.CHUNK, size
    try:
        yield
    finally:
        batch.CHUNK = saved


def _normalize(text: str, size: int, **kwargs: object) -> Result:
    with chunk(size):
        return normalize(text, **kwargs)  # type: ignore[arg-type]


@SETTINGS
@given(
    text=TEXTS,
    policy=POLICIES,
    native=NATIVE,
    model=MODELS,
    start=st.booleans(),
    tool=st.booleans(),
    size=st.integers(1, 9),
)
def test_any_chunk_size_gives_the_whole_text_s_result(
    text: str,
    policy: Policy,
    native: str | None,
    model: str | None,
    start: bool,
    tool: bool,
    size: int,
) -> None:
    kwargs = {
        "policy": policy,
        "native_reasoning": native,
        "model": model,
        "start_in_reasoning": start,
        "followed_by_tool_call": tool,
    }
    whole = _normalize(text, len(text) + 1, **kwargs)
    assert _normalize(text, size, **kwargs) == whole


def test_a_flood_of_mentions_keeps_a_few_spans() -> None:
    """One leak, then thousands of prose mentions: four spans, one finding, as fed whole."""
    text = "<think>step</think>answer " * 5_000
    whole = _normalize(text, len(text) + 1)
    chunked = _normalize(text, 1 << 10)
    assert chunked == whole
    assert len(chunked.spans) == 4 and len(chunked.findings) == 1
