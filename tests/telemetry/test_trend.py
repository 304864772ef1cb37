"""Trend: counts by day and model, and `--since`/`--until`, from each message's own time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.telemetry import sessions
from thinkfix.cli import main
from thinkfix.engine.scan import trend
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.telemetry.incremental import scan_incremental

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DAYS = ScanOptions(by_day=True)


def test_epoch_reads_the_stamps_runtimes_write() -> None:
    assert trend.epoch("2026-03-02T10:21:07.000Z") == 1772446867.0
    assert trend.epoch("2026-03-02T10:21:07.123456789Z") == pytest.approx(1772446867.123456)
    assert trend.epoch("2026-03-02T12:21:07+02:00") == 1772446867.0
    assert trend.epoch(1772446867123) == pytest.approx(1772446867.123)  # pi: milliseconds
    assert trend.epoch(1772446867) == 1772446867.0
    for bad in ("yesterday", "", None, True, -5, "2026-13-45T00:00:00Z", {"t": 1}):
        assert trend.epoch(bad) is None


def test_message_time_prefers_the_message_over_its_record() -> None:
    record = {
        "timestamp": "2026-03-02T00:00:00Z",
        "message": {"timestamp": 1772582400000},
        "other": {"timestamp": "2020-01-01"},
    }
    assert trend.day(trend.message_time(record, ("message",)) or 0) == "2026-03-04"
    assert trend.day(trend.message_time(record, ("nothing",)) or 0) == "2026-03-02"
    assert trend.message_time({"type": "x"}, ()) is None


def test_bounds_take_dates_and_date_times() -> None:
    assert trend.parse_bound("2026-03-02") == 1772409600.0
    assert trend.parse_bound("2026-03-02", end=True) == 1772409600.0 + 86400
    assert trend.parse_bound("2026-03-02T06:00:00Z") == 1772409600.0 + 6 * 3600
    with pytest.raises(ValueError, match="not a date"):
        trend.parse_bound("last week")


def lines(days: list[tuple[str, bool, str]]) -> bytes:
    return b"".join(
        sessions.claude_code(i, leak=leak, model=model, day=day)
        for i, (day, leak, model) in enumerate(days)
    )


def test_counts_by_day_and_model(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(
        lines(
            [
                ("2026-03-01", True, "qwen3-32b"),
                ("2026-03-01", False, "glm-4.6"),
                ("2026-03-02", True, "glm-4.6"),
                ("2026-03-02", True, "glm-4.6"),
            ]
        )
    )
    summary = scan([str(path)], DAYS, jobs=1).summary
    days = {
        d: {m: (c.assistant_messages, c.leaking_messages, c.findings) for m, c in models.items()}
        for d, models in summary.by_day.items()
    }
    assert days == {
        "2026-03-01": {"qwen3-32b": (1, 1, 1), "glm-4.6": (1, 0, 0)},
        "2026-03-02": {"glm-4.6": (2, 2, 2)},
    }
    assert scan([str(path)], ScanOptions(), jobs=1).summary.by_day == {}


@pytest.mark.parametrize(
    "fixture",
    sorted(
        p.relative_to(FIXTURES).as_posix()
        for p in FIXTURES.glob("*/*")
        if p.parent.name != "streams" and p.is_file()
    ),
)
def test_days_add_up_to_the_totals_in_every_format(fixture: str) -> None:
    report = scan([str(FIXTURES / fixture)], DAYS, jobs=1)
    s = report.summary
    assert report.to_dict()["summary"] == {
        **scan([str(FIXTURES / fixture)], jobs=1).to_dict()["summary"],
        "by_day": report.to_dict()["summary"]["by_day"],
    }
    assert (
        sum(c.assistant_messages for m in s.by_day.values() for c in m.values())
        == s.assistant_messages
    )
    assert (
        sum(c.leaking_messages for m in s.by_day.values() for c in m.values()) == s.leaking_messages
    )


def test_messages_without_a_time_are_undated_never_on_a_guessed_day(tmp_path: Path) -> None:
    """#27 item 4: undated messages went on the file's modification day (on a fresh clone,
    25 of 55 on today, the tallest bar); they get their own labelled bucket."""
    path = tmp_path / "session-1775200000000-0.jsonl"
    path.write_bytes((FIXTURES / "claw-code/session-1775200000000-0.jsonl").read_bytes())
    stamp = trend.parse_bound("2026-01-05T12:00:00Z")
    os.utime(path, (stamp, stamp))
    assert list(scan([str(path)], DAYS, jobs=1).summary.by_day) == [trend.UNDATED]


@pytest.mark.parametrize(
    ("since", "until", "inside"),
    [("2026-01-01", None, True), ("2026-02-01", None, False), (None, "2026-01-05", False)],
)
def test_a_window_judges_an_undated_message_by_its_files_time(
    tmp_path: Path, since: str | None, until: str | None, inside: bool
) -> None:
    """The file's time is still the only sign of when an undated message was written, so a
    --since/--until window keeps or drops it by that; it is counted as undated either way."""
    path = tmp_path / "session-1775200000000-0.jsonl"
    path.write_bytes((FIXTURES / "claw-code/session-1775200000000-0.jsonl").read_bytes())
    stamp = trend.parse_bound("2026-01-05T12:00:00Z")
    os.utime(path, (stamp, stamp))
    options = ScanOptions(
        by_day=True,
        since=trend.parse_bound(since) if since else None,
        until=trend.parse_bound(until) if until else None,
    )
    summary = scan([str(path)], options, jobs=1).summary
    assert list(summary.by_day) == ([trend.UNDATED] if inside else [])
    assert (summary.assistant_messages > 0) is inside


DAY = st.sampled_from(["2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(DAY, st.booleans(), st.sampled_from(["qwen3-32b", "glm-4.6"])),
        min_size=1,
        max_size=12,
    ),
    st.one_of(st.none(), DAY),
    st.one_of(st.none(), DAY),
)
def test_window_equals_scanning_only_the_messages_inside_it(
    rows: list[tuple[str, bool, str]], since: str | None, until: str | None
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        whole, part = Path(tmp) / "whole.jsonl", Path(tmp) / "part.jsonl"
        whole.write_bytes(lines(rows))
        kept = [
            sessions.claude_code(i, leak=leak, model=model, day=day)
            for i, (day, leak, model) in enumerate(rows)
            if (since is None or day >= since) and (until is None or day <= until)
        ]
        part.write_bytes(b"".join(kept))
        window = ScanOptions(
            since=trend.parse_bound(since) if since else None,
            until=trend.parse_bound(until, end=True) if until else None,
        )
        got, want = scan([str(whole)], window, jobs=1), scan([str(part)], jobs=1)
        assert got.summary.by_model == want.summary.by_model
        assert [(f.line, f.kind) for f in got.findings] == [
            (i + 1, "block")
            for i, (day, leak, _) in enumerate(rows)
            if leak and (since is None or day >= since) and (until is None or day <= until)
        ]


def test_incremental_days_equal_a_full_scan(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(lines([("2026-03-01", True, "qwen3-32b")]))
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], DAYS, state)
    with open(path, "ab") as fp:
        fp.write(sessions.claude_code(5, leak=True, day="2026-03-03"))
    report, stats = scan_incremental([str(path)], DAYS, state)
    assert stats.appended == 1
    assert report.to_dict() == scan([str(path)], DAYS, jobs=1).to_dict()
    assert list(report.summary.by_day) == ["2026-03-01", "2026-03-03"]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", "--isolated", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_json_and_openmetrics_carry_the_trend(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(lines([("2026-03-01", True, "qwen3-32b"), ("2026-03-02", False, "glm-4.6")]))
    code, out, _ = run("--output-format", "json", str(path))
    assert code == 1
    assert json.loads(out)["summary"]["by_day"] == {
        "2026-03-01": {
            "assistant_messages": 1,
            "leaking_messages": 1,
            "findings": 1,
            "by_model": {
                "qwen3-32b": {"assistant_messages": 1, "leaking_messages": 1, "findings": 1}
            },
        },
        "2026-03-02": {
            "assistant_messages": 1,
            "leaking_messages": 0,
            "findings": 0,
            "by_model": {
                "glm-4.6": {"assistant_messages": 1, "leaking_messages": 0, "findings": 0}
            },
        },
    }
    code, out, _ = run("--output-format", "openmetrics", str(path))
    assert 'thinkfix_leaking_messages_by_day{day="2026-03-01",model="qwen3-32b"} 1' in out
    assert 'thinkfix_assistant_messages_by_day{day="2026-03-02",model="glm-4.6"} 1' in out


def test_cli_since_until_filter_and_exit_codes(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(lines([("2026-03-01", True, "qwen3-32b"), ("2026-03-02", False, "glm-4.6")]))
    assert run("--since", "2026-03-02", str(path))[0] == 0  # the leak is before the window
    assert run("--until", "2026-03-01", str(path))[0] == 1
    code, out, _ = run("--since", "2026-03-02", "--output-format", "json", str(path))
    assert json.loads(out)["summary"]["assistant_messages"] == 1
    code, _, err = run("--since", "soon", str(path))
    assert code == 2 and "--since/--until" in err
