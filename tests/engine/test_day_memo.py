"""A scan's day of a time is `trend.day`'s, whatever times came before it: `_FileScan`
keeps each UTC day by its number, and a time within a second of midnight (where the
datetime rounds to the microsecond) is formatted afresh."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.inputs.files import InputFile
from thinkfix.engine.scan import trend
from thinkfix.engine.scan.one_file import _FileScan
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.formats.registry import get

DAY = 86400.0
#: 1970 to 2200, and the last and first microseconds of days.
TIMES = st.one_of(
    st.floats(min_value=0.0, max_value=7.3e9, allow_nan=False),
    st.integers(min_value=0, max_value=84_000).flatmap(
        lambda n: st.sampled_from([n * DAY - 1e-7, n * DAY - 4e-7, n * DAY + 4e-7, n * DAY])
    ),
)


def _scan() -> _FileScan:
    fmt = get("claude-code")
    return _FileScan(InputFile("x.jsonl", "x.jsonl", fmt), fmt, ScanOptions(by_day=True))


@given(st.lists(TIMES, min_size=1, max_size=30))
def test_the_day_of_a_time_is_trend_day(times: list[float]) -> None:
    scan = _scan()
    for when in times + times[::-1]:
        assert scan._in_window(when) == trend.day(when)


def test_the_rounding_second_before_midnight() -> None:
    scan = _scan()
    before = 19_000 * DAY - 1e-7  # rounds up to the next day's first microsecond
    assert scan._in_window(19_000 * DAY - 100) == trend.day(19_000 * DAY - 100)
    assert scan._in_window(before) == trend.day(before)
