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

import re
from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Optional, Union

import orjson

from thinkfix.io.textcheck import gaps

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


@lru_cache(maxsize=8)
def _shaped_decode(
    content: tuple[str, bool],
) -> tuple[Callable[[bytes | memoryview], Any], tuple[type[BaseException], ...]] | None:
    """`_raw_decode` into the shape `_shaped` checks, as msgspec structs (other members are
    skipped, validated as JSON): a line whose message content is of another shape is refused,
    so parsed, and the reader's error for it reported (`formats.values.UnexpectedShape`)."""
    try:
        import msgspec
    except ImportError:
        return None
    key, text_ok = content
    text = Optional[str]  # noqa: UP045 - a runtime type for msgspec, on Python 3.10 too
    part = msgspec.defstruct(
        "Part", [("type", str), ("text", text, None), ("thinking", text, None)]
    )
    parts = list[part]  # type: ignore[valid-type]
    kind = Union[str, parts, None] if text_ok else Optional[parts]  # noqa: UP007, UP045
    message = msgspec.defstruct("Message", [("content", kind, None)])
    line = msgspec.defstruct("Line", [(key, message)])
    return msgspec.json.Decoder(line).decode, (msgspec.DecodeError, *_REFUSED)


def _shaped(value: Any, content: tuple[str, bool]) -> bool:
    """Is `value`'s message content of the shapes every reader reads: absent or null, a string
    where `content` allows one, or a list of objects each with a string `type` whose `text`
    and `thinking`, where present, are strings (`formats.values.typed_parts`; stricter than a
    reader may be: a line refused here is parsed, with the same answer)."""
    key, text_ok = content
    message = value.get(key) if isinstance(value, dict) else None
    if not isinstance(message, dict):
        return False
    parts = message.get("content")
    if parts is None or (text_ok and isinstance(parts, str)):
        return True
    if not isinstance(parts, list):
        return False
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            return False
        for field in ("text", "thinking"):
            if part.get(field) is not None and not isinstance(part[field], str):
                return False
    return True


def _shaped_loads(content: tuple[str, bool]) -> Callable[[bytes | memoryview], Any]:
    """orjson's parse, refusing what `_shaped` does (a run below `MSGSPEC_FROM`)."""

    def check(line: bytes | memoryview) -> None:
        if not _shaped(orjson.loads(line), content):
            raise ValueError("not of the shapes the readers read")

    return check


#: A run reading this many bytes (`engine.scan.native.reach`) checks with msgspec. Importing
#: it costs ~87 M instructions (~25 ms: typing_extensions, inspect, uuid, decimal come with
#: it), what its check saves over orjson's in ~6 MB of dense sessions (callgrind, a CLI scan
#: of 8 MB: orjson's check ~17 M instructions a MB, msgspec's ~2.6 M; 32 MB here cost the
#: 8 MB scan 899 M -> 929 M).
MSGSPEC_FROM = 6 << 20


def not_json(
    lines: Sequence[bytes | memoryview],
    run_bytes: int = 0,
    content: tuple[str, bool] | None = None,
) -> set[int]:
    """The indices of the lines that are not each one JSON value (or that the check cannot
    vouch for): those are parsed and reported, never counted from their bytes. `run_bytes`:
    what the run reads, which picks the parser (`MSGSPEC_FROM`). `content` (`Canonical.content`:
    the key of the line's message object, and whether its `content` may be a string): each
    line's message content must also be of the shapes the readers read (`_shaped`)."""
    msgspec = run_bytes >= MSGSPEC_FROM
    found = (_shaped_decode(content) if content else _raw_decode()) if msgspec else None
    check, refused = found or ((_shaped_loads(content) if content else orjson.loads), _REFUSED)
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


# A newline that does not end a line closing an object (`}`) or start one opening an object
# (`{`): the block holds a line that is not one compact JSON object, or a value that runs
# across lines. Written with the newline first, so `re` finds candidates at memchr speed.
EDGE = re.compile(rb"\n(?:(?<!\}\n)|(?!\{))")


def unread_not_objects(
    buf: bytes,
    lo: int,
    hi: int,
    read: dict[int, int],
    lines: int,
    run_bytes: int = 0,
    edges: bool | None = None,
) -> list[int]:
    """Starts of the lines of buf[lo:hi] outside `read` that may not each be one JSON object
    (a superset: the caller's parse decides), given `lines`, how many lines lie outside `read`
    (`hi` is just past a newline; `lo` starts a line).

    A sparse scan never parses those lines: they cannot hold an assistant message. But a
    line that is not JSON is one its runtime cannot read either, and a parse of every line
    reports it (never silently clean). The check, for a run that reads `MSGSPEC_FROM` bytes:
    every newline of the block closes an object and opens the next (`EDGE`), so every line
    holds at least one value and no value crosses a line; msgspec reads the unread bytes as
    a stream of values, each gap at once (a refused value fails it); and there are as many
    values as lines, so each line is exactly one object. Only a block that fails is looked
    at line by line, as is every block of a smaller run (orjson, each line alone). `edges`:
    whether the block has a newline `EDGE` matches, where a native pass found out already."""
    if lo >= hi:
        return []
    starts, ends = gaps(lo, hi, read)
    decode = _lines_decode() if run_bytes >= MSGSPEC_FROM else None
    if (
        decode is not None
        and buf[lo] == 123  # `{`: the first line opens an object; `}`: the last closes one
        and buf[hi - 2] == 125
        and not (EDGE.search(buf, lo, hi - 1) is not None if edges is None else edges)
    ):
        view = memoryview(buf)
        try:
            values = sum(map(len, map(decode, map(view.__getitem__, map(slice, starts, ends)))))
        except _lines_refused():
            values = -1
        if values == lines:
            return []
    out: list[int] = []
    for start, end in zip(starts, ends):  # line by line: small runs, damaged blocks
        if start < end:
            out.extend(not_objects(buf, start, end, run_bytes))
    return out


def not_objects(buf: bytes, lo: int, hi: int, run_bytes: int) -> list[int]:
    """Starts of the lines of buf[lo:hi] that are not each one JSON object (or that the check
    cannot vouch for: a line of whitespace, one that `not_json` refuses). Blank lines are no
    records, and are never listed. In batches: its memory is a batch's, whatever the lines
    (a block of four million newlines, a bomb, lists nothing)."""
    out: list[int] = []
    batch: list[re.Match[bytes]] = []
    for line in _LINE.finditer(buf, lo, hi):
        batch.append(line)
        if len(batch) == _BATCH:
            out.extend(_refused(batch, run_bytes))
            batch = []
    out.extend(_refused(batch, run_bytes))
    return out


_LINE = re.compile(rb"[^\n]+")
_BATCH = 4096


def _refused(matches: list[re.Match[bytes]], run_bytes: int) -> list[int]:
    """Starts of the lines `matches` that `not_objects` lists."""
    lines = [match[0] for match in matches]
    edged = [i for i, line in enumerate(lines) if line[:1] == b"{" and line[-1:] == b"}"]
    refused = not_json([lines[i] for i in edged], run_bytes)
    kept = {i for j, i in enumerate(edged) if j not in refused}
    return [match.start() for i, match in enumerate(matches) if i not in kept]


@lru_cache(maxsize=1)
def _lines_decode() -> Callable[[bytes | memoryview], list[Any]] | None:
    """msgspec's reader of a stream of JSON values into `Raw` (builds nothing), or None where
    msgspec cannot be imported."""
    try:
        import msgspec
    except ImportError:
        return None
    return msgspec.json.Decoder(msgspec.Raw).decode_lines


def _lines_refused() -> tuple[type[BaseException], ...]:
    """What `_lines_decode`'s reader raises for bytes it refuses (msgspec is imported)."""
    import msgspec

    return (msgspec.DecodeError, *_REFUSED)
