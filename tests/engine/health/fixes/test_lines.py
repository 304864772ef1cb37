"""`--fix lines`: glued, NUL-padded, split and truncated records salvaged byte for byte."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import orjson
from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.health.fixes.lines import salvage
from thinkfix.engine.health.fixes.model import Fix, parse_fixes
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.formats import registry
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Edits


@dataclass(frozen=True)
class Found:
    """A finding as the `lines` check gives it (the fields a fix reads)."""

    record_index: int
    problem: str
    line: int
    end_line: int = 0
    detail: str = ""


A = b'{"type":"user","uuid":"a","message":{"role":"user","content":"hi"}}'
B = b'{"type":"assistant","uuid":"b","parentUuid":"a","message":{"content":[]}}'
C = b'{"type":"user","uuid":"c","parentUuid":"b","message":{"content":"x\\ny"}}'


def _records(data: bytes) -> list[Record]:
    return list(registry.get("claude-code").read(io.BytesIO(data)))


def _fixed(data: bytes, findings: list[Found]) -> bytes:
    """The file's bytes once the `lines` fix is laid over them as repair lays it."""
    records = _records(data)
    fixes = plan_fixes("claude-code", records, findings, {Fix.LINES})
    edits = merged(Edits(len(records), {}, {}), fixes)[0]
    return b"".join(r.raw + r.eol for r in edits.after(records))


def _readable(data: bytes) -> list[dict[str, object]]:
    """Every non-empty line parses as one object (what Claude Code, Codex and pi read)."""
    return [json.loads(line) for line in data.split(b"\n") if line.strip()]


def test_salvage_glued_records_keeps_each_objects_bytes() -> None:
    assert salvage(A + B) == ([A, B], [])
    assert salvage(A + b" " + B) == ([A, B], [])


def test_salvage_a_cut_record_glued_to_the_next_drops_only_the_fragment() -> None:
    cut = A[:30]
    assert salvage(cut + B) == ([B], [cut])


def test_salvage_nul_padding_before_a_record() -> None:
    objects, dropped = salvage(b"\x00" * 7 + A)
    assert objects == [A]
    assert dropped == [b"\x00" * 7]


def test_lines_fix_puts_glued_records_on_their_own_lines() -> None:
    data = A + b"\n" + B + C + b"\n"
    out = _fixed(data, [Found(1, "glued", 2)])
    assert out == A + b"\n" + B + b"\n" + C + b"\n"


def test_lines_fix_cuts_nul_padding() -> None:
    data = A + b"\n" + b"\x00" * 16 + B + b"\n"
    assert _fixed(data, [Found(1, "nul-padding", 2)]) == A + b"\n" + B + b"\n"


def test_lines_fix_empties_a_nul_only_line_and_keeps_it() -> None:
    data = A + b"\n" + b"\x00" * 16 + b"\n" + B + b"\n"
    assert _fixed(data, [Found(1, "nul-padding", 2)]) == A + b"\n\n" + B + b"\n"


def test_lines_fix_cuts_a_truncated_tail() -> None:
    data = A + b"\n" + B + b"\n" + C[:25]
    out = _fixed(data, [Found(2, "truncated", 3)])
    assert out == A + b"\n" + B + b"\n"
    assert len(_readable(out)) == 2


def test_lines_fix_empties_a_cut_record_in_the_middle() -> None:
    data = A + b"\n" + B[:20] + b"\n" + C + b"\n"
    assert _fixed(data, [Found(1, "truncated", 2)]) == A + b"\n\n" + C + b"\n"


def test_lines_fix_joins_a_split_record_and_keeps_the_line_count() -> None:
    split = C.replace(b"\\n", b"\n")
    data = A + b"\n" + split + b"\n" + B + b"\n"
    out = _fixed(data, [Found(1, "split-record", 2, end_line=3)])
    assert out == A + b"\n" + C + b"\n\n" + B + b"\n"
    assert [r["uuid"] for r in _readable(out)] == ["a", "c", "b"]


def test_lines_fix_refuses_a_join_that_does_not_parse() -> None:
    data = A + b"\n" + b'{"a":"x' + b"\n" + b"nope" + b"\n"
    out = _fixed(data, [Found(1, "split-record", 2, end_line=3)])
    assert out == data


def test_lines_fix_leaves_other_problems_alone() -> None:
    data = A + b"\n" + b"not json at all\n"
    assert _fixed(data, [Found(1, "not-json", 2)]) == data


def test_parse_fixes_names_the_unknown_one() -> None:
    assert parse_fixes("lines, tool-pairs") == {Fix.LINES, Fix.TOOL_PAIRS}
    try:
        parse_fixes("lines,colour")
    except ValueError as exc:
        assert "colour" in str(exc)
    else:
        raise AssertionError("an unknown fix was accepted")


_OBJECTS = st.lists(
    st.dictionaries(
        st.text(max_size=5), st.integers(-(2**53), 2**53) | st.text(max_size=8), max_size=3
    ).map(orjson.dumps),
    min_size=1,
    max_size=5,
)


@given(_OBJECTS, st.lists(st.sampled_from([b"", b" ", b"\x00", b"\x00\x00\x00"]), min_size=6))
def test_salvage_finds_every_glued_object_whatever_pads_them(
    objects: list[bytes], pads: list[bytes]
) -> None:
    line = b"".join(pad + obj for pad, obj in zip(pads, objects)) + pads[-1]
    found, dropped = salvage(line)
    assert found == objects
    assert b"".join(dropped).strip(b"\x00 ") == b""


def test_merged_renumbers_and_names_the_records_only_fixes_made() -> None:
    """A leak repair's insert and replacement beside the fixes': every new record carries its
    final index, and only the fixes' own records are marked as theirs."""
    data = A + B + b"\n" + C + b"\n"  # line 1 glued
    records = _records(data)
    fixes = plan_fixes("claude-code", records, [Found(0, "glued", 1)], {Fix.LINES})
    leak_new = Record(2, 3, C.replace(b'"x', b'"z'), b"\n", touched=True)
    leak = Edits(2, {1: leak_new}, {1: [Record(1, 2, b'{"type":"reasoning"}', b"\n")]})
    edits, only = merged(leak, fixes)
    after = list(edits.after(records))
    assert [r.index for r in after] == [0, 1, 2, 3]
    assert [r.raw for r in after] == [A, B, b'{"type":"reasoning"}', leak_new.raw]
    assert only == {0, 1}
    assert fixes.rebuildable


def test_a_cut_tail_is_not_rebuildable_record_by_record() -> None:
    records = _records(A + b"\n" + B[:9])
    fixes = plan_fixes("claude-code", records, [Found(1, "truncated", 2)], {Fix.LINES})
    assert fixes.replaced == {1: (b"", b"")} and not fixes.rebuildable
