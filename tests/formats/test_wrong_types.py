"""A record whose fields hold values of the wrong type is a bad record, never an exception.

Issue 11 item 2: `{"type":[]}` made `value in some_set` raise `TypeError` in the
detectors, the formats' readers and the transcript readers behind `show`, and
stopped a whole repair half way. These properties take every fixture session,
put random wrong-typed values at random places of its records, and run every
per-record entry point of its format (detection, reading, sites, message counts,
apply) and its transcript reader: none may raise, and a rejected record is
reported with its line and copied through untouched.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.support import FIXTURES, is_store, scores, session_files
from thinkfix.engine.scan import transcript as build
from thinkfix.formats import registry
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Repair
from thinkfix.io.compression import open_read

# a database store is read from its file through the store layer, not mutated as JSON records
_FILES = [p for p in session_files(FIXTURES) if not is_store(p)]

WRONG = st.one_of(
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.just("assistant"),
    st.just([["x"]]),
    st.just({"a": []}),
)


def _parsed(path: Path) -> tuple[str, bool, list[Any]]:
    """(format id, whole-document file, the JSON values of its records)."""
    with open_read(str(path)) as fp:
        data = fp.read()
    fmt = registry.detect_or_raise(data[:65536], str(path))
    records = list(fmt.read(io.BytesIO(data)))
    document = (
        len(records) == 1
        and records[0].raw.lstrip()[:1] in (b"{", b"[")
        and b"\n" in records[0].raw.strip()
    )
    return fmt.id, document, [r.data for r in records if r.error is None and r.data is not None]


# by path (runtimes share file names); files whose records all need their folder to be read
# (OpenCode's file-store parts, read here without it) have nothing to mutate
_PARSED = {k: v for k, v in ((str(p.relative_to(FIXTURES)), _parsed(p)) for p in _FILES) if v[2]}


def _slots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (dict keys and list items), deepest last."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _slots(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _slots(v, path + (i,))
    return out


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _put(value[path[0]], path[1:], new)
    return copy


@st.composite
def mutated(draw: Any) -> tuple[str, str, bytes]:
    """A fixture session with wrong-typed values put at random places of random records."""
    name = draw(st.sampled_from(sorted(_PARSED)))
    fmt_id, document, values = _PARSED[name]
    values = list(values)
    for _ in range(draw(st.integers(1, 6))):
        k = draw(st.integers(0, len(values) - 1))
        slots = _slots(values[k])
        # Deep places are where a format looks: weight towards them.
        where = draw(st.sampled_from(slots[len(slots) // 3 :] or slots))
        values[k] = _put(values[k], where, draw(WRONG))
    if document:
        data = json.dumps(values[0], indent=2).encode()
    else:
        data = "".join(json.dumps(v, separators=(",", ":")) + "\n" for v in values).encode()
    return name, fmt_id, data


def _exercise(fmt_id: str, name: str, data: bytes) -> list[Record]:
    """Every per-record entry point of the format, as the engine and `show` call them."""
    scores(data[:65536], name)
    registry.detect(data[:65536], name)
    fmt = registry.get(fmt_id)
    records = list(fmt.read(io.BytesIO(data)))
    found = []
    for r in records:
        found += list(fmt.sites(r))
        fmt.assistant_messages(r)
        getattr(fmt, "checked_messages", lambda r: ())(r)
    repairs = [Repair(s, "visible", ("thinking",)) for s in found]
    for mode in ("resumable", "archive", "annotate"):
        from thinkfix.formats.repairs import ApplyOptions

        fmt.apply(records, repairs, ApplyOptions(claude_code_mode=mode, codex_mode="insert"))
    for normalized in (False, True):
        build._read(fmt, io.BytesIO(data), normalized, build.DEFAULT)
    return records


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_readers_never_raise_on_wrong_field_types(case: tuple[str, str, bytes]) -> None:
    name, fmt_id, data = case
    records = _exercise(fmt_id, name, data)
    for r in records:
        if r.error is not None:  # rejected records are reported as bad, with their bytes kept
            assert r.error
            assert not r.touched


def test_an_opencode_part_whose_session_id_holds_a_nul_byte_is_read() -> None:
    """Found by the property above: the id names the message file to read, and `open`
    raises ValueError, not OSError, for a path with a NUL byte."""
    name = (
        "opencode/storage/part/msg_95e0f3d71002bP4sW8nY1eLmTg/prt_95e0f3d71003Ff5gG6hH7iI8jJ.json"
    )
    doc = {
        "id": "prt_95e0f3d71003Ff5gG6hH7iI8jJ",
        "sessionID": "\u0000",
        "messageID": "msg_95e0f3d71002bP4sW8nY1eLmTg",
        "type": "step-start",
    }
    assert _exercise("opencode", name, json.dumps(doc, indent=2).encode())


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":[]}',
        b'{"type":{"a":1},"uuid":"u"}',
        b'{"type":"assistant","message":{"role":[]},"uuid":"u"}',
        b'{"type":"response_item","payload":{"type":[],"role":[]}}',
        b'{"role":[],"content":"x"}',
        b'{"messages":[{"role":{}}]}',
    ],
)
@pytest.mark.parametrize("fmt_id", registry.names())
def test_readers_reject_issue_lines_without_raising(fmt_id: str, line: bytes) -> None:
    """The issue's reproduction, and its cousins, in every format."""
    records = _exercise(fmt_id, "zz.jsonl", line + b"\n")
    assert [r.raw for r in records] == [line]
