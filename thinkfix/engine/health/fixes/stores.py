"""The fixes of a database store (OpenCode's and Kilo CLI's `opencode.db`, Goose's
`sessions.db`): the same fixes as a file's, planned over the store's records, then laid onto
the rows they came from.

A store's record is one message: OpenCode's with its parts
(`formats.opencode_items.database_messages`: `{id, sessionID, info, parts}`, each part with
its row id), Goose's a `messages` row (`formats.goose_items.database_messages`: `content` is
its `content_json`). The fixes plan over those records exactly as over a file's
(`plan.plan_fixes`); what they change is then told apart by row (a part's `data`, a
message's `info` or `content_json`) and written as edits of that row's own bytes (a value
set, list items removed: `jsonedit.edit`, every other byte kept). The repair makes them
through its `RowChanges`, in its one transaction, so the change set, the manifest and undo
(which puts back only those rows, keeping what the runtime wrote since) treat them as its
own. A fix that adds a record (a result line) has no row to go to and is left out; none of
these runtimes' does. A row the runtime rewrote between the read and the write is left.

Crush's store is the one that takes a new row: on an interrupt Crush writes a new `tool`
message for each call left without a result (`crush_inserts`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from thinkfix.engine.health.fixes.model import Finding, Fix, Fixed, problem_of
from thinkfix.engine.health.fixes.pairs import CALL_WITHOUT_RESULT, remove
from thinkfix.engine.health.fixes.plan import plan_fixes
from thinkfix.formats.crush import go_json
from thinkfix.formats.jsonedit import Edit, SetValue, edit
from thinkfix.formats.jsonspans import Style
from thinkfix.formats.records import Record, parse_json
from thinkfix.formats.repairs import UnsafeEdit
from thinkfix.formats.turns import Path

Value = str | int | float | bytes | None


@dataclass(frozen=True)
class RowFix:
    """One row's change: its table, key and JSON column, the value it was planned over (the
    column parsed), and the edits that turn it into the fixed value."""

    table: str
    key: tuple[tuple[str, Value], ...]
    column: str
    before: Any
    edits: tuple[Edit, ...]

    def spliced(self, raw: str) -> str | None:
        """The column with the edits spliced in; None when the row no longer holds the value
        the fix was planned over (the runtime wrote it since) or the splice cannot be proven."""
        data = raw.encode()
        value, error = parse_json(data)
        if error is not None or value != self.before:
            return None
        try:
            new, _ = edit(data, list(self.edits), Style.sniff([data]))
        except UnsafeEdit:
            return None
        return new.decode()


@dataclass(frozen=True)
class RowInsert:
    """A new row (`row`, keyed by its `id`) and its session's row, whose `count` column goes
    up by one with it, as the runtime's own insert trigger keeps it."""

    table: str
    row: tuple[tuple[str, Value], ...]
    session_table: str
    session: str
    count: str


@dataclass(frozen=True)
class StorePlan:
    rows: tuple[RowFix, ...]
    fixed: tuple[Fixed, ...]
    inserts: tuple[RowInsert, ...] = ()


def plan_store_fixes(
    fmt_id: str, records: Sequence[Record], findings: Iterable[Finding], fixes: Iterable[Fix]
) -> StorePlan:
    """The row changes the named `fixes` make in a store read as `records`."""
    chosen = frozenset(fixes) - {Fix.LINES}  # a row is read whole or not at all
    insert = _INSERTS.get(fmt_id)
    if insert is not None and Fix.TOOL_PAIRS in chosen:
        inserts, fixed = insert(records, findings)
        return StorePlan((), fixed, inserts)
    rows_of = _ROWS.get(fmt_id)
    if rows_of is None or not chosen:
        return StorePlan((), ())
    planned = plan_fixes(fmt_id, records, findings, chosen)
    if any(planned.inserted.values()):
        return StorePlan((), ())  # a record the store has no row for
    rows: list[RowFix] = []
    for index in sorted(planned.replaced):
        found = rows_of(records[index].data, planned.data(index))
        if found is None:
            return StorePlan((), ())  # a change no row holds: nothing is fixed
        rows.extend(found)
    return StorePlan(tuple(rows), tuple(planned.fixed) if rows else ())


def diff(old: Any, new: Any, path: Path = ()) -> list[Edit] | None:
    """Edits that turn `old` into `new`, as small as the change: a value set, list items
    removed (what the fixes do); None where the two differ otherwise at the root."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        out: list[Edit] = []
        for k in old:
            found = diff(old[k], new[k], (*path, k))
            if found is None:
                return None
            out += found
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) == len(new):
            out = []
            for i, (a, b) in enumerate(zip(old, new)):
                found = diff(a, b, (*path, i))
                if found is None:
                    return None
                out += found
            return out
        gone = _removed(old, new)
        if gone is not None:
            return remove(path, gone, len(old))
    return [SetValue(path, new)] if path else None


def _removed(old: list[Any], new: list[Any]) -> list[int] | None:
    """The indices whose removal from `old` leaves `new`; None when it is not so."""
    gone: list[int] = []
    j = 0
    for i, item in enumerate(old):
        if j < len(new) and new[j] == item:
            j += 1
        else:
            gone.append(i)
    return gone if j == len(new) else None


def _opencode_rows(old: Any, new: Any) -> list[RowFix] | None:
    """`{id, sessionID, info, parts}`: `info` is the message row's `data`, each part (less
    the `id` the reader adds) its part row's."""
    if not (isinstance(old, dict) and isinstance(new, dict)) or old.keys() != new.keys():
        return None
    if any(old[k] != new[k] for k in old if k not in ("info", "parts")):
        return None
    out = _row("message", old.get("id"), "data", old.get("info"), new.get("info"))
    before, after = old.get("parts"), new.get("parts")
    if out is None or not (isinstance(before, list) and isinstance(after, list)):
        return None
    if len(before) != len(after):
        return None
    for part, changed in zip(before, after):
        if not (isinstance(part, dict) and isinstance(changed, dict)):
            return None
        if part.get("id") != changed.get("id"):
            return None
        bare = {k: v for k, v in part.items() if k != "id"}
        found = _row(
            "part", part.get("id"), "data", bare, {k: v for k, v in changed.items() if k != "id"}
        )
        if found is None:
            return None
        out.extend(found)
    return out


def _goose_rows(old: Any, new: Any) -> list[RowFix] | None:
    """A message row: `content` is its `content_json` (every other key is read-only)."""
    if not (isinstance(old, dict) and isinstance(new, dict)) or old.keys() != new.keys():
        return None
    if any(old[k] != new[k] for k in old if k != "content"):
        return None
    return _row("messages", old.get("id"), "content_json", old.get("content"), new.get("content"))


def _row(table: str, key: Any, column: str, old: Any, new: Any) -> list[RowFix] | None:
    if old == new:
        return []
    edits = diff(old, new)
    if edits is None or not isinstance(key, (str, int)):
        return None
    return [RowFix(table, (("id", key),), column, old, tuple(edits))]


_ROWS: dict[str, Callable[[Any, Any], list[RowFix] | None]] = {
    "opencode": _opencode_rows,
    "kilo": _opencode_rows,
    "goose": _goose_rows,
}


CRUSH_CANCELLED = "Error: user cancelled assistant tool calling"
_CRUSH_NAMESPACE = uuid.UUID("6c7a1f3e-2b4d-5e8f-9a0b-1c2d3e4f5a6b")


def crush_inserts(
    records: Sequence[Record], findings: Iterable[Finding]
) -> tuple[tuple[RowInsert, ...], tuple[Fixed, ...]]:
    """The `tool` message Crush itself writes for a call an interrupt left without a result
    (charmbracelet/crush `internal/agent/agent.go`, `sessionAgent.Run`): a `tool_result`
    part "Error: user cancelled assistant tool calling", `is_error` true, then the `finish`
    part "stop" that `messages.Create` (`internal/message/message.go`) adds to every message
    not the assistant's; `model` '' and `provider` NULL as `Create` writes them for a tool
    message. Its id is a uuid5 of the session and call (a second run plans the same row), its
    time one second after the calling message's (no later than the session's next message),
    and `sessions.message_count` goes up by one as Crush's insert trigger does. A result with
    no call is left: Crush drops it when it builds the prompt (`filterOrphanedToolResults`)."""
    inserts: list[RowInsert] = []
    fixed: list[Fixed] = []
    seen: set[tuple[str, str]] = set()
    for finding in sorted(findings, key=lambda f: f.record_index):
        index, call_id = finding.record_index, finding.detail
        if problem_of(finding) != CALL_WITHOUT_RESULT or not call_id:
            continue
        data = records[index].data
        if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
            continue
        session, created = data.get("sessionID"), data.get("createdAt")
        name = _crush_call_name(data["parts"], call_id)
        if not isinstance(session, str) or not isinstance(created, int) or name is None:
            continue
        if (session, call_id) in seen:
            continue
        seen.add((session, call_id))
        at = created + 1
        later = records[index + 1].data if index + 1 < len(records) else None
        if isinstance(later, dict) and later.get("sessionID") == session:
            after = later.get("createdAt")
            if isinstance(after, int) and after < at:
                at = max(created, after)
        result = {
            "tool_call_id": call_id,
            "name": name,
            "content": CRUSH_CANCELLED,
            "data": "",
            "mime_type": "",
            "metadata": "",
            "is_error": True,
        }
        parts = [
            {"type": "tool_result", "data": result},
            {"type": "finish", "data": {"reason": "stop", "time": 0}},
        ]
        row: tuple[tuple[str, Value], ...] = (
            ("id", str(uuid.uuid5(_CRUSH_NAMESPACE, f"{session}/{call_id}"))),
            ("session_id", session),
            ("role", "tool"),
            ("parts", go_json(parts)),
            ("model", ""),
            ("provider", None),
            ("is_summary_message", 0),
            ("created_at", at),
            ("updated_at", at),
        )
        inserts.append(RowInsert("messages", row, "sessions", session, "message_count"))
        line = records[index].line
        what = f"{call_id}: Crush's cancelled tool message added"
        fixed.append(Fixed(Fix.TOOL_PAIRS, CALL_WITHOUT_RESULT, line, what))
    return tuple(inserts), tuple(fixed)


def _crush_call_name(parts: list[Any], call_id: str) -> str | None:
    """The tool's name on the `tool_call` part of `call_id` (Crush copies it: `tc.Name`)."""
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "tool_call":
            data = part.get("data")
            if isinstance(data, dict) and data.get("id") == call_id:
                name = data.get("name")
                return name if isinstance(name, str) else ""
    return None


_INSERTS: dict[
    str,
    Callable[
        [Sequence[Record], Iterable[Finding]], tuple[tuple[RowInsert, ...], tuple[Fixed, ...]]
    ],
] = {"crush": crush_inserts}


def inserted_formats() -> frozenset[str]:
    """The stores whose open calls the fix answers with a new row."""
    return frozenset(_INSERTS)
