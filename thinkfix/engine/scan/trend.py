"""When a message was written, for counts by day and `--since`/`--until`: pure, no I/O.

Runtimes stamp their records in different places and units: Claude Code and Codex put an
ISO `timestamp` on every line, pi and OpenClaw a millisecond `timestamp` on the message,
Gemini CLI an ISO `timestamp` on each message of the document, claw-code `timestamp_ms`
on some lines. A message's time is the first stamp found on the message object, then on
the record; a message without one takes its file's modification time (the caller's).
Days are UTC calendar days, `YYYY-MM-DD`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from thinkfix.formats.records import TIME_KEYS

_MS_THRESHOLD = 10_000_000_000  # numbers above this are milliseconds (this is year 2286 in s)


def epoch(value: Any) -> float | None:
    """Seconds since the epoch from an ISO 8601 string or a number of s or ms; None if neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value <= 0:
            return None
        return value / 1000 if value > _MS_THRESHOLD else float(value)
    if isinstance(value, str) and len(value) >= 10 and value[:4].isdigit():
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        if "." in text:  # fromisoformat before 3.11 takes at most 6 fraction digits
            head, _, rest = text.partition(".")
            digits = len(rest) - len(rest.lstrip("0123456789"))
            text = head + "." + (rest[:digits] + "000000")[:6] + rest[digits:]
        try:
            stamp = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.timezone.utc)
        return stamp.timestamp()
    return None


def _stamp(obj: Any) -> float | None:
    if not isinstance(obj, dict):
        return None
    for key in TIME_KEYS:
        if key in obj:
            found = epoch(obj[key])
            if found is not None:
                return found
    return None


def message_time(data: Any, message_path: Sequence[str | int]) -> float | None:
    """The time of the message at `message_path` inside a record's parsed `data`."""
    node = data
    nodes = [data]
    for part in message_path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        nodes.append(node)
    for candidate in reversed(nodes):
        found = _stamp(candidate)
        if found is not None:
            return found
    return None


#: The by-day bucket of messages that carry no time of their own: counted under this label,
#: never on a guessed day (the file's modification time put them on the day of a checkout).
UNDATED = "undated"


def day(seconds: float) -> str:
    """The UTC calendar day of a time."""
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%d")


def utc_day(value: str) -> str | None:
    """`day(epoch(value))` of a valid ISO time in UTC ending in `Z` (`quick.record_time`'s
    shape), or None where `epoch` refuses it (a date or time that does not exist). Not
    cached by date: whether a stamp is valid depends on its time too, and a cache made the
    answer depend on which stamps came before (a flaky property on the lowest pins)."""
    seconds = epoch(value)
    return day(seconds) if seconds is not None else None


def parse_bound(text: str, *, end: bool = False) -> float:
    """A `--since`/`--until` value as seconds: a date (its start, or with `end` its end) or
    an ISO date-time (UTC unless it says otherwise). ValueError when it is neither."""
    value = text.strip()
    if len(value) == 10:
        try:
            date = dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not a date (YYYY-MM-DD) or ISO date-time: {text!r}") from None
        start = dt.datetime(date.year, date.month, date.day, tzinfo=dt.timezone.utc)
        return (start + dt.timedelta(days=1)).timestamp() if end else start.timestamp()
    found = epoch(value)
    if found is None:
        raise ValueError(f"not a date (YYYY-MM-DD) or ISO date-time: {text!r}")
    return found
