"""The fixes of a database store (OpenCode's and Kilo CLI's `opencode.db`): the same fixes as
a file's, planned over the store's records, then laid onto the rows they came from.

A store's record is one message with its parts (`formats.opencode_items.database_messages`:
`{id, sessionID, info, parts}`, each part with its row id). The fixes plan over those
records exactly as over a file's (`plan.plan_fixes`); what they change is then told apart
by row: a part whose value changed is an UPDATE of that part row's `data`, the message's
`info` one of the message row's, each a splice of the changed keys into the row's own
bytes (`jsonedit.edit`, every other byte kept). The repair writes them through its
`RowChanges`, in its one transaction, so the change set, the manifest and undo (which puts
back only those rows, keeping what the runtime wrote since) treat them as its own. A fix
that adds a record (a result line) has no row to go to and is left out; none of
OpenCode's does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from thinkfix.engine.health.fixes.model import Finding, Fix, Fixed
from thinkfix.engine.health.fixes.plan import plan_fixes
from thinkfix.formats.jsonedit import Edit, SetValue, edit
from thinkfix.formats.jsonspans import Style
from thinkfix.formats.records import Record, parse_json
from thinkfix.formats.repairs import UnsafeEdit

#: The formats whose store's records are OpenCode's `{id, info, parts}` messages.
OPENCODE_STORES = frozenset({"opencode", "kilo"})


@dataclass(frozen=True)
class RowFix:
    """One row's change: its table and key, the value it was planned over (its `data` parsed,
    without the ids the reader adds), and the keys to set in it."""

    table: str
    key: tuple[tuple[str, str], ...]
    before: Any
    values: tuple[tuple[str, Any], ...]

    def spliced(self, raw: str) -> str | None:
        """The row's `data` with the new values spliced in; None when the row no longer holds
        the value the fix was planned over (the runtime wrote it since) or the splice cannot
        be proven."""
        value, error = parse_json(raw.encode())
        if error is not None or value != self.before:
            return None
        changes: list[Edit] = [SetValue((k,), v) for k, v in self.values]
        data = raw.encode()
        try:
            new, _ = edit(data, changes, Style.sniff([data]))
        except UnsafeEdit:
            return None
        return new.decode()


@dataclass(frozen=True)
class StorePlan:
    rows: tuple[RowFix, ...]
    fixed: tuple[Fixed, ...]


def plan_store_fixes(
    fmt_id: str, records: Sequence[Record], findings: Iterable[Finding], fixes: Iterable[Fix]
) -> StorePlan:
    """The row changes the named `fixes` make in a store read as `records`."""
    chosen = frozenset(fixes) - {Fix.LINES}  # a row is read whole or not at all
    if fmt_id not in OPENCODE_STORES or not chosen:
        return StorePlan((), ())
    planned = plan_fixes(fmt_id, records, findings, chosen)
    if any(planned.inserted.values()):
        return StorePlan((), ())  # a record the store has no row for
    rows: list[RowFix] = []
    for index in sorted(planned.replaced):
        old, new = records[index].data, planned.data(index)
        found = _message_rows(old, new)
        if found is None:
            return StorePlan((), ())  # a change no row holds: nothing is fixed
        rows.extend(found)
    return StorePlan(tuple(rows), tuple(planned.fixed) if rows else ())


def _message_rows(old: Any, new: Any) -> list[RowFix] | None:
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return None
    if {k: v for k, v in old.items() if k not in ("info", "parts")} != {
        k: v for k, v in new.items() if k not in ("info", "parts")
    }:
        return None
    out: list[RowFix] = []
    info = _row("message", str(old.get("id")), old.get("info"), new.get("info"))
    if info is None:
        return None
    out.extend(info)
    before, after = old.get("parts"), new.get("parts")
    if not (isinstance(before, list) and isinstance(after, list)) or len(before) != len(after):
        return None
    for part, changed in zip(before, after):
        if not (isinstance(part, dict) and isinstance(changed, dict)):
            return None
        if part.get("id") != changed.get("id"):
            return None
        found = _row("part", str(part.get("id")), _bare(part), _bare(changed))
        if found is None:
            return None
        out.extend(found)
    return out


def _bare(part: dict[str, Any]) -> dict[str, Any]:
    """A part as its row's `data` holds it (the reader adds its `id`)."""
    return {k: v for k, v in part.items() if k != "id"}


def _row(table: str, row_id: str, old: Any, new: Any) -> list[RowFix] | None:
    """The change of one row: nothing, the keys set anew, or None (a key removed)."""
    if old == new:
        return []
    if not (isinstance(old, dict) and isinstance(new, dict)) or set(old) - set(new):
        return None
    values = tuple((k, new[k]) for k in new if k not in old or old[k] != new[k])
    if any(k not in old for k, _ in values):
        return None  # a new key: where it goes in the row's bytes is not the file's order
    return [RowFix(table, (("id", row_id),), old, values)]
