"""The block counter by decoding: a block's wanted lines keyed from msgspec structs (#26).

`survey.Surveyor` proves a clean assistant line's model and day with the format's canonical
pattern, one `re` match a line (a third of a dense scan's time: `sre` runs every byte of
every assistant line through the pattern's free parts, and the survey then checks those
parts for tokens, escapes and JSON text). `StructSurveyor` answers the same question from
msgspec's decode of each wanted line into the format's narrow structs
(`formats.linestructs`), which proves the structure, the keys and the JSON text at once;
what remains in bytes is what no decode proves: the delimiter test over the whole line (a
leak is looked for anywhere, as the per-line path's `_clean` does), UTF-8 (msgspec does not
check a skipped string's bytes) and the record limit. A line it does not accept is read one
by one, as before. The report is byte-identical to the pattern's and to no counter at all
(tests/engine/test_struct_survey.py, bench/run.py's check).

It runs where msgspec is installed and the process reads `FROM_BYTES` (importing msgspec
costs what its decode saves over the pattern in a few MB); elsewhere the pattern does.
"""

from __future__ import annotations

import re
from itertools import accumulate
from operator import add, sub

from thinkfix.engine.scan import native, survey
from thinkfix.engine.scan.prefilter import SEPARATOR
from thinkfix.engine.scan.survey import (
    DAY_MS,
    HIGH_MS,
    LOW_MS,
    Block,
    Days,
    Hits,
    Key,
    Surveyor,
    not_utf8_pieces,
)
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.linestructs import Keyer, LineStructs
from thinkfix.io.jsoncheck import MSGSPEC_FROM
from thinkfix.normalizer.policy import Policy

#: The process reads this many bytes before the counter decodes (`native.reach`).
FROM_BYTES = MSGSPEC_FROM

#: An ISO time in UTC as `survey.record_day` reads one (years 1971-2099), its date captured.
_ISO = re.compile(
    r"((?:19[7-9][0-9]|20[0-9]{2})-[0-9]{2}-[0-9]{2})"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?Z"
)


def keyer(structs: LineStructs | None) -> Keyer | None:
    """The format's struct keying, where it has one, msgspec imports and it pays."""
    if structs is None or native.reach() < FROM_BYTES:
        return None
    return structs.keyer()


class StructSurveyor(Surveyor):
    """`Surveyor` whose `block` keys lines from their decoded structs (`keys`, the format's)."""

    __slots__ = ("_by_text", "_delims", "keys")

    def __init__(self, base: Surveyor, keys: Keyer) -> None:
        super().__init__(base.canon, base.hits, base.days, base.limit, base.sources)
        self.keys = keys
        self._by_text: dict[str, str | None] = {}  # ISO date -> its day, or None (no such date)
        self._delims: Hits | None = None
        self._tried = False

    def block(self, buf: bytes, wanted: dict[int, int], fast: bool = False) -> Block:
        """Survey a block's wanted lines (`Surveyor.block`'s contract): decoded and keyed by
        the format's rule, checked for delimiters, UTF-8 and size over all lines at once."""
        starts, ends = list(wanted), list(wanted.values())
        if not starts:
            return Block([], [], [], wanted)
        # views: the lines' bytes are copied once, into `joined`, not twice
        lines = list(map(memoryview(buf).__getitem__, map(slice, starts, ends)))
        found = self.keys(lines)
        bad = {i for i, key in enumerate(found) if key is None}
        stamps = [key[1] if key is not None else "" for key in found]
        days = self._stamp_days(stamps)
        bad.update(i for i, day in enumerate(days) if day is None)
        joined = SEPARATOR.join(lines)
        offsets = list(map(add, accumulate(map(len, lines), initial=0), range(len(lines))))
        checks = self._delimiters() if fast else None
        bad.update((checks or self.hits)(joined, offsets))
        bad.update(not_utf8_pieces(joined, offsets))
        if self.limit:
            sizes = list(map(sub, ends, starts))
            if max(sizes) > self.limit:
                bad.update(i for i, size in enumerate(sizes) if size > self.limit)
        keys: list[Key] = [
            (key[0] if key is not None else None, day)  # type: ignore[misc]
            for key, day in zip(found, days)
        ]
        if not bad:
            return Block(starts, ends, keys, {})
        for i in sorted(bad, reverse=True):
            del starts[i], ends[i], keys[i]
        kept = set(starts)
        return Block(starts, ends, keys, {s: e for s, e in wanted.items() if s not in kept})

    def _stamp_days(self, stamps: list[str | int]) -> list[str | None]:
        """Each stamp's UTC day: an ISO time of the runtimes' shape on a date that exists, or
        milliseconds within 1971-2099 (`survey.LOW_MS`, `HIGH_MS`); else None (unsure)."""
        out: list[str | None] = [None] * len(stamps)
        texts = [i for i, s in enumerate(stamps) if type(s) is str]
        if texts:
            strings: list[str] = [stamps[i] for i in texts]  # type: ignore[misc]
            dates = [m[1] if m is not None else None for m in map(_ISO.fullmatch, strings)]
            by_text, days = self._by_text, self.days
            for date in set(dates) - by_text.keys():
                if date is not None:
                    by_text[date] = days.of_date(date.encode())
            for i, date in zip(texts, dates):
                if date is not None:
                    out[i] = by_text[date]
        numbers = [i for i, s in enumerate(stamps) if type(s) is int and LOW_MS <= s < HIGH_MS]
        if numbers:
            stamped = self.days.of_numbers([stamps[i] // DAY_MS for i in numbers])  # type: ignore[operator]
            for i, day in zip(numbers, stamped):
                out[i] = day
        return out

    def _delimiters(self) -> Hits | None:
        """The delimiter test in one hyperscan pass, compiled on first use (None where
        hyperscan refuses it: the pure test runs)."""
        if not self._tried:
            self._tried = True
            self._delims = native.piece_hits(self.sources, SEPARATOR)
        return self._delims


def surveyor(fmt: SessionFormat, policy: Policy, days: Days, windowed: bool) -> Surveyor | None:
    """`survey.surveyor`, keyed by decoding where the format has structs and they pay."""
    base = survey.surveyor(fmt, policy, days, windowed)
    if base is None:
        return None
    keys = keyer(base.canon.structs)
    return StructSurveyor(base, keys) if keys is not None else base
