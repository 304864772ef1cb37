"""A line that is not one JSON object is an error on every path, read or not (never silently
clean).

The scan's fast path parses only the lines that may hold an assistant message
(`engine.scan.sparse`). Any other line was checked to be UTF-8 and no more: a user line cut
short, two records run together on one line, a stray `[1, 2]` were never reported, and the
file counted clean, exit 0, where a parse of every line (`--parse-all`) says `not JSON` or
`unknown shape` (the seventeenth session's documented limit). Now every unread byte is read
by a JSON parser (`io.jsoncheck.unread_not_objects`) and a line it cannot vouch for is
parsed: the report is the parsed one, byte for byte, on every path.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.engine.test_bad_utf8 import block_read_in_part, parsed_on_every_path
from tests.engine.test_bulk import _json, session_files, sessions
from thinkfix.engine.scan import native
from thinkfix.engine.scan.sparse import skippable
from thinkfix.formats import registry
from thinkfix.formats.records import EMPTY_CONTEXT, Record
from thinkfix.io import jsoncheck
from thinkfix.io.jsoncheck import not_objects, unread_not_objects

# What breaks a line's JSON, put anywhere in it (kept only where the line is no JSON object
# after it: the property is about lines a parse refuses).
INSERTS = [b'"', b",", b"}", b"{", b"]", b"x", b"\\", b":", b" {}", b"{}"]
# Whole lines no runtime writes: another JSON shape, values run together, a cut record.
LINES = [b"[1,2]", b'"s"', b"1", b'{"a":1} {"b":2}', b'{"a":1}{"b":2}', b'{"a":', b"}", b"{"]


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


@st.composite
def damaged(draw: st.DrawFn) -> tuple[dict[str, list[bytes]], dict[str, int]]:
    """Generated sessions, one line of each made no JSON object (its 1-based number by
    format): a byte cut, a character put in, cut short, or replaced by another shape."""
    data = draw(sessions())
    where: dict[str, int] = {}
    for name, lines in data.items():
        i = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        how = draw(st.sampled_from(["cut", "insert", "short", "line"]))
        at = draw(st.integers(0, max(0, len(line) - 1)))
        if how == "cut":
            line = line[:at] + line[at + 1 :]
        elif how == "insert":
            line = line[:at] + draw(st.sampled_from(INSERTS)) + line[at:]
        elif how == "short":
            line = line[:at]
        else:
            line = draw(st.sampled_from(LINES))
        assume(line.strip() and not _is_object(line))
        lines[i] = line
        where[name] = i + 1
    return data, where


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=damaged(), on=st.booleans(), msgspec=st.booleans())
def test_a_line_that_is_no_object_is_reported_as_a_parse_of_every_line_reports_it(
    case: tuple[dict[str, list[bytes]], dict[str, int]],
    on: bool,
    msgspec: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data, where = case
    folder = tmp_path_factory.mktemp("json")
    with ExitStack() as stack:
        stack.enter_context(patch.object(native, "USE", on))
        stack.enter_context(patch.object(native, "WARM_UP", 0))
        stack.enter_context(patch.object(jsoncheck, "MSGSPEC_FROM", 0 if msgspec else 1 << 62))
        for name, path, options in session_files(folder, data, by_day=True):
            errors = parsed_on_every_path(name, path, options)
            assert where[name] in [e["line"] for e in errors]


def test_a_cut_user_line_fails_a_scan_that_never_parses_it(tmp_path: Path) -> None:
    """As a user meets it: a Claude Code session whose user line was cut short by a crash
    mid-write, followed by more of the session, scanned as a small run (orjson) and as a
    large one (msgspec)."""
    user = (
        b'{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user",'
        b'"content":"hello"},"uuid":"u1","timestamp":"2026-03-02T10:21:19.004Z"}'
    )
    data = {"claude-code": [user, user[:40], user, user]}
    for large in (False, True):
        with patch.object(jsoncheck, "MSGSPEC_FROM", 0 if large else 1 << 62):
            for _name, path, options in session_files(tmp_path, data):
                report = orjson.loads(_json([str(path)], options))
                assert [(e["line"], e["kind"]) for e in report["errors"]] == [(2, "bad_line")]


@given(
    lines=st.lists(
        st.one_of(
            st.sampled_from([b"{}", b'{"a":[1,{"b":2}]}', b'{"s":"}\\n{"}', *LINES, b"", b" "]),
            st.binary(max_size=8).map(lambda b: b.replace(b"\n", b"")),
        ),
        max_size=12,
    ),
    data=st.data(),
    msgspec=st.booleans(),
)
def test_the_unread_check_flags_every_line_that_is_no_object(
    lines: list[bytes], data: st.DataObject, msgspec: bool
) -> None:
    """Whichever lines are read, every other line that is not one JSON object is among those
    `unread_not_objects` flags (the block check, and line by line), and a block of objects
    only flags none on the msgspec path."""
    buf, starts, read = block_read_in_part(lines, data)
    unread = [(s, line) for s, line in zip(starts, lines) if s not in read]
    run = 1 << 62 if msgspec else 0
    flagged = set(unread_not_objects(buf, 0, len(buf), read, len(unread), run))
    # a blank line is no record (a parse of every line skips it too): never listed
    assert {s for s, line in unread if line and not _is_object(line)} <= flagged
    assert not {s for s, line in unread if not line} & flagged
    if all(_is_object(line) or not line for _, line in unread):
        assert not {s for s, line in unread if line} & flagged
    assert set(not_objects(buf, 0, len(buf), 0)) >= {
        s for s, line in zip(starts, lines) if line and not _is_object(line)
    }


@pytest.mark.parametrize("msgspec", [False, True])
def test_a_line_that_is_not_utf8_is_never_skipped(msgspec: bool) -> None:
    """The record-by-record path skips a line that holds no assistant text only when it is
    JSON and UTF-8, whichever parser `not_json` picks: msgspec's reads no string's bytes,
    and with it a Claude Code summary whose text is not UTF-8 was skipped, counted clean,
    where a parse of every line reports it (found by the property above, which runs with
    msgspec from the first byte; a real run's one-line check is orjson's, which reads them)."""
    fmt = registry.get("claude-code")
    good = '{"type":"summary","summary":"résumé","leafUuid":"u1"}'.encode()
    bad = good.replace(b"r", b"\x97", 1)
    with patch.object(jsoncheck, "MSGSPEC_FROM", 0 if msgspec else 1 << 62):
        assert skippable(fmt, Record(3, 4, good, b"\n", EMPTY_CONTEXT, fmt.shapes))
        assert not skippable(fmt, Record(3, 4, bad, b"\n", EMPTY_CONTEXT, fmt.shapes))
