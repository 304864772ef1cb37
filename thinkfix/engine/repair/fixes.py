"""`repair --fix NAME,...`: the health fixes laid into a file's repair plan.

The checks of the same names read the file's records (`engine.health.run.check_records`),
the fixes plan over them and over the records the reasoning repair already rewrites
(`engine.health.fixes.plan`), and the two are merged into the plan's one `Edits`: the
writer, the read-back proof, the manifest and undo then treat a fix as any other edit.
A document (a file that is one JSON value: an OpenCode part) takes the fixes that change a
value in place, not `lines`; a database store (OpenCode's `opencode.db`) takes them as row
edits the store repair makes in its one transaction (`store_fixes`). The records are read
whole, so memory is the file's size when a fix is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from thinkfix.engine.health.fixes.model import Fix, Fixed
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.engine.health.fixes.stores import RowFix, RowInsert, plan_store_fixes
from thinkfix.engine.health.run import check_records
from thinkfix.engine.health.where import Where
from thinkfix.engine.repair.plan import FilePlan
from thinkfix.engine.report.checks import Check
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Placement, Repair
from thinkfix.formats.sqlite_store import RowChanges, quote
from thinkfix.io import filestate


def add_fixes(plan: FilePlan, fixes: frozenset[Fix]) -> None:
    """Lay the named `fixes` of the plan's file into `plan` (nothing when none applies)."""
    if not plan.lines:
        fixes = fixes - {Fix.LINES}  # a document's one record is read whole or not at all
    if not fixes or not plan.covers:
        return
    fmt, source = plan.fmt, plan.source
    if plan.lines:
        records = list(fmt.read(source.stream()))
        source.check()
    else:
        records = list(plan.originals)
    if len(records) != plan.count:
        raise filestate.FileChanged(f"{plan.path}: changed while it was being read; skipped")
    checks = {Check(fix.value) for fix in fixes}
    health = check_records(records, Where(plan.path, fmt.id), checks)
    planned = plan_fixes(fmt.id, records, health.findings, fixes, plan.edits.replaced)
    if not planned.fixed or (not plan.lines and any(planned.inserted.values())):
        return  # nothing to do, or records a document has no place for
    if len(plan.offsets) != plan.count:
        plan.offsets = source.line_offsets()
        if len(plan.offsets) != plan.count:
            raise filestate.FileChanged(f"{plan.path}: changed while it was being read; skipped")
    plan.originals = records
    plan.edits, plan.fix_only = merged(plan.edits, planned)
    plan.fixed = tuple(planned.fixed)
    plan.rebuildable = planned.rebuildable
    # a record a fix made readable is no longer an error of this file
    plan.bad = tuple((line, e) for line, e in plan.bad if line - 1 not in planned.replaced)


@dataclass(frozen=True)
class StoreFixes:
    """The fixes of a database store: `format` is the store's format with the fixes' row
    edits laid after its own (`apply_database`), so the store repair's one transaction,
    change set and undo carry them; `fixed` is what they repaired."""

    format: SessionFormat
    fixed: tuple[Fixed, ...]


def store_fixes(
    fmt: SessionFormat, path: str, records: Sequence[Record], fixes: frozenset[Fix]
) -> StoreFixes | None:
    """The named `fixes` of a store read as `records`; None when none applies."""
    if not fixes:
        return None
    checks = {Check(fix.value) for fix in fixes}
    health = check_records(records, Where(path, fmt.id), checks)
    planned = plan_store_fixes(fmt.id, records, health.findings, fixes)
    if not planned.rows and not planned.inserts:
        return None
    fixing = _Fixing(fmt, planned.rows, planned.inserts)
    return StoreFixes(cast(SessionFormat, fixing), planned.fixed)


class _Fixing:
    """A store's format whose `apply_database` also makes the fixes' row edits, through the
    same `RowChanges` (every other attribute is the format's own)."""

    def __init__(
        self, fmt: SessionFormat, rows: Sequence[RowFix], inserts: Sequence[RowInsert] = ()
    ) -> None:
        self._fmt = fmt
        self._rows = tuple(rows)
        self._inserts = tuple(inserts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fmt, name)

    def apply_database(self, db: RowChanges, repairs: list[Repair]) -> list[Placement]:
        placements = self._fmt.apply_database(db, repairs) if repairs else []
        for row in self._rows:
            where = " AND ".join(f"{quote(k)} = ?" for k, _ in row.key)
            found = db.execute(
                f"SELECT {quote(row.column)} FROM {quote(row.table)} WHERE {where}",
                [v for _, v in row.key],
            ).fetchone()
            new = row.spliced(found[0]) if found and isinstance(found[0], str) else None
            if new is not None:  # else the runtime wrote the row since: it is left as it is
                db.update(row.table, dict(row.key), {row.column: new})
        for insert in self._inserts:
            _insert(db, insert)
        return placements


def _insert(db: RowChanges, insert: RowInsert) -> None:
    """A new row and its session's count; left when the row is there already (a run since)
    or its session is gone."""
    row = dict(insert.row)
    table, session = quote(insert.table), quote(insert.session_table)
    if db.execute(f"SELECT 1 FROM {table} WHERE id = ?", [row["id"]]).fetchone():
        return
    found = db.execute(
        f"SELECT {quote(insert.count)} FROM {session} WHERE id = ?", [insert.session]
    ).fetchone()
    if found is None or not isinstance(found[0], int):
        return
    db.insert(insert.table, row, ["id"])
    db.update(insert.session_table, {"id": insert.session}, {insert.count: found[0] + 1})
