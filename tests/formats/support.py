"""Helpers for the format tests: where the files are, and the checks every repair must pass."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from thinkfix.formats import registry, sqlite_store
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import Record, Site
from thinkfix.formats.repairs import DEFAULT_OPTIONS, ApplyOptions, Placement, Repair

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
DATA = REPO / "tests" / "data" / "formats"
SAMPLES = REPO.parent / "shared" / "samples"

#: A row of fixtures/README.md's table: file, format, assistant messages, leaking messages.
README_ROW = re.compile(
    r"^\| `(?P<file>[^`]+)` \| (?P<format>[a-z-]+) [^|]*\| (?P<messages>\d+) \| "
    r"\*\*(?P<leaking>\d+)\*\* \|",
    re.MULTILINE,
)
_README_TOTAL = re.compile(
    r"^Total: (\d+) files, (\d+) assistant messages, \*\*(\d+) leaking\*\*", re.MULTILINE
)


@dataclass(frozen=True)
class FixtureTotals:
    """The totals fixtures/README.md states (a test checks them against the files)."""

    files: int
    messages: int
    leaking: int


def fixture_table() -> dict[str, re.Match[str]]:
    """fixtures/README.md's rows by file path (relative to fixtures/)."""
    return {m["file"]: m for m in README_ROW.finditer((FIXTURES / "README.md").read_text())}


def fixture_totals() -> FixtureTotals:
    match = _README_TOTAL.search((FIXTURES / "README.md").read_text())
    assert match, "fixtures/README.md states its totals"
    return FixtureTotals(*(int(g) for g in match.groups()))


def leaking_fixtures() -> list[Path]:
    """The fixture files README says leak (the clean ones are there to stay clean)."""
    return sorted(
        FIXTURES / name for name, row in fixture_table().items() if int(row["leaking"]) > 0
    )


ID_KEYS = {
    "uuid",
    "parentUuid",
    "leafUuid",
    "sessionId",
    "requestId",
    "id",
    "parentId",
    "call_id",
    "tool_use_id",
    "toolCallId",
    "session_id",
    "logicalParentUuid",
    "signature",
    "thinkingSignature",
    "thoughtSignature",
    "encrypted_content",
}

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def session_files(root: Path) -> list[Path]:
    """Every session file under `root` (READMEs, captured streams and a store's side files
    excluded: a `-wal` is part of its database, read with it)."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.name != "README.md"
        and "streams" not in p.relative_to(root).parts
        and store_of(p) is None
    )


# --- fixtures that are databases -----------------------------------------------------------
# A session store that is a SQLite file (OpenCode's opencode.db, Zed's threads.db, ...) is
# read through the store layer, never as a stream of records, and compared row by row: a
# repair and its undo change rows, and SQLite moves its change counter and pages on every
# write, so the bytes after an exact undo differ while every row and the schema are back.

#: The files SQLite keeps beside a database, which travel with it.
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")


def is_store(path: Path) -> bool:
    """Is this session file a database store (SQLite's magic bytes)?"""
    return sqlite_store.is_database(str(path))


def store_of(path: Path) -> Path | None:
    """The database whose side file (`-wal`, `-shm`, `-journal`) `path` is, else None."""
    for suffix in SIDE_SUFFIXES:
        if path.name.endswith(suffix):
            base = path.with_name(path.name[: -len(suffix)])
            if base.is_file() and is_store(base):
                return base
    return None


def side_files(store: Path) -> list[Path]:
    """The side files a store has now (they hold rows the file alone lacks: copy them too)."""
    return [
        store.with_name(store.name + s)
        for s in SIDE_SUFFIXES
        if store.with_name(store.name + s).is_file()
    ]


def store_content(path: Path) -> dict[str, Any]:
    """What undo must give back: the schema (every table, index, view and trigger with its
    SQL, and the user_version and application_id a runtime's migrations read) and every
    table's rows with their rowids, read without a trace (newest rows in `-wal` included)."""
    with sqlite_store.snapshot(str(path)) as db:
        schema = db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        tables: dict[str, list[Any]] = {}
        for kind, name, _, sql in schema:
            if kind != "table":
                continue
            quoted = '"' + name.replace('"', '""') + '"'
            rowid = "" if "WITHOUT ROWID" in (sql or "").upper() else "rowid, "
            rows = db.execute(f"SELECT {rowid}* FROM {quoted}").fetchall()
            tables[name] = sorted(rows, key=repr)
        versions = [
            db.execute(f"PRAGMA {pragma}").fetchone()[0]
            for pragma in ("user_version", "application_id")
        ]
    return {"schema": schema, "tables": tables, "versions": versions}


def content(path: Path) -> Any:
    """A session file as a test compares it: a store's rows and schema, any other file's
    bytes."""
    return store_content(path) if is_store(path) else path.read_bytes()


def tree_content(root: Path) -> dict[str, Any]:
    """Every file under `root` by relative path, as `content` gives it (a store's side files
    are part of its content, not entries of their own)."""
    return {
        str(p.relative_to(root)): content(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and store_of(p) is None
    }


def fixture(name: str) -> Path:
    matches = [p for p in session_files(FIXTURES) if p.name.startswith(name)]
    assert len(matches) == 1, (name, matches)
    return matches[0]


def read(fmt: SessionFormat, data: bytes, path: Path | str | None = None) -> list[Record]:
    """Records of `data`; `path` names the stream as an open file would be named (a format
    may read files beside it: OpenCode's file store keeps a part's role in its message)."""
    stream = io.BytesIO(data)
    if path is not None:
        stream.name = str(path)
    return list(fmt.read(stream))


def write(fmt: SessionFormat, records: Iterable[Record]) -> bytes:
    out = io.BytesIO()
    fmt.write(records, out)
    return out.getvalue()


def scores(head: bytes, path: str = "") -> dict[str, float]:
    """Every format's confidence for a file head, as detection weighs them."""
    return {name: registry.confidence(fmt, head, path) for name, fmt in registry.FORMATS.items()}


def detect(data: bytes, path: Path | str) -> SessionFormat:
    return registry.detect_or_raise(data[:65536], str(path))


def sites(fmt: SessionFormat, records: list[Record]) -> list[Site]:
    return [s for r in records for s in fmt.sites(r)]


def site_at(all_sites: list[Site], line: int, json_path: str | None = None) -> Site:
    found = [
        s for s in all_sites if s.line == line and (json_path is None or s.json_path == json_path)
    ]
    assert len(found) == 1, (line, json_path, [(s.line, s.json_path) for s in all_sites])
    return found[0]


def ids(value: Any) -> Counter[tuple[str, str]]:
    """Every id, link and signature value in a tree (they must all survive a repair)."""
    found: Counter[tuple[str, str]] = Counter()
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ID_KEYS and isinstance(v, (str, int)):
                found[(k, str(v))] += 1
            found += ids(v)
    elif isinstance(value, list):
        for v in value:
            found += ids(v)
    return found


def numbers(raw: bytes) -> list[bytes]:
    """Number literals as written, in order (strings blanked out first)."""
    return _NUMBER.findall(_STRING.sub(b'""', raw))


@dataclass
class Outcome:
    before: list[Record]
    after: list[Record]
    reread: list[Record]
    placements: list[Placement]
    data: bytes


def repair(
    fmt: SessionFormat, data: bytes, repairs: list[Repair], options: ApplyOptions = DEFAULT_OPTIONS
) -> Outcome:
    """Apply, write, read back, and check what every repair must keep.

    - untouched records are byte-identical and in the same order;
    - records are only ever added, never removed;
    - ids, links and signatures of every edited record survive;
    - every number literal of an edited record is written as it was;
    - each applied repair's text now reads back as its `visible` (or its placeholder);
    - no blank text is added (an all-reasoning text is dropped, refused or given a placeholder).
    """
    before = read(fmt, data)
    after, placements = fmt.apply(before, repairs, options)
    out = write(fmt, after)
    reread = read(fmt, out)
    assert [r.raw for r in reread] == [r.raw for r in after]
    assert [r.index for r in after] == list(range(len(after)))
    originals = [r for r in after if not r.inserted]
    assert len(originals) == len(before), "a record was removed"
    for old, record in zip(before, originals):
        if not record.touched:
            assert record.raw + record.eol == old.raw + old.eol
            continue
        assert record.eol == old.eol
        assert ids(old.data) - ids(record.data) == Counter(), "an id or link was lost"
        assert _subsequence(numbers(old.raw), numbers(record.raw)), "a number literal changed"
    for placement, rep in zip(placements, repairs):
        if placement.applied:
            assert placement.message_record_index is not None
            if placement.text_path is None:  # the emptied block was dropped
                assert not rep.visible.strip()
                continue
            text_site = [
                s
                for s in fmt.sites(reread[placement.message_record_index])
                if s.json_path == placement.text_path
            ]
            written = rep.visible if placement.placeholder is None else placement.placeholder
            assert [s.text for s in text_site] == [written]
    # Never an empty text: the API rejects it and viewers drop the message with its usage.
    assert _blank_texts(fmt, reread) <= _blank_texts(fmt, before), "a repair wrote an empty text"
    return Outcome(before, after, reread, placements, out)


def _blank_texts(fmt: SessionFormat, records: list[Record]) -> int:
    return sum(1 for r in records for s in fmt.sites(r) if not s.text.strip())


def _subsequence(short: list[bytes], long: list[bytes]) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def dump_like(
    value: Any,
    indent: str | None = None,
    key_sep: str = ":",
    item_sep: str = ",",
    sort_keys: bool = False,
    level: int = 0,
) -> str:
    """Serialise like a runtime does: Node/serde compact or pretty, raw UTF-8.

    A `("num", "0.000005")` tuple is written as that raw number literal, the way
    Node writes numbers that Python would not reproduce.
    """
    pad = "" if indent is None else "\n" + indent * (level + 1)
    end = "" if indent is None else "\n" + indent * level
    sep = item_sep if indent is None else "," + pad
    if isinstance(value, tuple):
        return value[1]
    if isinstance(value, str):  # raw UTF-8, lone surrogates escaped (as Node does)
        return re.sub(
            "[\ud800-\udfff]",
            lambda m: f"\\u{ord(m.group()):04x}",
            json.dumps(value, ensure_ascii=False),
        )
    if isinstance(value, list):
        if not value:
            return "[]"
        return (
            "["
            + pad
            + sep.join(dump_like(v, indent, key_sep, item_sep, sort_keys, level + 1) for v in value)
            + end
            + "]"
        )
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = sorted(value.items()) if sort_keys else list(value.items())
        return (
            "{"
            + pad
            + sep.join(
                dump_like(k, indent)
                + key_sep
                + dump_like(v, indent, key_sep, item_sep, sort_keys, level + 1)
                for k, v in items
            )
            + end
            + "}"
        )
    return json.dumps(value)


def eager_head(head: bytes, max_lines: int) -> tuple[list[bytes], list[bytes]]:
    """What `detection.sample` looked at when it split and parsed a JSONL head up front: its
    complete pieces (an unterminated last line only when it parses) and, of the first
    `max_lines` of them, the non-blank ones (the reference the lazy, bounded sample is held to)."""
    pieces = head.split(b"\n")
    complete = pieces if len(pieces) == 1 else pieces[:-1]
    if len(pieces) > 1 and pieces[-1].strip():
        try:
            orjson.loads(pieces[-1])
            complete = pieces
        except orjson.JSONDecodeError:
            pass
    return complete, [p for p in complete[:max_lines] if p.strip()]
