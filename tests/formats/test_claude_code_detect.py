"""Claude Code's `detect` answers a head with no link key without parsing it (#26: per-file
cost). First in the registry, it parsed all 200 lines of every pi and Codex head before
saying no: 8% of a dense scan. The shortcut must never change an answer."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.spies import first_args
from thinkfix.formats import claude_code, detection, registry
from thinkfix.formats.detection import sample

_KEYS = ["uuid", "sessionId", "parentUuid", "leafUuid", "isSidechain", "type", "message", "id"]


def _escaped(key: str) -> str:
    """The key with its first letter spelled as a JSON escape (orjson reads both the same)."""
    return f"\\u{ord(key[0]):04x}{key[1:]}"


@st.composite
def _lines(draw: st.DrawFn) -> bytes:
    obj: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(_KEYS), max_size=5, unique=True)):
        obj[key] = draw(
            st.one_of(
                st.sampled_from(["user", "assistant", "summary", "x"]),
                st.just({"role": "assistant", "content": "hi"}),
                st.just({"parts": []}),
                st.booleans(),
            )
        )
    line = orjson.dumps(obj).decode()
    for key in _KEYS:
        if draw(st.booleans()) and f'"{key}"' in line:
            line = line.replace(f'"{key}"', f'"{_escaped(key)}"', 1)
    return line.encode()


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(_lines(), min_size=1, max_size=6), name=st.sampled_from(["a.jsonl", "a.json"])
)
def test_the_shortcut_gives_the_answer_of_the_full_test(lines: list[bytes], name: str) -> None:
    head = b"\n".join(lines) + b"\n"
    fmt = registry.get("claude-code")
    sample.cache_clear()
    fast = fmt.detect(head, name)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(claude_code, "_may_hold_entries", lambda head: True)
        sample.cache_clear()
        full = fmt.detect(head, name)
    sample.cache_clear()
    assert fast == full


def test_an_escaped_link_key_still_makes_an_entry() -> None:
    """`"\\u0075uid"` is `"uuid"` to every JSON reader: the head is still Claude Code's."""
    line = b'{"type":"assistant","\\u0075uid":"u1","message":{"role":"assistant","content":"x"}}'
    sample.cache_clear()
    assert registry.get("claude-code").detect(line + b"\n" + line + b"\n", "s.jsonl") == 0.95
    sample.cache_clear()


def test_a_head_without_link_keys_is_answered_without_parsing_its_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pi-shaped head: Claude Code says no after parsing at most the first line (which
    tells a partial or pretty head apart), not all of them."""
    line = b'{"type":"message","id":"a1","parentId":null,"message":{"role":"assistant"}}'
    head = (line + b"\n") * 50
    parsed = first_args(monkeypatch, detection, "parse_json")
    sample.cache_clear()
    assert registry.get("claude-code").detect(head, "s.jsonl") == 0.0
    sample.cache_clear()
    assert len(parsed) <= 1, len(parsed)
