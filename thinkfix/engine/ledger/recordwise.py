"""Undo record by record: the records a repair wrote, found in a session of lines as it is
now, and the file before the repair rebuilt from them.

A record is found where the repair wrote it (its index and sha256 in the manifest) or, when
lines before it were dropped or added since (an undo of another repair of the same session
took out the reasoning items that one inserted), by its sha256 alone: every record the repair
wrote must then be there exactly as many times as it wrote it, in the order it wrote them, so
which line is which is never a guess. Anything else is refused, naming the record. A sidecar's
records are its reasoning entries: the ones a repair added are taken out, the ones later
repairs added kept (`others_added`)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections import Counter
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO, cast

from thinkfix.engine.ledger.manifest import sidecar_without, unblob
from thinkfix.formats import registry
from thinkfix.formats.records import Record, record_limit, set_record_limit
from thinkfix.io import filestate
from thinkfix.io.ranges import ByteRange


class Digest:
    """A sink that only hashes what is written to it."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        return len(data)


@dataclass(frozen=True)
class Located:
    """Where the records a repair wrote lie in a session now: `at` maps each one's index now
    to its manifest record; empty when they are not all there, and `why` says which is not."""

    at: Mapping[int, dict[str, Any]] = field(default_factory=dict)
    why: str = ""


def session_records(
    entry: dict[str, Any], path: str, end: int | None = None
) -> Generator[Record, None, None]:
    """The records of the session at `path` (its first `end` bytes), each whole."""
    limit = record_limit()
    set_record_limit(0)
    try:
        with open(path, "rb") as raw:
            stop = os.fstat(raw.fileno()).st_size if end is None else end
            fp = io.BufferedReader(ByteRange(raw, 0, stop))
            yield from registry.get(entry["format"]).read(cast(BinaryIO, fp))
    finally:
        set_record_limit(limit)


def _scan(
    entry: dict[str, Any], path: str, side: str, hashes: set[str]
) -> tuple[bool, list[tuple[int, int, str]]]:
    """One read of the session: does each record hold, at its index of `side`, its sha256 of
    that side (and are there that many records); and (index, line, sha256) of every record
    whose sha256 is in `hashes`, in order."""
    want = {r[side]["index"]: r[side]["sha256"] for r in entry["records"] if r[side]}
    in_place, seen, found = True, 0, []
    with contextlib.closing(session_records(entry, path)) as records:
        for k, rec in enumerate(records):
            digest = filestate.sha256(rec.raw)
            if digest != want.get(k, digest):
                in_place = False
            if digest in hashes:
                found.append((k, rec.line, digest))
            seen = k + 1
    return in_place and bool(want) and seen > max(want), found


def locate(entry: dict[str, Any], path: str) -> Located:
    """The records the repair wrote, in the session at `path`: where it wrote them, else
    wherever they moved to, when each is there as often as it wrote it and in its order."""
    written = sorted(entry["records"], key=lambda r: int(r["after"]["index"]))
    if not written:
        return Located(why="the manifest names no record it wrote")
    hashes = [r["after"]["sha256"] for r in written]
    in_place, found = _scan(entry, path, "after", set(hashes))
    if in_place:
        return Located({r["after"]["index"]: r for r in written})
    if [digest for _, _, digest in found] == hashes:
        return Located({k: r for (k, _, _), r in zip(found, written)})
    return Located(why=_missing(written, found))


def _missing(written: list[dict[str, Any]], found: list[tuple[int, int, str]]) -> str:
    """Which record the repair wrote is not to be found once, and how."""
    there = Counter(digest for _, _, digest in found)
    wrote = Counter(r["after"]["sha256"] for r in written)
    for r in written:
        digest, line = r["after"]["sha256"], r["after"]["line"]
        if there[digest] == 0:
            return (
                f"the record it wrote at line {line} is not there as it wrote it (if a later "
                "repair changed it, undo that repair first)"
            )
        if there[digest] != wrote[digest]:
            lines = ", ".join(str(n) for _, n, d in found if d == digest)
            return (
                f"the record it wrote at line {line} is there {there[digest]} times (lines "
                f"{lines}), so which one it wrote cannot be told"
            )
    return "the records it wrote are there in another order"


def holds_before(entry: dict[str, Any], path: str) -> bool:
    """Is the session at `path` as before the repair, whatever else was written since: each
    record it changed back as it was (at its old index, or in its order wherever lines moved),
    and no record it wrote left?"""
    changed = sorted(
        (r for r in entry["records"] if r["before"]), key=lambda r: int(r["before"]["index"])
    )
    olds = [r["before"]["sha256"] for r in changed]
    news = {r["after"]["sha256"] for r in entry["records"]} - set(olds)
    gone = {r["after"]["sha256"] for r in entry["records"] if r["inserted"]}
    in_place, found = _scan(entry, path, "before", set(olds) | news | gone)
    there = [digest for _, _, digest in found]
    if in_place:
        return not gone.intersection(there)
    if news.intersection(there) or not olds:
        return False
    rest = iter(digest for digest in there if digest in olds)
    return all(old in rest for old in olds)  # each in its order, others between kept


def by_record(entry: dict[str, Any]) -> bool:
    """Can this entry be undone record by record (a session of lines the manifest's records
    rebuild), keeping the lines written since?"""
    return (
        entry.get("before") is not None
        and entry.get("role") == "session"
        and entry.get("compression") == "none"
        and bool(entry.get("content", {}).get("rebuildable"))
        and registry.get(entry["format"]).appends_lines
    )


def located(entry: dict[str, Any], now: filestate.FileState) -> Located:
    """Where the session `now` holds every record the repair wrote (`locate`),
    though other lines were rewritten, appended, dropped or added since: undo puts back those
    records alone, keeping the rest."""
    if not by_record(entry):
        return Located()
    try:
        return locate(entry, now.path)
    except Exception:  # noqa: BLE001 - unreadable now: changed since, as a hash says
        return Located()


def as_before(entry: dict[str, Any], now: filestate.FileState) -> bool:
    """Is the session `now` as before the repair record by record (an earlier undo), though
    other lines were written since (`holds_before`)?"""
    if not by_record(entry):
        return False
    try:
        return holds_before(entry, now.path)
    except Exception:  # noqa: BLE001 - unreadable now: changed since, as a hash says
        return False


def others_added(
    entry: dict[str, Any], now: filestate.FileState
) -> tuple[bytes | None, int] | None:
    """A sidecar that later repairs added their reasoning to, without the entries this repair
    added (`sidecar_without`): (its bytes, None to remove it; how many of this repair's
    entries were there), or None where that cannot be said (not a sidecar document now, or
    a manifest from before `added` was recorded)."""
    added = entry.get("added")
    if entry.get("role") != "sidecar" or not isinstance(added, list) or not added:
        return None
    try:
        data = now.read()
    except filestate.WriteError:
        return None
    return sidecar_without(data, added)


def rebuild(
    entry: dict[str, Any],
    current: str,
    out: BinaryIO | Digest,
    written: int | None = None,
    *,
    at: Mapping[int, dict[str, Any]] | None = None,
) -> None:
    """The original file from the repaired one at `current` (its first `written` bytes,
    where given), record by record: drop inserted records, put originals back. With `at`
    (`locate` found them there), those records alone, every other line kept however many."""
    wrote = at if at is not None else {r["after"]["index"]: r for r in entry["records"]}
    count = 0
    with contextlib.closing(session_records(entry, current, written)) as records:
        for k, rec in enumerate(records):
            count += 1
            record = wrote.get(k)
            if record is None:
                out.write(rec.raw)
            elif record["inserted"]:
                continue
            else:
                out.write(unblob(record["before"]))
            out.write(rec.eol)
    if at is None and count != entry["content"]["after_records"]:
        raise filestate.WriteError(f"{entry['target']}: record count differs from the manifest")
