"""The by-day counts read from the bytes (`survey.record_day`, #26 item 2) change no report.

A timed scan (every JSON, OpenMetrics and HTML report) counts a clean assistant line by the
day of its messages; `record_day` reads that day from the line's bytes, pi's
message-level millisecond `timestamp` included, and is unsure (the line is parsed) where
the bytes do not prove it. Proven here piece by piece (the days against `trend`, the day
against `trend.message_time` of the parsed record) and whole: the JSON report, byte for
byte, with the survey, with every line it takes parsed instead, and with the formats' fast
paths off, on every fixture, on generated sessions (decoys, every delimiter family, escaped
markers and delimiters, stamps near midnight, odd and disagreeing stamps), and on a dense
mixed corpus in the bench's shape.
"""

from __future__ import annotations

import datetime as dt
import os
from contextlib import ExitStack
from pathlib import Path
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.test_fast_paths import (
    FIXTURE_LINES,
    GENERATED,
    _record,
    timed_lines,
    without_fast_paths,
)
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.scan import survey, trend
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.records import EMPTY_CONTEXT
from thinkfix.reporters.json import JsonReporter

_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MIDNIGHT_MS = 1_772_496_000_000  # 2026-03-03T00:00:00Z


def _iso(ms: int) -> str:
    stamp = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


# --- the days ---------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    year=st.integers(1971, 2099),
    month=st.integers(1, 12),
    day=st.integers(1, 31),
    clock=st.sampled_from(["00:00:00", "23:59:59.9999999", "12:30:00.5", "23:59:59.999999"]),
)
def test_a_dates_day_is_utc_day_of_every_stamp_on_it(
    year: int, month: int, day: int, clock: str
) -> None:
    date = f"{year:04d}-{month:02d}-{day:02d}"
    assert survey.Days().of_date(date.encode()) == trend.utc_day(f"{date}T{clock}Z")


@settings(max_examples=300, deadline=None)
@given(ms=st.integers(survey.LOW_MS, survey.HIGH_MS - 1) | st.integers(-3000, 3000))
def test_a_millisecond_stamps_day_is_trends(ms: int) -> None:
    ms = ms if ms >= survey.LOW_MS else MIDNIGHT_MS + ms
    seconds = trend.epoch(ms)
    assert seconds is not None
    assert survey.Days().of_millis(ms) == trend.day(seconds)


def test_the_days_are_cached_by_date_alone() -> None:
    """A date's answer is the same whichever stamp asked first (the cache trend.utc_day
    dropped made it depend on the order)."""
    days = survey.Days()
    assert days.of_date(b"2026-02-30") is None
    assert days.of_date(b"2026-02-28") == "2026-02-28"
    assert days.of_date(b"2026-02-30") is None
    assert days.of_millis(MIDNIGHT_MS - 1) == "2026-03-02"
    assert days.of_millis(MIDNIGHT_MS) == "2026-03-03"


# --- the day of a line ------------------------------------------------------------------------


@st.composite
def pi_stamped_lines(draw: st.DrawFn) -> bytes:
    """A pi assistant line as pi writes it: the entry's ISO stamp and the message's own
    milliseconds, a little earlier, often across midnight; sometimes odd."""
    created = MIDNIGHT_MS + draw(st.integers(-4000, 4000))
    appended = created + draw(st.integers(0, 3000))
    message: dict[str, object] = {
        "role": "assistant",
        "content": [{"type": "text", "text": draw(st.sampled_from(["Done.", "a < b", ""]))}],
        "api": "openai-completions",
        "provider": "x",
        "model": draw(st.sampled_from(["minimax/minimax-m2", "qwen3:32b"])),
        "stopReason": "stop",
    }
    place = draw(st.sampled_from(["last", "first", "none", "float", "string", "nested", "late"]))
    if place == "last":
        message["timestamp"] = created
    elif place == "first":
        message = {"timestamp": created, **message}
    elif place == "float":
        message["timestamp"] = created + 0.5
    elif place == "string":
        message["timestamp"] = _iso(created)
    elif place == "nested":
        message["content"] = [{"type": "text", "text": "x", "timestamp": created}]
    entry: dict[str, object] = {
        "type": "message",
        "id": "e1",
        "parentId": None,
        "timestamp": _iso(appended),
        "message": message,
    }
    if place == "late":  # a member after the message, holding a stamp of its own
        entry["meta"] = {"timestamp": created}
    return orjson.dumps(entry)


def _check_day(name: str, raw: bytes) -> str | None:
    """record_day of a line the format's counter takes, checked against the parsed record."""
    fmt = registry.get(name)
    if fmt.quick_messages(raw, EMPTY_CONTEXT) is None:
        return None
    day = survey.record_day(raw, survey.Days())
    if day is not None:
        record = _record(fmt, raw, EMPTY_CONTEXT)
        for m in fmt.checked_messages(record):
            when = trend.message_time(record.data, m.path)
            assert when is not None and trend.day(when) == day, raw
    return day


@pytest.mark.parametrize("name", sorted(GENERATED))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_day_read_from_the_bytes_is_every_messages_day(name: str, data: st.DataObject) -> None:
    _check_day(name, data.draw(timed_lines(name, always=True)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=pi_stamped_lines())
def test_pis_message_stamp_is_read_where_it_cannot_be_wrong(raw: bytes) -> None:
    _check_day("pi", raw)


def test_the_runtimes_lines_are_read_and_hostile_ones_are_not() -> None:
    """Not vacuous: Claude Code's, Codex's and pi's own lines answer (pi's by its message's
    stamp); stamps on two days, a stamp in a later member, or text spelling a key do not."""
    for name in ("claude-code", "codex", "pi"):
        assert any(_check_day(name, line) for line in FIXTURE_LINES[name]), name
    pi = (
        b'{"type":"message","id":"e1","parentId":null,"timestamp":"2026-03-02T23:59:59.500Z",'
        b'"message":{"role":"assistant","content":[],"model":"m","timestamp":1772495999000}}'
    )
    assert survey.record_day(pi, survey.Days()) == "2026-03-02"
    for hostile in (
        pi.replace(b"23:59:59.500Z", b"00:00:00.500Z").replace(b"03-02T", b"03-03T"),  # 2 days
        pi.replace(b"1772495999000}}", b'1772495999000},"x":{"timestamp":1772323200000}}'),
        pi.replace(b'"model":"m"', b'"model":"m","created_at":"2026-03-02T10:00:00Z"'),
        pi.replace(b'"model":"m"', b'"model":"\\u0074imestamp"'),
        pi.replace(b'"content":[]', b'"content":[{"text":"\\"timestamp\\":1"}]'),
        pi.replace(b"1772495999000", b"1772495999000.5"),
        pi.replace(b'"timestamp":"2026-03-02T23:59:59.500Z",', b""),  # only the message's
        pi.replace(b"2026-03-02T23", b"2026-02-30T23"),
        pi.replace(b"2026-03-02T23", b"2100-03-02T23"),
    ):
        assert survey.record_day(hostile, survey.Days()) is None, hostile


# --- the report -------------------------------------------------------------------------------


def _json(paths: list[str], options: ScanOptions) -> bytes:
    return JsonReporter().render_bytes(scan(paths, options, jobs=1))


def _reports(paths: list[str], options: ScanOptions, names: list[str]) -> list[bytes]:
    """The report with the survey, with every line it takes parsed instead (the block
    counter off too: it stands for `record_day`), and with the formats' fast paths off."""
    fast = _json(paths, options)
    with (
        patch.object(survey, "record_day", lambda raw, days: None),
        patch.object(survey, "applies", lambda fmt, windowed: False),
    ):
        parsed = _json(paths, options)
    with ExitStack() as stack:
        for name in names:
            stack.enter_context(without_fast_paths(registry.get(name)))
        slow = _json(paths, options)
    return [fast, parsed, slow]


def test_every_fixture_reports_the_same_with_and_without_the_survey() -> None:
    options = ScanOptions(by_day=True, allow_no_sessions=True)
    fast, parsed, slow = _reports([str(_FIXTURES)], options, sorted(GENERATED))
    assert fast == parsed == slow


_DELIMITED = st.sampled_from(
    [
        "<think>plan</think>Done.",
        "<thinking>plan</thinking>Done.",
        "<reasoning>\nplan\n</reasoning>\nDone.",
        "plan\n</think>\n\nDone.",
        "◁think▷plan◁/think▷Done.",
        "Use `<think>` in code, then a < b.",
        "```html\n<think>a tag in a fence</think>\n```\n",
        "Done.",
        "über café",
    ]
)


#: Text as bytes inside its JSON string: escapes a parser refuses (`\\q`, a short `\\u`, a
#: raw control byte: not JSON, so the line is an input error, never a clean message) and
#: ones it reads (an escaped backslash before a letter, a lone surrogate, a terminal's colour
#: escape, an escaped letter). A line whose structure alone is broken (a string the text's
#: last backslash leaves open) is the parse's to find: docs/performance.md, "Which lines are
#: counted from their bytes".
TEXT_BYTES = [
    b"Do\\qne.",
    b"Done.\\u12",
    b"Do\tne.",
    b"Do\x01ne.",
    b"Do\x00ne.",
    b"C:\\\\Users\\\\me",
    b"a\\\\\\qb",
    b"Done \\ud83d.",
    b"\\u001b[32mPASS\\u001b[0m",
    b"\\u0044one.",
    b'Done.\\n\\t\\/\\"',
]


@st.composite
def mixed_sessions(draw: st.DrawFn) -> dict[str, list[bytes]]:
    """Sessions of the three formats: the property generators' lines, assistant texts with
    delimiters, decoys outside assistant text, escaped delimiters and markers, pi's stamps."""
    out: dict[str, list[bytes]] = {}
    for name in sorted(GENERATED):
        lines = draw(st.lists(timed_lines(name), min_size=1, max_size=25))
        for _ in range(draw(st.integers(0, 6))):
            text = draw(_DELIMITED)
            line = draw(GENERATED[name])
            if b'"Done."' in line:
                line = line.replace(b'"Done."', orjson.dumps(text), 1)
            if draw(st.booleans()):  # a JSON encoder escaping what it may
                line = line.replace(b"<", b"\\u003c").replace(b"/", b"\\/")
            lines.insert(draw(st.integers(0, len(lines))), line)
        if name == "pi":
            for _ in range(draw(st.integers(0, 6))):
                lines.insert(draw(st.integers(0, len(lines))), draw(pi_stamped_lines()))
        for _ in range(draw(st.integers(0, 3))):  # a line damaged, or oddly escaped, in its text
            line = draw(timed_lines(name))
            if b'"Done."' in line:
                line = line.replace(b"Done.", draw(st.sampled_from(TEXT_BYTES)), 1)
            lines.insert(draw(st.integers(0, len(lines))), line)
        out[name] = lines
    return out


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(sessions=mixed_sessions(), window=st.booleans())
def test_generated_sessions_report_the_same_with_and_without_the_survey(
    sessions: dict[str, list[bytes]], window: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("mixed")
    paths = []
    for name, lines in sessions.items():
        path = folder / f"{name}.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        os.utime(path, (1772490000, 1772490000))
        paths.append(str(path))
    for name, path in zip(sessions, paths):
        options = ScanOptions(
            inputs=InputOptions(format=name),
            allow_no_sessions=True,
            by_day=True,
            since=1772409600.0 if window else None,
        )
        fast, parsed, slow = _reports([path], options, [name])
        assert fast == parsed == slow


def test_the_block_counter_starts_where_the_run_says_it_reads_enough(tmp_path: Path) -> None:
    """`scan_files` tells the process its inputs' size (`native.expect`) before reading: a run
    of `survey.FROM_BYTES` or more counts by the block from its first line, a smaller one
    reads line by line (no pattern compiled), with the same report."""
    from thinkfix.engine.scan import native

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code"
    session = tmp_path / "s.jsonl"
    session.write_bytes(next(p for p in sorted(fixture.glob("*.jsonl"))).read_bytes())
    size = session.stat().st_size
    reports = []
    for threshold, counted in ((size, True), (size + 1, False)):
        with (
            patch.object(native, "_seen", 0),
            patch.object(native, "_expected", 0),
            patch.object(survey, "FROM_BYTES", threshold),
            patch.object(survey, "Surveyor", wraps=survey.Surveyor) as built,
        ):
            report = scan([str(session)], ScanOptions(by_day=True), jobs=1)
        assert built.called is counted
        reports.append(JsonReporter().render_bytes(report))
    assert reports[0] == reports[1]
