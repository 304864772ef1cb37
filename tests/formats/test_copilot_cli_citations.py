"""Copilot CLI citation spans point into the message content they cite (review 20).

`assistant.message`'s `data.citations.spans[]` (github/copilot-sdk session-events.ts,
`CitationSpan`) hold `startIndex`/`endIndex`, "offset of the cited span within the final
assistant message content (UTF-16 code units)". A repair that takes a leak out of the content
shifts the text after it, so each span is shifted with it: it cites the same words after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.engine.repair_helpers import run
from thinkfix.engine.repair.model import WriteMode
from thinkfix.formats.values import kept_chars, shift_utf16


def _u16(text: str) -> bytes:
    return text.encode("utf-16-le")


def _cited(content: str, span: dict[str, Any]) -> str:
    return _u16(content)[2 * span["startIndex"] : 2 * span["endIndex"]].decode("utf-16-le")


def _event(kind: str, data: dict[str, Any], n: int) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": f"e{n}", "timestamp": "t", "parentId": f"e{n - 1}"}


def _log(content: str, cited: list[str]) -> str:
    spans = []
    for words in cited:
        start = len(_u16(content[: content.index(words)])) // 2
        spans.append(
            {"startIndex": start, "endIndex": start + len(_u16(words)) // 2, "references": []}
        )
    start = {"sessionId": "s1", "version": 1, "producer": "copilot-agent", "startTime": "t"}
    data = {
        "messageId": "m1",
        "content": content,
        "toolRequests": [],
        "citations": {"sources": [{"id": "1", "provider": "web"}], "spans": spans},
    }
    events = [
        _event("session.start", start, 1),
        _event("user.message", {"content": "Where?", "attachments": []}, 2),
        _event("assistant.message", data, 3),
    ]
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)


def test_copilot_cli_repair_shifts_citation_spans_onto_the_same_words(tmp_path: Path) -> None:
    content = "<think>Recall the 🗺 map.</think>Paris 🗼 is the capital of France, per 🇫🇷 Wiki."
    cited = ["Paris 🗼 is the capital", "per 🇫🇷 Wiki"]
    path = tmp_path / ".copilot" / "session-state" / "s1" / "events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(_log(content, cited), encoding="utf-8")
    run([path], WriteMode.IN_PLACE, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8").splitlines()[2])["data"]
    assert data["reasoningText"] == "Recall the 🗺 map."
    assert not data["content"].startswith("<think>")
    spans = data["citations"]["spans"]
    assert [_cited(data["content"], s) for s in spans] == cited


@given(st.text(max_size=12), st.text(max_size=12), st.text(min_size=1, max_size=6))
def test_copilot_cli_shift_puts_every_kept_character_at_its_place(
    head: str, tail: str, cut: str
) -> None:
    """Any text with a part cut out: the offset of each character the match keeps lands on
    that character in the new text, and the old end on the new end."""
    old, new = head + cut + tail, head + tail
    shift, kept = shift_utf16(old, new), kept_chars(old, new)
    assert shift is not None and kept is not None
    assert "".join(c for c, k in zip(old, kept) if k) == new
    old16, new16 = _u16(old), _u16(new)
    for i, char in enumerate(old):
        if kept[i]:
            at = shift(len(_u16(old[:i])) // 2)
            assert new16[2 * at :].decode("utf-16-le").startswith(char)
    assert shift(len(old16) // 2) == len(new16) // 2
    assert shift_utf16("abc", "x") is None
