"""`repair --fix NAME,...`: the health fixes laid into a file's repair plan.

The checks of the same names read the file's records (`engine.health.run.check_records`),
the fixes plan over them and over the records the reasoning repair already rewrites
(`engine.health.fixes.plan`), and the two are merged into the plan's one `Edits`: the
writer, the read-back proof, the manifest and undo then treat a fix as any other edit.
A document (a file that is one JSON value: an OpenCode part) takes the fixes that change a
value in place, not `lines`; a database store is left to the checks. The records are read
whole, so memory is the file's size when a fix is asked for.
"""

from __future__ import annotations

from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.engine.health.run import check_records
from thinkfix.engine.health.where import Where
from thinkfix.engine.repair.plan import FilePlan
from thinkfix.engine.report import Check
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
