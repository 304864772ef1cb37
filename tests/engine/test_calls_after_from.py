"""`evidence.calls_after_from` answers what the format's own pass over every record answers.

For Claude Code (a message spread over lines, paired by `message.id`) it reads on only the
lines naming a waiting message's id, found by their bytes; from any record boundary (a
piece of a file scanned apart starts mid-file). Generated sessions: texts waiting at any
line, their calls on the next line, much later, in a later repeat of the same id, never;
ids mentioned in other lines' text; messages without an id or with ids that need the
format's own pass; CRLF; a last line without a newline; blocks far smaller than a line.
"""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thinkfix.engine.scan import evidence
from thinkfix.formats import registry
from thinkfix.formats.records import Record

CLAUDE = registry.get("claude-code")


def _line(kind: str, mid: str | None, uuid: int) -> dict[str, Any]:
    if kind == "user":
        return {
            "type": "user",
            "uuid": f"u{uuid}",
            "message": {"role": "user", "content": f'see "{mid}" and {mid}'},
        }
    block: dict[str, Any] = (
        {"type": "text", "text": f"step {uuid}\n</think>"}
        if kind == "text"
        else {"type": "tool_use", "id": f"toolu_{uuid}", "name": "Bash", "input": {}}
    )
    message: dict[str, Any] = {"model": "claude-opus-4-5", "role": "assistant", "content": [block]}
    if mid is not None:
        message["id"] = mid
    return {"type": "assistant", "uuid": f"a{uuid}", "message": message}


# ids sharing a prefix (looked for by it), one that does not (each id looked for on its own),
# ids a plain search cannot find (the format's own pass)
IDS = st.sampled_from(["msg_1", "msg_2", "msg_01Jq:x.y-z", "msg_11", "req-7", None, "msg é", 'm"q'])
FEW = st.sampled_from(["msg_1", "msg_2", None])
LINES = st.lists(
    st.tuples(st.sampled_from(["text", "call", "user"]), IDS | FEW), min_size=1, max_size=40
)


def _records(data: bytes, first: int) -> list[Record]:
    return [
        Record(first + r.index, first + r.index + 1, r.raw, r.eol, r.ctx, CLAUDE.shapes)
        for r in CLAUDE.read_bare(io.BufferedReader(io.BytesIO(data)))
    ]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=LINES,
    crlf=st.booleans(),
    final_newline=st.booleans(),
    skip=st.integers(0, 10),
    first=st.sampled_from([0, 7, 1 << 40]),
    block=st.sampled_from([1, 64, 300, 1 << 22]),
    data=st.data(),
)
def test_the_same_calls_as_the_formats_own_pass(
    lines: list[tuple[str, str | None]],
    crlf: bool,
    final_newline: bool,
    skip: int,
    first: int,
    block: int,
    data: st.DataObject,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(evidence, "_BLOCK", block)
    eol = b"\r\n" if crlf else b"\n"
    body = eol.join(orjson.dumps(_line(k, m, i)) for i, (k, m) in enumerate(lines))
    body += eol if final_newline else b""
    # the stream starts at a record boundary `skip` lines in (a piece of a larger file)
    cut = 0
    for _ in range(min(skip, len(lines) - 1)):
        cut = body.index(b"\n", cut) + 1
    tail = body[cut:]
    records = _records(tail, first)
    texts = [r for r in records if b'"text"' in r.raw and b'"assistant"' in r.raw]
    every = data.draw(st.booleans())  # every waiting text, or some
    pending = (
        texts
        if every or not texts
        else data.draw(st.lists(st.sampled_from(texts), unique_by=lambda r: r.index))
    )
    pending.sort(key=lambda r: r.index)
    expected = CLAUDE.calls_after(records, {r.index for r in pending})
    got = evidence.calls_after_from(CLAUDE, io.BufferedReader(io.BytesIO(tail)), pending, first)
    assert got == expected


def test_a_text_paired_much_later_and_one_never_paired() -> None:
    """Not vacuous: one text finds its call 200 lines on, across blocks; another none."""
    lines = [_line("text", "msg_a", 0), _line("text", "msg_b", 1)]
    lines += [_line("user", "msg_c", i) for i in range(2, 200)]
    lines.append(_line("call", "msg_a", 200))
    data = b"".join(orjson.dumps(x) + b"\n" for x in lines)
    records = _records(data, 0)
    got = evidence.calls_after_from(CLAUDE, io.BufferedReader(io.BytesIO(data)), records[:2], 0)
    assert got == CLAUDE.calls_after(records, {0, 1}) == frozenset({0})
