"""Crush (charmbracelet/crush) sessions: the SQLite store `<project>/.crush/crush.db`.

Crush keeps one store per project, in its data folder (`.crush`, `internal/config/load.go`),
made by its goose migrations (`internal/db/migrations/*.sql`): `sessions`, `files`,
`read_files`, and `messages(id, session_id, role, parts, model, created_at, updated_at,
finished_at, provider, is_summary_message)`. It opens the store in WAL mode
(`internal/db/connect.go`, `pragmas`), so its newest rows live in `crush.db-wal` while it
runs; `sqlite_store.snapshot` reads them and leaves the folder as it was.

A message's `parts` column is `[{"type": ..., "data": {...}}]`, written whole with Go's
`json.Marshal` on every update (`internal/message/message.go`, `marshalParts`): types
`reasoning` (`{thinking, signature, thought_signature, tool_id, responses_data}`),
`text` (`{text}`), `image_url`, `binary`, `tool_call`, `tool_result`, `finish` and
`shell_command`. What Crush shows and replays of an assistant message is its first `text`
part and its first `reasoning` part (`Message.Content`, `Message.ReasoningContent`,
`ToAIMessage` in `internal/message/content.go`); streamed reasoning is appended before
the text (`AppendReasoningContent`). One record here is one message, every role.

Placement: the message's reasoning part, as Crush writes it: the extracted reasoning is
appended to its first reasoning part when that carries no signature, else a new unsigned
reasoning part goes right before the repaired text (a signed one is never changed, and
Crush then replays the signed one alone). The whole `parts` value is written again as Go
writes it (compact, `<`, `>`, `&` escaped). `update_messages_updated_at`, the trigger
Crush's first migration puts on `messages`, is its own (`own_triggers`): the engine keeps
it from stamping the repaired message, so undo gives every row back. So are the triggers
that count a message in or out of `sessions.message_count` and stamp a session's
`updated_at`: the `tool-pairs` fix inserts a message and sets the count itself, as they
would (`engine/health/fixes/stores.py`, `crush_inserts`), and undo deletes it and sets the
count back.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path as FsPath
from typing import Any, BinaryIO

import orjson

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str, join_texts, place_elsewhere
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.reader import read_auto
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Placement, PlacementKind, Repair, TextSlot
from thinkfix.formats.sqlite_format import DatabaseStore, refuse_emptied, store_confidence
from thinkfix.formats.sqlite_store import MAGIC as SQLITE_MAGIC
from thinkfix.formats.sqlite_store import (
    RowChanges,
    StoreInUse,
    snapshot,
)
from thinkfix.formats.turn_shapes import args_text, iso
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import UnexpectedShape, parts_list, text_value, typed_parts

#: Tables (and their columns) of Crush's store; anything else is not ours.
_TABLES = {
    "sessions": {"id", "message_count"},
    "messages": {"id", "session_id", "role", "parts", "model", "created_at"},
}
STORE_NAME = "crush.db"


def _is_store_name(path: str) -> bool:
    """Is this Crush's store by its name (`.crush/crush.db`)? Claims a store locked by Crush."""
    return os.path.basename(path) == STORE_NAME


#: The triggers of Crush's migrations a repair's writes would fire, as the migration writes
#: them (internal/db/migrations/20250424200609_initial.sql): an update of `parts` fires this
#: one, which would stamp `updated_at` on the repair and again on its undo.
UPDATED_AT_TRIGGER = """CREATE TRIGGER IF NOT EXISTS update_messages_updated_at
AFTER UPDATE ON messages
BEGIN
UPDATE messages SET updated_at = strftime('%s', 'now')
WHERE id = new.id;
END;"""
SESSION_TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS update_sessions_updated_at
AFTER UPDATE ON sessions
BEGIN
UPDATE sessions SET updated_at = strftime('%s', 'now')
WHERE id = new.id;
END;""",
    """CREATE TRIGGER IF NOT EXISTS update_session_message_count_on_insert
AFTER INSERT ON messages
BEGIN
UPDATE sessions SET
    message_count = message_count + 1
WHERE id = new.session_id;
END;""",
    """CREATE TRIGGER IF NOT EXISTS update_session_message_count_on_delete
AFTER DELETE ON messages
BEGIN
UPDATE sessions SET
    message_count = message_count - 1
WHERE id = old.session_id;
END;""",
)


def _loads(data: Any) -> Any:
    try:
        return orjson.loads(data) if data is not None else None
    except orjson.JSONDecodeError:
        return None


def go_json(value: Any) -> str:
    """JSON as Go's `json.Marshal` writes it: compact, UTF-8, and `<`, `>`, `&`, U+2028 and
    U+2029 escaped (they only occur inside strings, so replacing them is safe)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text


def _data(part: Any, kind: str) -> dict[str, Any] | None:
    """The `data` of a part of this type, None for any other part."""
    if not isinstance(part, dict) or part.get("type") != kind:
        return None
    data = part.get("data")
    return data if isinstance(data, dict) else None


def _signed(reasoning: Mapping[str, Any]) -> bool:
    """Does a reasoning part carry what a provider checks (`ToAIMessage` sends it back)?"""
    return bool(
        reasoning.get("signature")
        or reasoning.get("thought_signature")
        or reasoning.get("responses_data")
    )


#: The part types Crush reads back (`unmarshalParts`, internal/message/message.go): any
#: other type, a part that is no `{type, data}` object, or a text or reasoning part whose
#: text is no string fails Crush's own read, and was skipped here with its leak.
_PART_TYPES = frozenset({"reasoning", "text", "image_url", "binary", "tool_call", "tool_result"})
_PART_TYPES |= {"finish", "shell_command"}
_TEXT_FIELDS = {"text": "text", "reasoning": "thinking"}


def _checked(parts: list[Any]) -> None:
    """Raise `UnexpectedShape` at the first part Crush's `unmarshalParts` would refuse."""
    typed_parts(parts, ("parts",))
    for i, part in enumerate(parts):
        if part["type"] not in _PART_TYPES:
            raise UnexpectedShape(("parts", i, "type"), part["type"], "a part type it knows")
        field = _TEXT_FIELDS.get(part["type"])
        data = part.get("data")
        if field is not None and not isinstance(data, dict):
            raise UnexpectedShape(("parts", i, "data"), data, "an object")
        if field is not None:
            text_value(data.get(field), ("parts", i, "data", field))


def _slots(parts: Any) -> list[TextSlot]:
    """The message's text parts; one with a tool call after it carries rule 4's evidence."""
    parts = parts_list(parts, ("parts",))
    if parts is None:
        return []
    _checked(parts)
    last_call = max(
        (i for i, p in enumerate(parts) if _data(p, "tool_call") is not None), default=-1
    )
    found = []
    for i, part in enumerate(parts):
        data = _data(part, "text")
        if data is not None and isinstance(data.get("text"), str):
            found.append(
                TextSlot(("parts", i, "data", "text"), data["text"], tool_after=i < last_call)
            )
    return found


def _native(parts: Any) -> str | None:
    if not isinstance(parts, list):
        return None
    return join_texts(d.get("thinking") for p in parts if (d := _data(p, "reasoning")) is not None)


def database_messages(db: Any) -> Iterator[dict[str, Any]]:
    """Every message of the store, as Crush lists a session's (`ListMessagesBySession`:
    by `created_at`; rowid breaks ties), one JSON object each."""
    rows = db.execute(
        "SELECT id, session_id, role, parts, model, provider, created_at, is_summary_message "
        "FROM messages ORDER BY session_id, created_at, rowid"
    )
    for mid, session, role, parts, model, provider, created, summary in rows:
        yield {
            "role": role,
            "id": mid,
            "sessionID": session,
            "model": model,
            "provider": provider,
            "createdAt": created,
            "summary": bool(summary),
            "parts": _loads(parts),
        }


class Crush(DatabaseStore, FormatBase):
    id = "crush"
    description = "Crush sessions: the SQLite store .crush/crush.db (table messages, parts JSON)"
    detection = "a SQLite file with Crush's sessions and messages(role, parts) tables"
    placement = (
        "the message's first reasoning part when unsigned, else a new unsigned reasoning "
        "part right before the text; one transaction per store after an online backup"
    )
    locations_source = (
        "<project>/.crush/crush.db for every project in projects.json, in $CRUSH_GLOBAL_DATA, "
        "else $XDG_DATA_HOME/crush, else ~/.local/share/crush (internal/projects/projects.go; "
        "internal/config/load.go GlobalConfigData; internal/db/connect.go)"
    )
    shapes = (dict,)
    assistant_marker = b'"role":"assistant"'
    #: Crush's own triggers, which the engine keeps from firing (`engine/ledger/rows.py`).
    own_triggers = (UPDATED_AT_TRIGGER, *SESSION_TRIGGERS)

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        """Each project's store that Crush's projects.json lists (`Project.DataDir`)."""
        data = env.get("CRUSH_GLOBAL_DATA", "").strip()
        if data:
            root = FsPath(data)
        else:
            xdg = env.get("XDG_DATA_HOME", "").strip()
            root = FsPath(xdg) / "crush" if xdg else home / ".local" / "share" / "crush"
        listed = _loads(_read(root / "projects.json"))
        projects = listed.get("projects") if isinstance(listed, dict) else None
        stores = []
        for project in projects if isinstance(projects, list) else []:
            if not isinstance(project, dict) or not isinstance(project.get("data_dir"), str):
                continue
            folder = FsPath(project["data_dir"])
            if not folder.is_absolute() and isinstance(project.get("path"), str):
                folder = FsPath(project["path"]) / folder
            stores.append(folder / STORE_NAME)
        return stores

    def detect(self, head: bytes, path: str = "") -> float:
        return store_confidence(head, path, _TABLES, _is_store_name) or 0.0

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        path = getattr(fp, "name", None)
        head = fp.read(len(SQLITE_MAGIC))
        if head != SQLITE_MAGIC:  # not a store: read as records like any file, claimed by none
            yield from read_auto(io.BytesIO(head + fp.read()), shapes=self.shapes)
            return
        if not isinstance(path, str) or not os.path.isfile(path):
            raise ValueError("Crush's store is read from the file on disk, not a stream")
        with snapshot(path) as db:
            for n, message in enumerate(database_messages(db)):
                error = None
                if not isinstance(message["parts"], list):
                    error = f"message {message['id']}: its parts are not a JSON array"
                yield Record(
                    n, n + 1, orjson.dumps(message), b"\n", shapes=self.shapes, error=error
                )

    def apply_database(self, db: Any, repairs: list[Repair]) -> list[Placement]:
        return apply_database(db, repairs)

    def messages(self, record: Record) -> Iterator[Message]:
        doc = record.obj
        if doc is None or doc.get("role") != "assistant":
            return
        yield Message(
            (),
            record.index,
            partial(_slots, doc.get("parts")),
            native=partial(_native, doc.get("parts")),
            message_id=as_str(doc.get("id")),
            model=as_str(doc.get("model")),
            session_id=as_str(doc.get("sessionID")),
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        place_elsewhere(draft, PlacementKind.MANIFEST, "repair manifest only (not the store)")

    def turns(self, record: Record) -> Iterator[Turn]:
        return turns(record)


def _read(path: FsPath) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


# --- repair of the store --------------------------------------------------------------------
# The engine owns the transaction, the backup and the manifest; here a message's `parts`
# change: each repaired text part gets its visible text and the reasoning goes where Crush
# keeps it, in one UPDATE of the message row.


def apply_database(db: RowChanges, repairs: list[Repair]) -> list[Placement]:
    """Apply repairs inside the caller's transaction, one UPDATE per message; one Placement
    each, in the order given. StoreInUse when a Crush process holds its data folder's
    `crush.lock` (its server does: `internal/db/datadirlock.go`)."""
    _refuse_when_locked(db)
    placements: dict[int, Placement] = {}
    by_message: dict[str, list[int]] = {}
    for k, repair in enumerate(repairs):
        by_message.setdefault(repair.site.message_id or "", []).append(k)
    for message_id, ks in by_message.items():
        placements.update(_apply_message(db, message_id, [(k, repairs[k]) for k in ks]))
    return [placements[k] for k in range(len(repairs))]


def _refuse_when_locked(db: RowChanges) -> None:
    """A running Crush server holds an exclusive flock on `crush.lock` beside the store and
    writes whole `parts` values from memory: left alone, "in use". An in-memory copy (a dry
    run) has no folder to ask."""
    row = db.execute("PRAGMA database_list").fetchone()
    store = row[2] if row is not None else ""
    if not store:
        return
    lock = os.path.join(os.path.dirname(store), "crush.lock")
    if _flocked(lock):
        raise StoreInUse(store, "a Crush process holds crush.lock beside it")


def _flocked(path: str) -> bool:
    """Does another process hold an exclusive flock on `path`? Asked with a shared,
    non-blocking flock, let go at once; False when the file is not there."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: Crush locks with LockFileEx there
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _skip(repair: Repair, what: str, why: str) -> Placement:
    return Placement(repair.site, PlacementKind.SKIPPED, what, applied=False, reason=why)


def _shows(part: Any) -> bool:
    """Does a part show the user something (a non-empty text, a tool call, an image)?"""
    text = _data(part, "text")
    if text is not None:
        return isinstance(text.get("text"), str) and bool(text["text"].strip())
    return isinstance(part, dict) and part.get("type") in ("tool_call", "image_url", "binary")


def _apply_message(
    db: RowChanges, message_id: str, repairs: list[tuple[int, Repair]]
) -> dict[int, Placement]:
    row = db.execute("SELECT parts FROM messages WHERE id = ?", (message_id,)).fetchone()
    parts = _loads(row[0]) if row is not None else None
    if not isinstance(parts, list):
        return {
            k: _skip(r, "message not found", "the message changed since it was read")
            for k, r in repairs
        }
    out: dict[int, Placement] = {}
    done: list[tuple[int, int, Repair]] = []  # (part index, k, repair), to change
    for k, repair in repairs:
        path = repair.site.path
        index = path[1] if len(path) == 4 and isinstance(path[1], int) else -1
        data = _data(parts[index], "text") if 0 <= index < len(parts) else None
        if data is None or data.get("text") != repair.site.text:
            out[k] = _skip(repair, "part changed", "the text part changed since it was read")
            continue
        done.append((index, k, repair))
    emptied = {i for i, _, r in done if not r.visible.strip()}
    shown = [i for i, p in enumerate(parts) if i not in emptied and _shows(p)]
    for i, k, repair in list(done):
        if i in emptied and not shown:
            out[k] = refuse_emptied(repair.site, "an empty text part would break the session")
            done.remove((i, k, repair))
            emptied.discard(i)
    if not done:
        return out
    segments = [s for _, _, r in sorted(done) for s in r.thinking if s.strip()]
    first = min(i for i, _, _ in done)
    where, shift = _place(parts, first, "\n\n".join(segments)) if segments else ("", 0)
    for i, _, repair in sorted(done, reverse=True):  # last first: no index moves under us
        if i in emptied:
            del parts[i + shift]
        else:
            parts[i + shift]["data"]["text"] = repair.visible
    db.update("messages", {"id": message_id}, {"parts": go_json(parts)})
    for _, k, repair in done:
        own = [s for s in repair.thinking if s.strip()]
        kind = PlacementKind.BLOCK if own else PlacementKind.NONE
        out[k] = Placement(repair.site, kind, where if own else "no reasoning to place")
    return out


def _place(parts: list[Any], first: int, thinking: str) -> tuple[str, int]:
    """Put `thinking` where Crush keeps a message's reasoning: appended to the first
    reasoning part when it is unsigned, else a new reasoning part right before the first
    repaired text part (index `first`), shaped as Go marshals `ReasoningContent`. Where it
    went, and by how much the parts from `first` on moved."""
    for i, part in enumerate(parts):
        data = _data(part, "reasoning")
        if data is None:
            continue
        if _signed(data):
            break  # Crush replays only this one: never change what a provider signed
        before = as_str(data.get("thinking")) or ""
        data["thinking"] = f"{before}\n\n{thinking}" if before.strip() else thinking
        return f"the message's reasoning part (parts[{i}])", 0
    parts.insert(
        first,
        {
            "type": "reasoning",
            "data": {
                "thinking": thinking,
                "signature": "",
                "thought_signature": "",
                "tool_id": "",
                "responses_data": None,
            },
        },
    )
    return f"a new reasoning part before the text (parts[{first}])", 1


# --- turns: the session as `show` reads it --------------------------------------------------

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM, "tool": Role.TOOL}


def _part(p: Any, i: int) -> Part | None:
    if (d := _data(p, "text")) is not None and isinstance(d.get("text"), str):
        return Part(PartKind.TEXT, d["text"], path=("parts", i, "data", "text"))
    if (d := _data(p, "reasoning")) is not None and isinstance(d.get("thinking"), str):
        return Part(PartKind.THINKING, d["thinking"], signed=_signed(d))
    if (d := _data(p, "tool_call")) is not None:
        return Part(
            PartKind.TOOL_CALL,
            args_text(d.get("input")),
            name=str(d.get("name")),
            call_id=as_str(d.get("id")),
        )
    if (d := _data(p, "tool_result")) is not None:
        return Part(
            PartKind.TOOL_RESULT,
            str(d.get("content") or ""),
            name=str(d.get("name")),
            call_id=as_str(d.get("tool_call_id")),
            error=bool(d.get("is_error")),
        )
    return None


def _millis(stamp: Any) -> int | None:
    """Crush stamps rows in seconds (`strftime('%s', 'now')`, internal/db/sql/messages.sql)
    though its schema's comment says milliseconds: either is read."""
    if not isinstance(stamp, int) or isinstance(stamp, bool):
        return None
    return stamp * 1000 if stamp < 10**11 else stamp


def turns(record: Record) -> Iterator[Turn]:
    """One message: its text, reasoning, tool calls (assistant) or results (tool)."""
    doc = record.obj
    if doc is None or not isinstance(doc.get("parts"), list):
        return
    role = _ROLES.get(str(doc.get("role")))
    if role is None:
        return
    parts = tuple(p for i, item in enumerate(doc["parts"]) if (p := _part(item, i)))
    created = doc.get("createdAt")
    yield Turn(
        role,
        parts,
        iso(_millis(created)),
        as_str(doc.get("model")),
        as_str(doc.get("id")),
    )
