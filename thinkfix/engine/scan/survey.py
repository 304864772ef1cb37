"""A clean assistant line's day, read from its bytes: the by-day counts without a parse.

A scan with counts by day (every JSON report) needs each message's UTC day, which
`trend.message_time` reads from the parsed record: the first stamp on the message object,
else the record's. Parsing every clean assistant line for it was most of a timed scan's
cost (#26 item 2). `record_day` answers from the bytes instead, for the lines runtimes
write, and says "unsure" (None, so the line is parsed) for anything else.

The rule: every time key in the line (any key `trend.TIME_KEYS` may name begins `"time` or
`"created`) is a `"timestamp"` holding an ISO time in UTC or a number of milliseconds, one
of them is a member of the record itself, and all of them fall on the same day. Then
whichever stamp `message_time` picks (the message's own, as pi writes it, or the record's,
as Claude Code and Codex write it) gives that day, without knowing which object holds
which stamp. A line with an escape that could spell a key (`\\u00..`), a `"created…` key or
word, any other `"time…` text, stamps on different days (a message made just before
midnight, appended just after), a date that does not exist, or a year outside 1971-2099
(where `trend.day` of the float could differ from the date, or fail) is unsure.

`Dater` is what a file's timed scan asks (with a time window it reads the record's own
stamp, `quick.record_time`, as before). `Days` caches the days by date and by day number: a day is a pure function of the date
(the time is checked by the pattern), so the cache cannot make one stamp's answer depend
on another's.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from functools import partial

from thinkfix.engine.scan.trend import epoch
from thinkfix.formats.quick import record_time

# `"timestamp":"YYYY-MM-DDThh:mm:ss[.f]Z"`, years 1971-2099, the date captured.
_ISO = re.compile(
    rb'"timestamp":"((?:19[7-9][0-9]|20[0-9]{2})-[0-9]{2}-[0-9]{2})'
    rb'T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z"'
)
# `"timestamp":<milliseconds>` followed by the end of its member; `trend.epoch` reads a
# number above 10^10 as milliseconds.
_MS = re.compile(rb'"timestamp":([1-9][0-9]{11,12})(?=[,}])')
_DAY_MS = 86_400_000
_LOW_MS, _HIGH_MS = 31_536_000_000, 4_102_444_800_000  # 1971-01-01 .. 2100-01-01
_EPOCH = dt.date(1970, 1, 1)


class Days:
    """UTC days by ISO date and by millisecond stamp, each computed once per run."""

    __slots__ = ("_by_number", "by_date")

    def __init__(self) -> None:
        self.by_date: dict[bytes, str | None] = {}  # read directly by `record_day`
        self._by_number: dict[int, str] = {}

    def of_date(self, date: bytes) -> str | None:
        """`YYYY-MM-DD` as given when that date exists, else None."""
        try:
            return self.by_date[date]
        except KeyError:
            pass
        try:
            day: str | None = dt.date.fromisoformat(date.decode()).isoformat()
        except ValueError:
            day = None
        self.by_date[date] = day
        return day

    def of_millis(self, ms: int) -> str:
        """The UTC day of a time in milliseconds since the epoch."""
        number = ms // _DAY_MS
        day = self._by_number.get(number)
        if day is None:
            day = self._by_number[number] = (_EPOCH + dt.timedelta(days=number)).isoformat()
        return day


#: `Dater.when`'s answer for a line whose messages fall outside the time window.
OUTSIDE = ""


class Dater:
    """The day of a clean line's messages from its bytes, for one file's timed scan:
    `when(raw)` is the day, `OUTSIDE` the window, or None (unsure: parse the line). Without
    a time window it is `record_day` itself (no call layer between: it runs per line);
    with one, the record's own stamp (`quick.record_time`) judged by `window` (seconds ->
    its day, or None outside the window)."""

    __slots__ = ("days", "when", "window")

    def __init__(self, window: Callable[[float], str | None], windowed: bool) -> None:
        self.days = Days()
        self.window = window
        self.when: Callable[[bytes], str | None] = (
            self._in_window if windowed else partial(record_day, days=self.days)
        )

    def _in_window(self, raw: bytes) -> str | None:
        stamp = record_time(raw)
        seconds = epoch(stamp) if stamp is not None else None
        if seconds is None:
            return None
        day = self.window(seconds)
        return OUTSIDE if day is None else day


def record_day(raw: bytes, days: Days) -> str | None:
    """The UTC day `trend.message_time` gives every message of the line, or None (unsure).

    For a line the format's `quick_messages` took (one compact object, its messages known);
    see the module's docstring for the rule."""
    at = raw.find(b'"time')
    if at < 0 or b'"created' in raw or b"\\u00" in raw:
        return None
    find, iso, millis, by_date = raw.find, _ISO.match, _MS.match, days.by_date
    last = len(raw) - 1
    day: str | None = None
    member = False  # a stamp of the record itself seen
    while at >= 0:
        found = iso(raw, at)
        if found is not None:
            this = by_date.get(found[1]) or days.of_date(found[1])
            if this is None:
                return None
        else:
            found = millis(raw, at)
            if found is None:
                return None
            ms = int(found[1])
            if not _LOW_MS <= ms < _HIGH_MS:
                return None
            this = days.of_millis(ms)
        if day is None:
            day = this
        elif this != day:
            return None
        end = found.end()
        # The record's own member: its last (`…}` ends the line right after it), or one that
        # no object opens before (a key is nested only inside an object; a brace in a string
        # before it only makes this unsure). Not after a backslash: an escaped quote.
        if (
            not member
            and raw[at - 1] in b",{"
            and ((end == last and raw[last] == 125) or find(b"{", 1, at) < 0)
        ):
            member = raw[0] == 123
        at = find(b'"time', end)
    return day if member else None
