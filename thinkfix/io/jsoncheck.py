"""Is each line one JSON value? A parser's answer for the lines a scan counts from their bytes.

A clean assistant line is counted without being parsed where its bytes prove what a parse
would find (`engine.scan.survey`'s block counter, a format's `quick_messages`). Patterns
prove its keys, stamps and model, and byte checks its characters; its structure they cannot:
a quote or bracket lost inside a text, or a line cut just after a `}` and ended there by a
newline, still matches, and was counted clean where a parse says "not JSON" (never silently
clean: docs/performance.md, "Which lines are counted from their bytes"). `not_json` runs
every such line through a real parser: msgspec's validating decoder into `msgspec.Raw`,
which builds nothing, for a run that reads `MSGSPEC_FROM` bytes or more; orjson, which
builds each value and drops it, for a smaller one, which importing msgspec (~25 ms) would
cost more than it saves.

Either may refuse a line the scan's own parse reads (both refuse a lone surrogate's escape,
which `records.parse_json` then reads with the stdlib): such a line is parsed, with the same
answer. Neither accepts a line that parse refuses, UTF-8 aside: msgspec does not check a
string's bytes, so the callers check UTF-8 themselves, as they did before
(tests/io/test_jsoncheck.py holds both to `parse_json`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import orjson

#: What a refused line raises: orjson's errors are `ValueError`s; msgspec's `DecodeError` is
#: one only from 0.21 on (not in 0.18.6-0.20, which the floor allows: `_raw_decode` adds
#: it); a value nested past a parser's depth may raise `RecursionError` instead.
_REFUSED: tuple[type[BaseException], ...] = (ValueError, RecursionError)


@lru_cache(maxsize=1)
def _raw_decode() -> (
    tuple[Callable[[bytes | memoryview], Any], tuple[type[BaseException], ...]] | None
):
    """msgspec's decoder into `Raw` (validates, builds nothing) and what it raises for a line
    it refuses, or None where it cannot be imported (a broken install: orjson checks
    instead). Imported on first use."""
    try:
        import msgspec
    except ImportError:
        return None
    return msgspec.json.Decoder(msgspec.Raw).decode, (msgspec.DecodeError, *_REFUSED)


#: A run reading this many bytes (`engine.scan.native.reach`) checks with msgspec. Importing
#: it costs ~87 M instructions (~25 ms: typing_extensions, inspect, uuid, decimal come with
#: it), what its check saves over orjson's in ~6 MB of dense sessions (callgrind, a CLI scan
#: of 8 MB: orjson's check ~17 M instructions a MB, msgspec's ~2.6 M; 32 MB here cost the
#: 8 MB scan 899 M -> 929 M).
MSGSPEC_FROM = 6 << 20


def not_json(lines: Sequence[bytes | memoryview], run_bytes: int = 0) -> set[int]:
    """The indices of the lines that are not each one JSON value (or that the check cannot
    vouch for): those are parsed and reported, never counted from their bytes. `run_bytes`:
    what the run reads, which picks the parser (`MSGSPEC_FROM`)."""
    check, refused = (_raw_decode() if run_bytes >= MSGSPEC_FROM else None) or (
        orjson.loads,
        _REFUSED,
    )
    try:
        deque(map(check, lines), maxlen=0)  # C-level: no Python frame per line
    except refused:
        pass
    else:
        return set()
    out: set[int] = set()
    for i, line in enumerate(lines):  # rare (a damaged file): which lines
        try:
            check(line)
        except refused:
            out.add(i)
    return out
