"""The repair planner: every format's repairs drafted, proven safe, then applied together.

A format says, per repair, which edits to make and where the reasoning goes
(`FormatBase.plan_repair` fills a `Draft`); `Plan` checks each repair is still
valid, proves every record edit (`jsonedit.edit`), drops the repairs whose edits
are unsafe, and numbers inserted records and placements. It reads records only
by index or in one pass, never keeps a list of them, so the engine can hand it a
file's records lazily (`finish_edits` returns only the records that change).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import Any, cast

from thinkfix.formats import jsonedit, jsonspans
from thinkfix.formats.records import Record, Site
from thinkfix.formats.repairs import (
    ApplyOptions,
    Edits,
    Placement,
    PlacementKind,
    Repair,
    UnsafeEdit,
)
from thinkfix.formats.turns import Path
from thinkfix.formats.values import fmt_path, get_path
from thinkfix.normalizer.spans import squash_whitespace

REFUSED = "refused:"  # how a refusal reason starts (the placement is then REFUSED)


class Draft:
    """The edits one repair makes, and where its reasoning goes, before they are proven safe."""

    def __init__(self, repair: Repair, segments: tuple[str, ...]) -> None:
        self.repair = repair
        self.segments = segments
        self.edits: list[tuple[int, jsonedit.Edit]] = []
        self.inserts: list[tuple[int, Any]] = []
        self.kind: PlacementKind | None = None
        self.where = ""
        self.block: tuple[int, Path, int] | None = None
        self.field: tuple[int, Path] | None = None
        self.mirrors: list[tuple[int, Path]] = []
        self.failure: str | None = None
        self.inserted_at: list[int] = []
        self.value: Any = None  # format data a shared_edit builder reads from each contributor
        self.dropped = False  # the emptied text block is removed (others remain in the message)
        self.placeholder: str | None = None  # written instead of an empty text (archive)

    @property
    def site(self) -> Site:
        return self.repair.site

    def edit(self, record_index: int, change: jsonedit.Edit) -> None:
        self.edits.append((record_index, change))

    def set_text(self) -> None:
        """The visible text goes back where it was (the edit every repair makes)."""
        self.edit(self.site.record_index, jsonedit.SetValue(self.site.path, self.repair.visible))

    def mirror(self, record_index: int, path: Path, value: Any) -> None:
        """Another copy of the visible text (codex agent_message) gets the same fix."""
        self.edit(record_index, jsonedit.SetValue(path, value))
        self.mirrors.append((record_index, path))

    def insert_record(self, before: int, value: Any) -> None:
        """A new record right before record `before`."""
        self.inserts.append((before, value))

    def place(
        self,
        kind: PlacementKind,
        where: str,
        *,
        block: tuple[int, Path, int] | None = None,
        field: tuple[int, Path] | None = None,
    ) -> None:
        self.kind, self.where, self.block, self.field = kind, where, block, field


class Plan:
    """All repairs of one file: checked, drafted, proven, then applied together."""

    def __init__(self, records: Sequence[Record], options: ApplyOptions) -> None:
        self.records = records
        self.options = options
        self.drafts: list[Draft] = []
        self.facts: dict[Any, Any] = {}
        self._seen: set[tuple[int, Path]] = set()
        self._style: jsonspans.Style | None = None

    @property
    def style(self) -> jsonspans.Style:
        if self._style is None:
            # A lazy view of a file on disk may offer its lines' bytes without making records
            # (`engine.source.FileRecords.raws`); the style is the same either way.
            raws = getattr(self.records, "raws", None)
            self._style = jsonspans.Style.sniff(
                raws() if callable(raws) else (r.raw for r in self.records)
            )
        return self._style

    def records_with(self, needle: bytes) -> Iterator[Record]:
        """The records whose bytes hold `needle` (no newline in it), in order: a file-wide
        fact only such records can hold (Codex's `session_meta`) is read from them alone. A
        lazy view of a file on disk finds them by a byte search
        (`engine.source.FileRecords.containing`); a list is filtered here."""
        containing = getattr(self.records, "containing", None)
        if callable(containing):
            return cast(Iterator[Record], containing(needle))
        return (r for r in self.records if needle in r.raw)

    def fact(self, name: str, compute: Any) -> Any:
        """A file-wide fact, computed once per apply (e.g. the wire field pi files use)."""
        if name not in self.facts:
            self.facts[name] = compute()
        return self.facts[name]

    def shared_edit(
        self,
        draft: Draft,
        record_index: int,
        key: Any,
        build: Callable[[list[Draft]], jsonedit.Edit],
    ) -> None:
        """One edit that several repairs of the same record contribute to.

        E.g. one `reasoning_content` for two repaired parts of a message: the
        first draft owns the edit, and it is rebuilt from all contributors as
        each one arrives (they share a record, so they succeed or fail together).
        """
        slot = ("shared", record_index, key)
        if slot not in self.facts:
            draft.edits.append((record_index, build([draft])))
            self.facts[slot] = (draft, len(draft.edits) - 1, [draft])
            return
        owner, at, contributors = self.facts[slot]
        contributors.append(draft)
        owner.edits[at] = (record_index, build(contributors))

    def check(self, repair: Repair) -> str | None:
        """Why a repair cannot be applied as given, or None."""
        site = repair.site
        if not 0 <= site.record_index < len(self.records):
            return "stale: no such record"
        record = self.records[site.record_index]
        if record.error is not None:
            return f"record cannot be parsed: {record.error}"
        if get_path(record.data, site.path, object()) != site.text:
            return f"stale: the text at {site.json_path} is not what was scanned"
        if site.signed:
            return "signed: the text carries a provider signature and cannot be changed"
        if (site.record_index, site.path) in self._seen:
            return "duplicate repair of the same site"
        self._seen.add((site.record_index, site.path))
        return None

    def draft(self, repair: Repair) -> Draft | None:
        """A new draft, or None (with a skipped placement) when the repair cannot apply."""
        reason = self.check(repair)
        segments = new_segments(repair)
        if reason is None and repair.visible == repair.site.text and not segments:
            reason = "nothing to change"
        draft = Draft(repair, segments)
        self.drafts.append(draft)
        if reason is not None:
            draft.failure = reason
            return None
        return draft

    def finish(self) -> tuple[list[Record], list[Placement]]:
        """Prove every record edit, drop the repairs whose edits are unsafe, build the output."""
        edits, placements = self.finish_edits()
        return list(edits.after(self.records)), placements

    def finish_edits(self) -> tuple[Edits, list[Placement]]:
        """As `finish`, but only the records that change: the rest stay where they are read."""
        active = [d for d in self.drafts if d.failure is None]
        results: dict[int, tuple[bytes, Any]] = {}
        while True:
            by_record: dict[int, list[tuple[Draft, jsonedit.Edit]]] = defaultdict(list)
            for d in active:
                for index, change in d.edits:
                    by_record[index].append((d, change))
            results, failed = {}, []
            for index, pairs in sorted(by_record.items()):
                try:
                    results[index] = jsonedit.edit(
                        self.records[index].raw, [c for _, c in pairs], self.style
                    )
                except UnsafeEdit as exc:
                    for d, _ in pairs:
                        if d.failure is None:
                            d.failure = f"not safely editable: {exc}"
                            failed.append(d)
            if not failed:
                break
            active = [d for d in active if d.failure is None]
        return self._build(active, results)

    def _build(
        self, active: list[Draft], results: dict[int, tuple[bytes, Any]]
    ) -> tuple[Edits, list[Placement]]:
        count = len(self.records)
        inserts: dict[int, list[tuple[Draft, Any]]] = defaultdict(list)
        for d in active:
            for before, value in d.inserts:
                if 0 <= before < count:  # past the last record: nowhere to go (as ever)
                    inserts[before].append((d, value))
        edits = Edits(count, {}, {k: len(v) for k, v in inserts.items()})
        default_eol: bytes | None = None
        for i in sorted(set(inserts) | set(results)):
            record = self.records[i]
            at = edits.new_index(i) - len(inserts.get(i, ()))
            added: list[Record] = []
            for d, value in inserts.get(i, ()):
                raw = jsonedit.dump_record(value, self.style, like=record.raw)
                if not record.eol and default_eol is None:
                    default_eol = next((r.eol for r in self.records if r.eol), b"\n")
                d.inserted_at.append(at)
                added.append(
                    Record(
                        at,
                        record.line + at - i,
                        raw,
                        record.eol or default_eol or b"\n",
                        ctx=record.ctx,
                        data=value,
                        touched=True,
                        inserted=True,
                    )
                )
                at += 1
            if added:
                edits.inserted[i] = added
            if i in results:
                raw, data = results[i]
                edits.replaced[i] = Record(
                    at,
                    record.line + at - i,
                    raw,
                    record.eol,
                    ctx=record.ctx,
                    shapes=record._shapes,
                    data=data,
                    touched=True,
                )
        shifts = _Shifts(active)
        return edits, [self._placement(d, shifts, edits.new_index) for d in self.drafts]

    @staticmethod
    def _placement(d: Draft, shifts: _Shifts, new_index: Callable[[int], int]) -> Placement:
        site = d.site
        if d.failure is not None and d.failure.startswith(REFUSED):
            return Placement(
                site, PlacementKind.REFUSED, "not modified", applied=False, reason=d.failure
            )
        if d.failure is not None or d.kind is None:
            return Placement(
                site,
                PlacementKind.SKIPPED,
                "not modified",
                applied=False,
                reason=d.failure or "no placement decided",
            )
        record_index: int | None = None
        json_path: str | None = None
        if d.block is not None:
            index, array, at = d.block
            final = at + shifts.ahead(index, array, at, d)
            record_index, json_path = new_index(index), fmt_path(array + (final,))
        elif d.field is not None:
            record_index, json_path = new_index(d.field[0]), fmt_path(d.field[1])
        elif d.inserted_at:
            record_index, json_path = d.inserted_at[0], ""
        mirrors = tuple(f"record {new_index(ri)}: {fmt_path(p)}" for ri, p in d.mirrors)
        where = d.where + ("; the emptied text block was removed" if d.dropped else "")
        return Placement(
            site,
            d.kind,
            where,
            record_index=record_index,
            json_path=json_path,
            mirrors=mirrors,
            message_record_index=new_index(site.record_index),
            text_path=None if d.dropped else fmt_path(shifts.moved(site.record_index, site.path)),
            placeholder=d.placeholder,
        )


class _Shifts:
    """How far array inserts (and removals) move later elements: prefix sums per (record, array), so
    placements stay O(log n) each even for a document with thousands of repairs."""

    def __init__(self, active: list[Draft]) -> None:
        groups: dict[tuple[int, Path], list[tuple[int, int, int]]] = defaultdict(list)
        self._order = {id(d): n for n, d in enumerate(active)}
        for n, d in enumerate(active):
            for ri, change in d.edits:
                if isinstance(change, jsonedit.InsertItems):
                    groups[(ri, change.path)].append((change.index, n, len(change.values)))
                elif isinstance(change, jsonedit.RemoveItem):
                    groups[(ri, change.path)].append((change.index, n, -1))
        self._keys: dict[tuple[int, Path], list[tuple[int, int]]] = {}
        self._sums: dict[tuple[int, Path], list[int]] = {}
        for key, items in groups.items():
            items.sort()
            self._keys[key] = [(i, n) for i, n, _ in items]
            self._sums[key] = list(accumulate((c for _, _, c in items), initial=0))

    def ahead(self, record_index: int, array: Path, index: int, draft: Draft) -> int:
        """Values inserted before a draft's own insert at original `index`."""
        keys = self._keys.get((record_index, array))
        if not keys:
            return 0
        return self._sums[(record_index, array)][bisect_left(keys, (index, self._order[id(draft)]))]

    def moved(self, record_index: int, path: Path) -> Path:
        """Where a path points once the inserts into arrays along it are made."""
        out = list(path)
        for depth, part in enumerate(path):
            keys = self._keys.get((record_index, path[:depth]))
            if isinstance(part, int) and keys:
                out[depth] = (
                    part
                    + self._sums[(record_index, path[:depth])][
                        bisect_right(keys, (part, len(self._order)))
                    ]
                )
        return tuple(out)


def new_segments(repair: Repair) -> tuple[str, ...]:
    """The repair's reasoning segments minus empty ones and those the message already has."""
    native = squash_whitespace(repair.site.native_reasoning or "")
    out = []
    for segment in repair.thinking:
        flat = squash_whitespace(segment)
        if flat and not (native and flat in native):
            out.append(segment.strip())
    return tuple(out)
