"""`io.jsoncheck.not_json`: the parser's check on the lines a scan counts from their bytes.

What it must never do is vouch for a line the scan's own parse (`records.parse_json`)
refuses: that line would be counted clean where a parse reports it (never silently clean).
It may refuse a line the parse reads (a lone surrogate's escape): that line is parsed. Both
of its parsers are held to that, on damaged lines and on generated JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest.mock import patch

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix.formats.records import parse_json
from thinkfix.io import jsoncheck
from thinkfix.io.jsoncheck import not_json

LINE = (
    b'{"timestamp":"2026-03-02T10:21:31.660Z","type":"response_item","payload":{"type":'
    b'"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}'
)

# What orjson writes: 64-bit integers, finite floats, text without lone surrogates.
_text = st.text(st.characters(exclude_categories=("Cs",)))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)


@contextmanager
def without_msgspec() -> Iterator[None]:
    """`not_json` as where msgspec cannot be imported: orjson's check only."""
    with patch.object(jsoncheck, "_raw_decode", lambda: None):
        yield


def _damaged(line: bytes) -> st.SearchStrategy[bytes]:
    """The line with a byte deleted, replaced or inserted (a JSON-ish byte, or any)."""
    byte = st.sampled_from(b'{}[]",:\\ \n0-.eEtfn"') | st.integers(0, 255)

    @st.composite
    def damage(draw: st.DrawFn) -> bytes:
        at = draw(st.integers(0, len(line)))
        how = draw(st.sampled_from(["delete", "replace", "insert"]))
        if how == "delete":
            return line[:at] + line[at + 1 :]
        new = bytes([draw(byte)])
        return line[:at] + new + line[at + (how == "replace") :]

    return damage()


def _parses(raw: bytes) -> bool:
    return parse_json(raw)[1] is None


@pytest.mark.parametrize("run_bytes", [1 << 40, 0], ids=["msgspec", "orjson"])
@given(st.lists(_damaged(LINE), min_size=1, max_size=6))
def test_it_never_vouches_for_a_line_the_parse_refuses(run_bytes: int, lines: list[bytes]) -> None:
    """A line it passes is one `parse_json` reads (UTF-8 being the callers' own check)."""
    refused = not_json(lines, run_bytes)
    for i, line in enumerate(lines):
        if i not in refused and _utf8(line):
            assert _parses(line), line


@given(st.lists(_damaged(LINE), min_size=1, max_size=6))
def test_without_msgspec_it_gives_orjson_s_answer(lines: list[bytes]) -> None:
    """msgspec missing, a large run's check is orjson's, with its answers."""
    with without_msgspec():
        assert not_json(lines, 1 << 40) == not_json(lines, 0)


@pytest.mark.parametrize("run_bytes", [1 << 40, 0], ids=["msgspec", "orjson"])
@given(st.lists(json_values, min_size=1, max_size=6))
def test_it_passes_json_the_runtimes_write(run_bytes: int, values: list[object]) -> None:
    """Every value orjson writes (compact, one line) passes: a clean line is still counted
    from its bytes. Not vacuous: values hold every kind, nested."""
    lines = [orjson.dumps(v) for v in values]
    assert not_json(lines, run_bytes) == set()


@pytest.mark.parametrize("run_bytes", [1 << 40, 0], ids=["msgspec", "orjson"])
@given(st.lists(_damaged(LINE) | st.just(LINE), min_size=1, max_size=8))
def test_a_batch_is_judged_line_by_line(run_bytes: int, lines: list[bytes]) -> None:
    """A refused line in a batch refuses that line alone (the batch falls back line by line),
    and two lines never pass as one value (`{"a":` and `1}` are each refused)."""
    alone = {i for i, line in enumerate(lines) if not_json([line], run_bytes)}
    assert not_json(lines, run_bytes) == alone


@pytest.mark.parametrize("run_bytes", [1 << 40, 0], ids=["msgspec", "orjson"])
def test_what_it_refuses_and_what_the_parse_then_reads(run_bytes: int) -> None:
    """Refused: a lost quote, a line cut after a `}`, two values, a value nested past a
    parser's depth (RecursionError, not a crash). A lone surrogate's escape is refused too,
    though the parse reads it: it goes to the parse, which counts it."""
    cut = LINE.rindex(b"}", 0, len(LINE) - 1) + 1
    lines = [
        LINE,
        LINE.replace(b"Done.", b'Do"ne.'),
        LINE[:cut],
        LINE + LINE,
        b"[" * 5000 + b"]" * 5000,
        LINE.replace(b"Done.", b"\\ud83d"),
    ]
    refused = not_json(lines, run_bytes)
    assert refused - {4} == {1, 2, 3, 5}
    assert _parses(lines[5])
    # 5,000 levels: past msgspec's depth and recent orjson's (1,024); orjson 3.9, the floor,
    # reads it, and so does the scan's own parse then: never vouched for unless it parses
    assert 4 in refused or _parses(lines[4])


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False
    return True
