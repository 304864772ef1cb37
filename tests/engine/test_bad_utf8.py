"""A line that is not UTF-8 is an error on every path, wherever it is (never silently clean).

The scan's fast path reads only the lines that may hold an assistant message
(`engine.scan.sparse`); a corrupt byte in any other line (or in the role word that made it
one) hid the line, and with it a leak, and the file counted clean where a parse of every
line says `not UTF-8` (review8, finding 8). Now every block's bytes are checked
(`io.textcheck`): the report is the parsed one, byte for byte, on every path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.test_bulk import _json, _reports, session_files, sessions
from thinkfix.engine.scan import native, sparse
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.io.textcheck import not_utf8_lines, unread_not_utf8

# Each is invalid wherever it is put into valid UTF-8 (a lone continuation byte breaks the
# count of any sequence it lands in or beside; the others are never valid).
BAD = [b"\xff", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe6\x97"]


@st.composite
def damaged(draw: st.DrawFn) -> tuple[dict[str, list[bytes]], dict[str, int]]:
    """Generated sessions, one line of each damaged by an invalid sequence put anywhere in it
    (its 1-based line number by format)."""
    data = draw(sessions())
    where: dict[str, int] = {}
    for name, lines in data.items():
        i = draw(st.integers(0, len(lines) - 1))
        at = draw(st.integers(0, len(lines[i])))
        bad = draw(st.sampled_from(BAD))
        if bad == b"\xe6\x97":  # a sequence cut short: only where ASCII follows
            bad += b"A"
        lines[i] = lines[i][:at] + bad + lines[i][at:]
        where[name] = i + 1
    return data, where


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=damaged(), on=st.booleans())
def test_a_damaged_line_is_reported_as_a_parse_of_every_line_reports_it(
    case: tuple[dict[str, list[bytes]], dict[str, int]],
    on: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data, where = case
    folder = tmp_path_factory.mktemp("utf8")
    with patch.object(native, "USE", on), patch.object(native, "WARM_UP", 0):
        for name, path, options in session_files(folder, data, by_day=True):
            errors = parsed_on_every_path(name, path, options)
            assert [e["line"] for e in errors if "UTF-8" in e["message"]] == [where[name]]


def parsed_on_every_path(name: str, path: Path, options: ScanOptions) -> list[dict[str, Any]]:
    """The errors of the parse of every line of `path`, once every path of the scan (the
    block counter, line by line, the fast paths off, record by record) gave its report."""
    parsed = _json([str(path)], options._replace(prefilter=False))
    with patch.object(sparse, "supports", lambda fmt: False):  # record by record
        filtered = _json([str(path)], options)
    assert _reports([str(path)], options, [name]) == [parsed] * 4
    assert filtered == parsed
    errors: list[dict[str, Any]] = orjson.loads(parsed)["errors"]
    return errors


@given(
    lines=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12),
)
def test_not_utf8_lines_are_the_lines_a_decode_refuses(lines: list[bytes]) -> None:
    buf = b"".join(line + b"\n" for line in lines) + b"tail \xff"
    starts = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    expected = {}
    for start, line in zip(starts, lines):
        try:
            line.decode()
        except UnicodeDecodeError:
            expected[start] = start + len(line)
    hi = len(buf) - len(b"tail \xff")  # just past the last newline
    assert not_utf8_lines(buf, 0, hi) == expected


@given(
    lines=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    data=st.data(),
)
def test_the_unread_lines_check_is_the_whole_check_less_the_lines_read(
    lines: list[bytes], data: st.DataObject
) -> None:
    """The sparse reader decodes only the lines it does not read itself (`unread_not_utf8`):
    its answer is the whole check's without the lines read, whichever those are."""
    buf, _, read = block_read_in_part(lines, data)
    whole = not_utf8_lines(buf, 0, len(buf))
    assert unread_not_utf8(buf, 0, len(buf), read) == {
        s: e for s, e in whole.items() if s not in read
    }


def block_read_in_part(
    lines: list[bytes], data: st.DataObject
) -> tuple[bytes, list[int], dict[int, int]]:
    """`lines` as a block (each ended by a newline), where each starts, and the lines a
    reader reads ({start: offset of its newline}), drawn one by one."""
    buf = b"".join(line + b"\n" for line in lines)
    starts = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    read = {
        s: s + len(line)
        for s, line in zip(starts, lines)
        if data.draw(st.booleans(), label=f"read line at {s}")
    }
    return buf, starts, read
