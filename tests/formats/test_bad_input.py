"""Bad lines are reported with their line number and copied through; the rest still works."""

from __future__ import annotations

import pytest

from tests.formats.support import DATA, read, repair, sites, write
from thinkfix.formats.records import Record, parse_json
from thinkfix.formats.registry import FORMATS, get
from thinkfix.formats.repairs import Repair

BAD = (DATA / "claude_code_bad_lines.jsonl").read_bytes()
FMT = get("claude-code")


def test_bad_input_every_line_is_a_record_with_its_error() -> None:
    records = read(FMT, BAD)
    assert [(r.line, (r.error or "").split(":")[0]) for r in records] == [
        (1, ""),
        (2, "not JSON"),
        (3, "not UTF-8"),
        (4, "unknown shape"),
        (5, ""),
        (6, ""),
        (7, "truncated"),
    ]
    assert records[4].blank and records[4].data is None
    assert records[6].eol == b""


def test_bad_input_round_trips_byte_for_byte() -> None:
    assert write(FMT, read(FMT, BAD)) == BAD


def test_bad_input_does_not_stop_sites_or_repairs_after_it() -> None:
    (site,) = sites(FMT, read(FMT, BAD))
    assert site.line == 6
    out = repair(FMT, BAD, [Repair(site, "Answer.", ("plan",))])
    assert out.data == BAD.replace(b"<think>plan</think>Answer.", b"Answer.")


def test_bad_input_repair_aimed_at_a_bad_line_is_skipped() -> None:
    records = read(FMT, BAD)
    (good,) = sites(FMT, records)
    stale = Repair(
        type(good)(
            record_index=2,
            line=3,
            json_path="message.content",
            text="x",
            path=("message", "content"),
        ),
        "",
        ("x",),
    )
    after, placements = FMT.apply(records, [stale])
    assert not placements[0].applied and "cannot be parsed" in placements[0].reason
    assert write(FMT, after) == BAD


def test_bad_input_stale_repair_is_skipped() -> None:
    records = read(FMT, BAD)
    (site,) = sites(FMT, records)
    moved = Repair(site._replace(text="something else"), "", ("x",))
    _, placements = FMT.apply(records, [moved])
    assert placements[0].reason.startswith("stale")


@pytest.mark.parametrize("name", list(FORMATS))
def test_bad_input_any_format_passes_garbage_through(name: str) -> None:
    fmt = FORMATS[name]
    garbage = b'\x00\xff garbage\n{"half": \n\n[]\n\xef\xbb\xbf{"bom": 1}\r\nlast'
    records = read(fmt, garbage)
    assert write(fmt, records) == garbage
    assert [s for r in records for s in fmt.sites(r)] == []


def test_bad_input_crlf_lines_keep_their_terminator() -> None:
    data = BAD.split(b"\n")[5] + b"\r\n" + BAD.split(b"\n")[0] + b"\r\n"
    records = read(FMT, data)
    assert [r.eol for r in records] == [b"\r\n", b"\r\n"]
    (site,) = sites(FMT, records)
    out = repair(FMT, data, [Repair(site, "Answer.", ("plan",))])
    assert out.data == data.replace(b"<think>plan</think>Answer.", b"Answer.")


@pytest.mark.parametrize(
    "raw,expected",
    [
        (b'{"a":1}', None),
        (b'\xef\xbb\xbf{"a":1}', None),
        (b'{"a":"\\ud800"}', None),
        (b'{"a":NaN}', None),
        (b"{'a':1}", "not JSON"),
        (b'{"a":"\xc3"}', "not UTF-8"),
        (b'{"a":[1,2', "truncated"),
    ],
)
def test_bad_input_parse_json_classifies(raw: bytes, expected: str | None) -> None:
    _, error = parse_json(raw)
    assert (error.split(":")[0] if error else None) == expected


def test_bad_input_record_parses_lazily() -> None:
    record = Record(0, 1, b'{"a":1}', b"\n")
    assert record._data is not None and record.data == {"a": 1} and record.error is None
