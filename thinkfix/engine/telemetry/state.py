"""The state file of `scan --incremental` and `watch`: what they remember of each file.

Layout version 3 is compact (#22 item 10: version 2 wrote one JSON object per file, its
keys, its path twice and its option key spelled out each time: 68 MB for 100,000 one-record
sessions). Each file is one array, by position, under its folder; what repeats from file
to file (the option key, format ids, model names) is written once, in a table:

    {"version": 3, "options": [KEY, ...], "formats": [ID, ...], "models": [NAME, ...],
     "dirs": {"FOLDER/": {"NAME": ROW, ...}, ...}}

    ROW       = [options, dev, ino, size, mtime_ns, ctime_ns - mtime_ns, flags, format,
                 offset, check, lines, ctx, COMMITTED]         flags: 1 resumable, 2 crlf,
                                                               4 settled
    COMMITTED = [path or null, format, size, records, assistant_messages, leaking_messages,
                 by_model, findings, errors, skipped, by_day]  (trailing empty ones left out)

Tables are indexes into the lists above (`format` null: none). Findings and errors are
their fields' tuples with the file's path as 0 when it is the entry's own. A state in any
other layout (an older thinkfix's, a newer one's) is not reused: the run reads every file
whole, says so (`State.note`), and writes this layout.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from thinkfix.engine.report import InputError, LeakFinding
from thinkfix.engine.scan.options import ALL_KINDS
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.formats import registry
from thinkfix.io.errors import ErrorKind
from thinkfix.io.filestate import WriteError
from thinkfix.io.regular import NotRegular, kind_of, open_regular
from thinkfix.io.safewrite import write_output
from thinkfix.normalizer.kinds import LeakKind

STATE_VERSION = 3


@dataclass
class Entry:
    """What the state remembers of one file."""

    options: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    format: str | None
    committed: ScannedFile  # the counts of bytes [0, offset)
    offset: int = 0  # end of the last complete line read
    check: str = ""  # the hash of bytes [0, offset), as they were parsed
    resumable: bool = False  # JSONL through the line reader, uncompressed: can go on at offset
    lines: int = 0  # lines in [0, offset)
    ctx: dict[str, Any] | None = None  # the format's context after offset
    crlf: bool = False
    # The file was last changed well before it was read, so the same size and times mean
    # the same bytes (set by the reader, which knows when it read).
    settled: bool = False

    def same_stat(self, st: os.stat_result) -> bool:
        """Is `st` the file this entry was read from, untouched since (when `settled`)?"""
        return (self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns) == (
            st.st_dev,
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
        )


def vouched(entry: Entry, st: os.stat_result, path: str) -> bool:
    """Does the file's stat alone prove it holds what `entry` read (reused unread)? Its
    identity, size and times unchanged since a read well after its last change; and, for a
    file not read line by line, no errors (a document may owe them to another file: an
    OpenCode part read before its message file was written; review10) and, for a store, no
    side file its rows may have changed in."""
    if not (entry.settled and entry.same_stat(st)):
        return False
    return entry.resumable or not (entry.committed.errors or _store_in_flux(path))


def _store_in_flux(path: str) -> bool:
    """Does a SQLite store at `path` have a `-wal` or `-journal` with bytes in it? Its rows
    may then change while its own file's stat does not: a runtime in WAL mode (OpenCode,
    Crush, Goose) writes only its `-wal` until a checkpoint, so a settled store was reused
    unread and the messages written since never seen (review10)."""
    for side in ("-wal", "-journal"):
        try:
            if os.stat(path + side).st_size > 0:
                return True
        except OSError:
            continue
    return False


class StateError(Exception):
    """The state file cannot be written."""


# --- the compact layout --------------------------------------------------------------------

_RESUMABLE, _CRLF, _SETTLED = 1, 2, 4
_CTX_KEYS = ("session_id", "model", "extra")
_CTX_EMPTY: tuple[Any, ...] = (None, None, {})


class _Table:
    """Values written once, referred to by their index."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[Hashable, int] = {}

    def __call__(self, value: Hashable) -> int:
        i = self._index.get(value)
        if i is None:
            i = self._index[value] = len(self.values)
            self.values.append(value)
        return i


def _trimmed(row: list[Any], empty: Iterable[Any]) -> list[Any]:
    """`row` without the trailing values that equal their `empty` (read back as those)."""
    empties = list(empty)
    end = len(row)
    while end and row[end - 1] == empties[end - 1]:
        end -= 1
    return row[:end]


def _padded(row: list[Any], empty: Iterable[Any]) -> list[Any]:
    """`row` with its trailing empty values put back (fresh ones: they may be changed)."""
    empties = list(empty)
    return list(row) + [
        type(v)() if isinstance(v, (list, dict)) else v for v in empties[len(row) :]
    ]


def _own(path: str, value: str) -> Any:
    return 0 if value == path else value


def _from_own(path: str, value: Any) -> str:
    return path if value == 0 else str(value)


_COMMITTED_EMPTY: tuple[Any, ...] = (None, None, 0, 0, 0, 0, [], [], [], None, [])


def _committed_row(path: str, r: ScannedFile, formats: _Table, models: _Table) -> list[Any]:
    row = [
        None if r.path == path else r.path,
        None if r.format is None else formats(r.format),
        r.size,
        r.records,
        r.assistant_messages,
        r.leaking_messages,
        [[models(m), a, lk, n] for m, a, lk, n in r.by_model],
        [[_own(path, f.path), *f[1:]] for f in r.findings],
        [[_own(path, e.path), *e[1:]] for e in r.errors],
        r.skipped,
        [[day, models(m), a, lk, n] for day, m, a, lk, n in r.by_day],
    ]
    return _trimmed(row, _COMMITTED_EMPTY)


def _finding(path: str, f: list[Any]) -> LeakFinding:
    """A finding as `_committed_row` wrote it; its kind as a LeakKind, unless this version does
    not know it (a newer tool's state): then it stays text, and reports still list it."""
    kind = LeakKind(f[4]) if f[4] in ALL_KINDS else f[4]
    return LeakFinding(*[_from_own(path, f[0]), *f[1:4], kind, *f[5:]])


def _committed(path: str, row: list[Any], formats: list[str], models: list[str]) -> ScannedFile:
    own, fmt, size, records, assistant, leaking, by_model, findings, errors, skipped, by_day = (
        _padded(row, _COMMITTED_EMPTY)
    )
    return ScannedFile(
        path if own is None else own,
        None if fmt is None else formats[fmt],
        size,
        records,
        assistant,
        leaking,
        tuple(_finding(path, f) for f in findings),
        tuple(InputError(_from_own(path, e[0]), e[1], ErrorKind(e[2]), e[3]) for e in errors),
        tuple((models[m], a, lk, n) for m, a, lk, n in by_model),
        skipped,
        tuple((day, models[m], a, lk, n) for day, m, a, lk, n in by_day),
    )


def encode(entries: Mapping[str, Entry]) -> dict[str, Any]:
    """The entries in layout 3 (the document's keys besides `version`)."""
    options, formats, models = _Table(), _Table(), _Table()
    dirs: dict[str, dict[str, list[Any]]] = {}
    for path, e in sorted(entries.items()):
        folder, sep, name = path.rpartition("/")
        flags = (
            (_RESUMABLE if e.resumable else 0)
            | (_CRLF if e.crlf else 0)
            | (_SETTLED if e.settled else 0)
        )
        ctx = None if e.ctx is None else _trimmed([e.ctx.get(k) for k in _CTX_KEYS], _CTX_EMPTY)
        dirs.setdefault(folder + sep, {})[name] = [
            options(e.options),
            e.dev,
            e.ino,
            e.size,
            e.mtime_ns,
            e.ctime_ns - e.mtime_ns,
            flags,
            None if e.format is None else formats(e.format),
            e.offset,
            e.check,
            e.lines,
            ctx,
            _committed_row(path, e.committed, formats, models),
        ]
    return {
        "options": options.values,
        "formats": formats.values,
        "models": models.values,
        "dirs": dirs,
    }


# --- the shape of a document, checked before any of it is used ----------------------------
#
# Every value a run reuses must be of the type this version writes: a number that is text, a
# count that is a list, a format id this version does not know, reached the run's arithmetic
# or the format registry and ended it with an internal error, no state saved (review10). A
# state of the wrong shape is damaged: not reused, every file read whole.


_Check = Callable[[Any], bool]


def _need(ok: bool) -> None:
    if not ok:
        raise TypeError("a value of the wrong type")


def _int(v: Any) -> bool:
    return type(v) is int  # not bool, not float


def _text(v: Any) -> bool:
    return type(v) is str


def _maybe(check: _Check) -> _Check:
    return lambda v: v is None or check(v)


def _index(table: list[Any]) -> _Check:
    return lambda v: _int(v) and 0 <= v < len(table)


def _row(row: Any, checks: list[_Check], least: int) -> bool:
    """`row` is a list of `least` to len(checks) values, each passing its check (or raise)."""
    _need(type(row) is list and least <= len(row) <= len(checks))
    for value, check in zip(row, checks):
        _need(check(value))
    return True


def _rows(value: Any, checks: list[_Check], least: int | None = None) -> bool:
    _need(type(value) is list)
    for row in value:
        _row(row, checks, len(checks) if least is None else least)
    return True


def _own_path(v: Any) -> bool:
    return v == 0 and _int(v) or _text(v)


#: A finding's fields as `_committed_row` writes them (`LeakFinding`; its first nine needed).
_FINDING: list[_Check] = [_own_path, _int, _text, _text, _text, _text, _int, _int, _int]
_FINDING += [_maybe(_text), _maybe(_text), _int, _maybe(_text), _text]
_FINDING += [lambda v: type(v) is bool, _text, _maybe(_text)]
_ERROR_KINDS = frozenset(kind.value for kind in ErrorKind)


def _error_kind(v: Any) -> bool:
    return _text(v) and v in _ERROR_KINDS


def _ctx(v: Any) -> bool:
    return _row(v, [_maybe(_text), _maybe(_text), lambda extra: type(extra) is dict], 0)


def _entry_checks(formats: list[str], models: list[str], options: list[str]) -> _Check:
    """A check of one entry's row against the document's tables (made once a document)."""
    model = _index(models)
    committed: list[_Check] = [
        _maybe(_text),
        _maybe(_index(formats)),
        *[_int] * 4,
        lambda v: _rows(v, [model, _int, _int, _int]),
        lambda v: _rows(v, _FINDING, 9),
        lambda v: _rows(v, [_own_path, _maybe(_int), _error_kind, _text]),
        _maybe(_text),
        lambda v: _rows(v, [_text, model, _int, _int, _int]),
    ]
    entry: list[_Check] = [
        _index(options),
        *[_int] * 6,  # dev, ino, size, mtime, ctime - mtime, flags
        _maybe(_index(formats)),
        _int,
        _text,
        _int,
        _maybe(_ctx),
        lambda v: _row(v, committed, 0),
    ]
    return lambda row: _row(row, entry, len(entry))


def _check_tables(data: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    tables = data["options"], data["formats"], data["models"]
    for table in tables:
        _need(type(table) is list and all(_text(v) for v in table))
    _need(all(f in registry.FORMATS for f in tables[1]))
    _need(type(data["dirs"]) is dict)
    for files in data["dirs"].values():
        _need(type(files) is dict)
    return tables


def decode(data: Mapping[str, Any]) -> dict[str, Entry]:
    """The entries of a layout-3 document (any malformed part raises)."""
    options, formats, models = _check_tables(data)
    shaped = _entry_checks(formats, models, options)
    out: dict[str, Entry] = {}
    for folder, files in data["dirs"].items():
        for name, row in files.items():
            path = folder + name
            shaped(row)
            opt, dev, ino, size, mtime, ctime, flags, fmt, offset, check, lines, ctx, com = row
            out[path] = Entry(
                options[opt],
                dev,
                ino,
                size,
                mtime,
                mtime + ctime,
                None if fmt is None else formats[fmt],
                _committed(path, com, formats, models),
                offset=offset,
                check=check,
                resumable=bool(flags & _RESUMABLE),
                lines=lines,
                ctx=None if ctx is None else dict(zip(_CTX_KEYS, _padded(ctx, _CTX_EMPTY))),
                crlf=bool(flags & _CRLF),
                settled=bool(flags & _SETTLED),
            )
    return out


# --- reading and writing -------------------------------------------------------------------


def read_document(path: str) -> tuple[dict[str, Any] | None, str | None]:
    """The layout-3 document saved at `path`, or None and why it is not reused (None when
    there is simply no state yet)."""
    why = "every file is read whole, and the state written anew"
    try:
        # never `open`: a FIFO named as the state would wait for a writer forever (review10)
        with open_regular(path) as fp:
            data = orjson.loads(fp.read())
    except FileNotFoundError:
        return None, None
    except NotRegular:
        return None, f"the state file {path} is {_kind(path)}, not a regular file: {why}"
    except (OSError, ValueError) as exc:
        return None, f"the state file {path} cannot be read ({exc}): {why}"
    version = data.get("version") if isinstance(data, dict) else None
    if version != STATE_VERSION:
        return None, (
            f"the state file {path} is in layout {version!r}, this thinkfix reads layout "
            f"{STATE_VERSION}: {why}"
        )
    return data, None


def _kind(path: str) -> str | None:
    """What `path` is when it is no regular file ("a FIFO", "a character device"), else
    None (a regular file, or nothing there)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else kind_of(mode)


def decoded(
    path: str, data: Mapping[str, Any], parse: Callable[[Mapping[str, Any]], Any]
) -> tuple[Any, str | None]:
    """`parse(data)`, or None and why the state is not reused when it does not parse."""
    try:
        return parse(data), None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return None, (
            f"the state file {path} is damaged ({type(exc).__name__}): every file is read "
            "whole, and the state written anew"
        )


def write_document(path: str, entries: Mapping[str, Entry], **more: Any) -> None:
    """Save `entries` (and `more` keys) at `path` atomically, or `StateError`."""
    data = orjson.dumps({"version": STATE_VERSION, **encode(entries), **more})
    kind = _kind(path)
    if kind in ("a FIFO", "a socket"):  # a write would wait for a reader, or fail
        raise StateError(f"cannot write the state file {path}: {kind}, not a regular file")
    try:
        # a device (`--state /dev/null`) is written into, as `-o` writes it: a rename over it
        # replaced /dev/null itself with a regular file, run as root (review10)
        write_output(path, data)
    except WriteError as exc:  # the safe writer's own (no OSError): its text names the path
        raise StateError(f"cannot write the state file: {exc}") from None
    except OSError as exc:
        raise StateError(f"cannot write the state file {path}: {exc}") from None


@dataclass
class State:
    """Entries by display path. Entries of files this run did not name are kept, so runs
    over different folders can share one state file; entries of deleted files are dropped.
    `note` says why a state file that was there is not reused."""

    entries: dict[str, Entry] = field(default_factory=dict)
    note: str | None = None

    @classmethod
    def load(cls, path: str) -> State:
        """The state saved at `path`; an empty one when it is missing, unreadable or in
        another layout (the next run is then a full scan, never a wrong one)."""
        data, note = read_document(path)
        if data is None:
            return cls(note=note)
        entries, note = decoded(path, data, decode)
        return cls(entries or {}, note)

    def save(self, path: str) -> None:
        for p in [p for p in self.entries if not os.path.exists(p)]:
            del self.entries[p]
        write_document(path, self.entries)
