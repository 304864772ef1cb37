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

**By the block** (#26 items 1, 2): a format that writes its assistant lines in a fixed key
order says how (`SessionFormat.canonical`, a `formats.quick.Canonical`). `Surveyor.block`
matches that pattern once on each line the sparse reader wants in a block (a C-level match
from the line's start, capturing model and stamps), then makes the checks `quick_messages`
and `record_day` make line by line for all matched lines at once, at C speed, over their
free parts joined: none holds a `TAIL_TOKENS` or a possible delimiter
(`prefilter.delimiter_hits`), all are UTF-8; a token found marks only the lines it lies in.
A line that passes is one `quick_messages` counts as one message of that model and
`record_day` dates to that day (tests/engine/test_bulk.py holds every accepted line to both
and to the parsed record), so the reader counts it from its key `(model, day)` with
`collections.Counter`, between the lines it still reads one by one (leaks, context markers,
other shapes). `applies` is the switch: the report is byte-identical without it (the same
tests, and bench/run.py's check). Where hyperscan is installed, the token and delimiter
checks are one native pass (`native.piece_hits`, `Surveyor.block(..., fast=True)`), with the
same answer.
"""

import datetime as dt
import re
from bisect import bisect_right
from collections.abc import Callable
from functools import partial
from itertools import accumulate, chain
from operator import add, itemgetter, sub
from re import Match
from typing import TYPE_CHECKING

from thinkfix.engine.scan import native
from thinkfix.engine.scan.prefilter import SEPARATOR, delimiter_hits, delimiter_sources
from thinkfix.engine.scan.trend import epoch
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.quick import CONTROLS, Canonical, bad_escape, record_time
from thinkfix.formats.records import record_limit
from thinkfix.io.jsoncheck import not_json
from thinkfix.io.multimatch import literal
from thinkfix.normalizer.policy import Policy

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

# `"timestamp":"YYYY-MM-DDThh:mm:ss[.f]Z"`, years 1971-2099, the date captured.
_ISO = re.compile(
    rb'"timestamp":"((?:19[7-9][0-9]|20[0-9]{2})-[0-9]{2}-[0-9]{2})'
    rb'T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z"'
)
# `"timestamp":<milliseconds>` followed by the end of its member; `trend.epoch` reads a
# number above 10^10 as milliseconds.
_MS = re.compile(rb'"timestamp":([1-9][0-9]{11,12})(?=[,}])')
DAY_MS = 86_400_000
LOW_MS, HIGH_MS = 31_536_000_000, 4_102_444_800_000  # 1971-01-01 .. 2100-01-01
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
        number = ms // DAY_MS
        day = self._by_number.get(number)
        if day is None:
            day = self._by_number[number] = _day_of(number)
        return day

    def of_numbers(self, numbers: list[int]) -> list[str]:
        """`of_millis` of many times, given as day numbers (`ms // 86_400_000`)."""
        by_number = self._by_number
        for number in set(numbers) - by_number.keys():
            by_number[number] = _day_of(number)
        return list(map(by_number.__getitem__, numbers))


def _day_of(number: int) -> str:
    """`YYYY-MM-DD` of the day `number` days after the epoch."""
    return (_EPOCH + dt.timedelta(days=number)).isoformat()


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
            if not LOW_MS <= ms < HIGH_MS:
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


# --- by the block ------------------------------------------------------------------------------

#: What a canonical line's free parts may not hold: a word `quick_messages` counts or
#: `survey.record_day` is unsure of (`formats.quick.Canonical`), or an escape that could
#: spell one as a key: a lowercase letter's (`\\u0061`-`\\u007a`; the hex digits in either
#: case). Other escapes (a terminal's colours `\\u001b`, `\\u00e9`, `\\u0022`) spell no
#: such word, and the delimiter test reads escaped delimiters itself: those lines are counted
#: (2.9% of the dense corpus's assistant lines were parsed for a `\\u001b`).
TAIL_TOKENS = (
    b'"assistant"',
    b'"model"',
    b'"message":',
    b'"time',
    b'"created',
    b"\\u006",
    b"\\u007",
)

Hits = Callable[[bytes, list[int]], set[int]]
_groups = Match.groups
Key = tuple[str | None, str]


class Block(NamedTuple):
    """What one block's survey found: the accepted lines (their starts, ends and keys, in file
    order), and the wanted lines still to read one by one (start -> end, in order)."""

    starts: list[int]
    ends: list[int]
    keys: list[Key]
    rest: dict[int, int]


def applies(fmt: SessionFormat, windowed: bool) -> bool:
    """The block counter runs for a format with a canonical line, in a scan without a time
    window (a window judges each message's time, not its day)."""
    return fmt.canonical is not None and not windowed


#: The block counter starts once a process reads, or expects to read, this many bytes
#: (`native.reach`): compiling a format's line pattern (Claude Code's: 1,752 characters, ~17 M
#: instructions, ~5 ms) costs what counting ~1,000 dense lines by the block saves, and a
#: small scan (one session, a JSON report) paid it at start-up. The answers are the same.
FROM_BYTES = 1 << 20


def surveyor(fmt: SessionFormat, policy: Policy, days: Days, windowed: bool) -> "Surveyor | None":
    """The block counter of one file's scan, where it `applies` and pays (`FROM_BYTES`)."""
    if fmt.canonical is None or not applies(fmt, windowed) or native.reach() < FROM_BYTES:
        return None
    return Surveyor(
        fmt.canonical, delimiter_hits(policy), days, record_limit(), delimiter_sources(policy)
    )


def _first(rows: list[tuple[bytes | None, ...]], at: list[int]) -> list[bytes | None]:
    """Per row, the first of the groups at `at` that took part in the match (a pattern with
    alternatives names one group per alternative). Comprehensions over `itemgetter` tuples:
    no generator per row (Claude Code's four model groups cost ~0.5 µs a line that way)."""
    if not at:
        return [None] * len(rows)
    if len(at) == 1:
        return list(map(itemgetter(at[0]), rows))
    picked = map(itemgetter(*at), rows)
    if len(at) == 2:
        return [a if a is not None else b for a, b in picked]
    if len(at) == 4:
        return [
            a if a is not None else b if b is not None else c if c is not None else d
            for a, b, c, d in picked
        ]
    return [next((v for v in g if v is not None), None) for g in picked]


class Surveyor:
    """One file's block survey: the format's pattern, the delimiter test over joined lines
    (`hits`, and its regex `sources` for the native checks), the days cache and the record
    limit."""

    __slots__ = (
        "_date",
        "_model",
        "_ms",
        "_native",
        "_tails",
        "_tried",
        "canon",
        "days",
        "hits",
        "limit",
        "sources",
    )

    def __init__(
        self, canon: Canonical, hits: Hits, days: Days, limit: int, sources: tuple[bytes, ...] = ()
    ) -> None:
        self.canon = canon
        self.hits = hits
        self.days = days
        self.limit = limit
        self.sources = sources
        self._native: Hits | None = None
        self._tried = False
        names = canon.pattern.groupindex
        # indices into `Match.groups()`
        self._model = [i - 1 for n, i in names.items() if n.startswith("model")]
        self._date = [i - 1 for n, i in names.items() if n.startswith("date")]
        self._ms = [i - 1 for n, i in names.items() if n == "ms"]
        self._tails = [i - 1 for n, i in names.items() if n.startswith("tail")]

    def block(self, buf: bytes, wanted: dict[int, int], fast: bool = False) -> Block:
        """Survey a block's wanted lines (`wanted`: start -> offset of its newline, as the
        sparse reader finds them): one `match` of the pattern per line, at C speed, then
        list operations over all matched lines at once (maps, `itemgetter`s and
        comprehensions: no Python call per line). `fast`: the tokens and the delimiter test
        in one hyperscan pass (`native.piece_hits`, the same answer)."""
        match = self.canon.pattern.match
        # from the newline before each line (the first line of a file is read on its own)
        found = [match(buf, s - 1, e + 1) if s else None for s, e in wanted.items()]
        if None in found:
            starts = [s for s, m in zip(wanted, found) if m is not None]
            ends = list(map(wanted.__getitem__, starts))
            found = list(filter(None, found))  # a match is true
        else:
            starts, ends = list(wanted), list(wanted.values())
        n = len(found)
        if not n:
            return Block([], [], [], wanted)
        rows: list[tuple[bytes | None, ...]] = list(map(_groups, found))  # type: ignore[arg-type]
        # The free parts of every line, joined: the checks run over them all at once. Every
        # match sets the same number of free parts (one per alternative, or all); each group
        # ends with the fixed byte after its part (`quick.tail`: `}` or `,`), kept: no word a
        # check looks for ends with it or is undone by it, and an escape left open at a
        # part's end (`\\` or `\\u12` before it: not JSON) is one inside its piece.
        at = self._tails
        if len(at) == 1:
            tails = [t for t in map(itemgetter(at[0]), rows) if t is not None]
        elif at:
            tails = [t for t in chain.from_iterable(map(itemgetter(*at), rows)) if t is not None]
        else:
            tails = []
        per = len(tails) // n
        joined = SEPARATOR.join(tails)
        # where each starts: the lengths before it, and a separator after each (C iterators)
        offsets = list(map(add, accumulate(map(len, tails), initial=0), range(len(tails))))
        checks = self._checks() if fast else None
        if checks is not None:
            bad = {i // per for i in checks(joined, offsets)}
        else:
            bad = {i // per for i in _tokens(joined, offsets)}
            bad.update(i // per for i in self.hits(joined, offsets))
            bad.update(i // per for i in _not_json_text(joined, offsets))
        bad.update(i // per for i in not_utf8_pieces(joined, offsets))
        if 0 in b"".join(tails):  # a raw NUL, which the checks cannot tell from a separator
            bad.update(i // per for i, tail in enumerate(tails) if 0 in tail)
        if self.limit:
            sizes = list(map(sub, ends, starts))
            if max(sizes) > self.limit:
                bad.update(i for i, size in enumerate(sizes) if size > self.limit)
        # Each line one JSON value, by a parser (`io.jsoncheck`): what its free parts hide of
        # its structure (a lost quote, a line cut after a `}`) the pattern cannot see.
        lines = list(map(buf.__getitem__, map(slice, starts, ends)))
        bad.update(not_json(lines, native.reach(), self.canon.content))
        days = self._days(rows)
        models = self._models(rows)
        keys: list[Key] = list(zip(models, days))  # type: ignore[arg-type]
        # Most blocks drop a few lines (a leak, a decoy): deleted in place, not copied around.
        drop = bad if None not in days else bad | {i for i, d in enumerate(days) if d is None}
        if n == len(wanted) and not drop:
            return Block(starts, ends, keys, {})
        for i in sorted(drop, reverse=True):
            del starts[i], ends[i], keys[i]
        kept = set(starts)
        return Block(starts, ends, keys, {s: e for s, e in wanted.items() if s not in kept})

    def _days(self, rows: list[tuple[bytes | None, ...]]) -> list[str | None]:
        """Each line's day (None: a date that does not exist, or stamps on two days)."""
        days, by_date = self.days, self.days.by_date
        dates = _first(rows, self._date)
        for date in set(dates) - by_date.keys():
            days.of_date(date)  # type: ignore[arg-type]
        out = list(map(by_date.__getitem__, dates))  # type: ignore[arg-type]
        if self._ms:
            millis = list(map(int, map(itemgetter(self._ms[0]), rows)))
            outside = min(millis) < LOW_MS or max(millis) >= HIGH_MS
            if outside:  # rare: those lines are unsure, and their days are not computed
                for i, ms in enumerate(millis):
                    if not LOW_MS <= ms < HIGH_MS:
                        out[i] = None
                        millis[i] = LOW_MS
            stamped = days.of_numbers([ms // DAY_MS for ms in millis])
            for i in [i for i, (a, b) in enumerate(zip(stamped, out)) if a != b]:
                out[i] = None  # the message's stamp and the record's on two days
        return out

    def _models(self, rows: list[tuple[bytes | None, ...]]) -> list[str | None]:
        """Each line's model (None: the context's), decoded once per name."""
        names = _first(rows, self._model)
        decoded = {m: m.decode() for m in set(names) if m is not None}
        return list(map(decoded.get, names))  # type: ignore[arg-type]

    def _checks(self) -> Hits | None:
        """The tokens, the delimiter test and the JSON text's in one native pass, compiled
        on first use (None
        where hyperscan refuses them: the pure passes run)."""
        if not self._tried:
            self._tried = True
            words = tuple(literal(t) for t in TAIL_TOKENS)
            self._native = native.piece_hits(words + self.sources + NOT_JSON_TEXT, SEPARATOR)
        return self._native


def _tokens(joined: bytes, offsets: list[int]) -> set[int]:
    """The pieces that hold a `TAIL_TOKENS`: one search per token over all of them; a token
    found is looked for occurrence by occurrence."""
    out: set[int] = set()
    find = joined.find
    for token in TAIL_TOKENS:
        at = find(token)
        while at >= 0:
            out.add(bisect_right(offsets, at) - 1)
            at = find(token, at + len(token))
    return out


def _not_json_text(joined: bytes, offsets: list[int]) -> set[int]:
    """The pieces a JSON parser refuses character by character (`quick.json_text`): a
    backslash that starts no escape, a raw control byte other than NUL (the separator,
    which `Surveyor.block` looks for in the pieces themselves). Such a line is parsed and
    reported, never counted clean. The native checks find a superset in their one pass
    (`NOT_JSON_TEXT`): a piece flagged that is JSON is parsed, with the same answer."""
    out = {bisect_right(offsets, m.start()) - 1 for m in bad_escape().finditer(joined)}
    if any(c in joined for c in CONTROLS[1:]):  # rare: which pieces
        ends = [*offsets[1:], len(joined) + 1]
        for i, (lo, hi) in enumerate(zip(offsets, ends)):
            if any(c in joined[lo : hi - 1] for c in CONTROLS[1:]):
                out.add(i)
    return out


#: `_not_json_text` for the native checks (hyperscan has no lookbehind to read a run of
#: backslashes in pairs, and no pattern there may match the separator): a raw control byte,
#: and a backslash before a byte that no escape is, or `\\u` without four hex digits. A
#: superset: `\\\\q` (an escaped backslash, then `q`) is flagged too.
NOT_JSON_TEXT = (rb"[\x01-\x1f]", rb'\\(?:[^"\\/bfnrtu\x00]|u[0-9a-fA-F]{0,3}[^0-9a-fA-F\x00])')


def not_utf8_pieces(joined: bytes, offsets: list[int]) -> set[int]:
    """The pieces that are not UTF-8 (none, at memory speed, for ASCII text)."""
    out: set[int] = set()
    if not joined.isascii():
        try:
            joined.decode()
        except UnicodeDecodeError:
            ends = [*offsets[1:], len(joined) + 1]
            for i, (lo, hi) in enumerate(zip(offsets, ends)):
                try:
                    joined[lo : hi - 1].decode()
                except UnicodeDecodeError:
                    out.add(i)
    return out
