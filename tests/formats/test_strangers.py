"""The byte test and the record check behind the unread-turn guard (formats/strangers.py)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.formats.strangers import model_value, names_turn, stranger_turn

WORDS = st.sampled_from(["model", "assistant", "user", "text", "m", "role", "type", 'a"model"'])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | WORDS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(WORDS, inner, max_size=4),
    max_leaves=20,
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@given(value=JSON, indent=st.sampled_from([None, 0, 2]), spaced=st.booleans())
def test_strangers_model_value_finds_exactly_the_value_tokens(
    value: Any, indent: int | None, spaced: bool
) -> None:
    separators = (", ", " : ") if spaced else (",", ":")
    raw = json.dumps(value, indent=indent, separators=separators).encode()
    assert (model_value(raw) >= 0) == ("model" in _strings(value))


@given(value=st.dictionaries(WORDS, JSON, max_size=5))
def test_strangers_no_turn_word_in_the_bytes_means_no_turn(value: dict[str, Any]) -> None:
    """`names_turn` is what lets a reader skip a line unparsed: it must never miss a turn."""
    raw = json.dumps(value).encode()
    if not names_turn(raw):
        assert stranger_turn(value) is None


def test_strangers_turns_are_named_with_where_they_are() -> None:
    qwen = {"type": "assistant", "message": {"role": "model", "parts": [{"text": "x"}]}}
    assert stranger_turn(qwen) == 'type "assistant", message.role "model"'
    assert stranger_turn([{"role": "model", "content": "x"}]) == '[0].role "model"'
    doc = {"messages": [{"role": "user", "content": "hi"}, {"role": "model", "text": "x"}]}
    assert stranger_turn(doc) == 'messages[1].role "model"'


def test_strangers_headers_and_deep_payloads_are_not_turns() -> None:
    assert stranger_turn({"role": "assistant", "modelID": "m", "tokens": {}}) is None
    progress = {"type": "progress", "data": {"message": {"type": "assistant", "message": {}}}}
    assert stranger_turn(progress) is None
    assert stranger_turn({"model": "model", "content": "x"}) is None
