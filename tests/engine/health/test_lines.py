"""`lines`: how each kind of damaged record is told apart, and where a runtime stops."""

from __future__ import annotations

import orjson
import pytest

from thinkfix.engine.health.lines import SPLIT_LINES
from thinkfix.engine.health.run import check_bytes
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import Problem
from thinkfix.formats import registry


def _cc(n: int, version: str = "2.1.90", text: str = "ok") -> bytes:
    return orjson.dumps(
        {
            "parentUuid": None,
            "sessionId": "s1",
            "version": version,
            "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": f"u{n}",
        }
    )


def _lines(data: bytes, fmt: str = "claude-code") -> list[tuple[int, Problem, bool]]:
    found = check_bytes(data, registry.get(fmt), (Check.LINES,)).findings
    return [(f.line, f.problem, f.stops_reading) for f in found]


def test_a_clean_file_has_no_line_findings() -> None:
    assert _lines(b"\n".join(_cc(i) for i in range(3)) + b"\n") == []


def test_a_blank_line_and_crlf_are_no_damage() -> None:
    assert _lines(_cc(0) + b"\r\n\r\n" + _cc(1) + b"\r\n") == []


@pytest.mark.parametrize(
    ("version", "stops"),
    [("2.1.90", True), ("2.1.120", True), ("2.1.121", False), ("2.2.0", False)],
)
def test_claude_code_stops_at_the_first_bad_line_before_2_1_121(version: str, stops: bool) -> None:
    data = b"\n".join([_cc(0, version), b"\x00" * 40, _cc(1, version), _cc(2, version)[:30]])
    found = _lines(data)
    assert found == [
        (2, Problem.NUL_PADDING, stops),
        (4, Problem.TRUNCATED, False),
    ]


def test_the_stop_note_counts_the_records_not_read() -> None:
    data = b"\n".join([_cc(0), b"garbage", _cc(1), _cc(2)]) + b"\n"
    (f,) = check_bytes(data, registry.get("claude-code"), (Check.LINES,)).findings
    assert f.problem is Problem.NOT_JSON and f.stops_reading
    assert "(2 later records are not read)" in f.message


def test_pi_skips_bad_lines_so_none_stops() -> None:
    head = (
        b'{"type":"session","version":3,"id":"p1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    )
    assert _lines(head + b"\n" + b"\x00" * 8 + b"\n", "pi") == [(2, Problem.NUL_PADDING, False)]


def test_nul_bytes_before_a_record_on_its_line() -> None:
    found = check_bytes(
        _cc(0) + b"\n" + b"\x00" * 16 + _cc(1) + b"\n", registry.get("claude-code"), (Check.LINES,)
    ).findings
    (f,) = found
    assert f.problem is Problem.NUL_PADDING and "then a record that reads" in f.message
    assert f.offset == len(_cc(0)) + 1 and f.size == 16 + len(_cc(1))


def test_bytes_that_are_not_utf8() -> None:
    assert _lines(_cc(0) + b"\n" + b'{"type":"user","x":"\xff\xfe"}\n') == [
        (2, Problem.NOT_UTF8, True)
    ]


def test_three_glued_records() -> None:
    (f,) = check_bytes(
        _cc(0) + _cc(1) + _cc(2) + b"\n", registry.get("claude-code"), (Check.LINES,)
    ).findings
    assert f.problem is Problem.GLUED and f.message.startswith("3 records glued")


def test_a_record_split_over_several_lines() -> None:
    whole = _cc(0, text="a\nb\nc").replace(b"\\n", b"\n")
    data = _cc(1) + b"\n" + whole + b"\n" + _cc(2) + b"\n"
    (f,) = check_bytes(data, registry.get("claude-code"), (Check.LINES,)).findings
    assert (f.problem, f.line, f.end_line) == (Problem.SPLIT_RECORD, 2, 4)
    assert f.size == len(whole) and f.offset == len(_cc(1)) + 1


def test_a_record_cut_mid_file_then_a_sound_one() -> None:
    data = _cc(0)[:25] + b"\n" + _cc(1) + b"\n"
    assert _lines(data) == [(1, Problem.TRUNCATED, True)]


def test_a_cut_record_followed_by_more_bad_lines_than_a_split_may_span() -> None:
    bad = [b"x" * 3] * (SPLIT_LINES + 2)
    data = b"\n".join([_cc(0)[:25], *bad, _cc(1)]) + b"\n"
    found = _lines(data)
    assert len(found) == SPLIT_LINES + 3
    assert found[0][1] is Problem.TRUNCATED and {p for _, p, _ in found[1:]} == {Problem.NOT_JSON}


def test_a_whole_document_that_does_not_parse() -> None:
    data = b'{"messages":[{"blocks":[{"text":"hi","type":"text"}],"role":"user"}'
    assert _lines(data, "claw-code") == [(1, Problem.TRUNCATED, False)]


def test_a_record_too_large_is_not_a_lines_problem() -> None:
    from thinkfix.formats.records import record_limit, set_record_limit

    before = record_limit()
    set_record_limit(64)
    try:
        assert _lines(_cc(0, text="x" * 100) + b"\n") == []
    finally:
        set_record_limit(before)


def test_codex_reads_on_past_a_bad_line_and_the_finding_says_so() -> None:
    head = b'{"timestamp":"2026-03-05T08:00:00.000Z","type":"session_meta","payload":{"id":"c1","cwd":"/","originator":"codex_cli_rs","cli_version":"0.98.0"}}'
    (f,) = check_bytes(head + b"\n" + b"}{\n", registry.get("codex"), (Check.LINES,)).findings
    assert not f.stops_reading and f.message.endswith("Codex skips it and reads on")
