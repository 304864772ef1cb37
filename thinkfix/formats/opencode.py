"""OpenCode (sst/opencode, now anomalyco/opencode) sessions, in both of its stores.

Older builds keep one JSON file per object under
`$XDG_DATA_HOME/opencode/storage/` (`session/<projectID>/ses_*.json`,
`message/<sessionID>/msg_*.json`, `part/<messageID>/prt_*.json`); newer ones keep
the same objects in SQLite, `$XDG_DATA_HOME/opencode/opencode.db`, tables
`message` and `part` (`id`, `message_id`, `session_id`, `time_created`,
`time_updated`, `data` JSON without the ids; `session.sql.ts`). A message's parts
are read in `part.id` order (`MessageV2.parts`: `.orderBy(PartTable.id)`), and
its `text` parts are what the user saw; `reasoning` parts hold native reasoning.

In the file store the role lives in the message file, not in the part: a text
part is read with its message's `role` and `modelID`, looked up beside it. In
SQLite one record is one assistant message with its parts, in id order.

The SQLite store is read through `sqlite_store.snapshot`, which leaves its folder as it was
(OpenCode keeps it in WAL mode, `Database.Client` in `storage/db.ts`, so its newest rows are
in `opencode.db-wal` while it runs) and reports a store locked exclusively as in use.

Placement: a new `reasoning` part whose id sorts right before the text part
(`engine/ledger/rows.py` writes it, through `RowChanges` so undo puts back exactly these rows,
in one transaction after an online backup). In the file store a new part would be a new
file, so the reasoning stays in the repair manifest.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path as FsPath
from typing import Any, BinaryIO

import orjson

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str
from thinkfix.formats.detection import sample
from thinkfix.formats.opencode_items import (
    TABLES,
    database_messages,
    is_kilo_store_name,
    is_store_name,
    loads,
    part_reasoning,
    part_slots,
    read_json,
    storage_kind,
)
from thinkfix.formats.reader import read_auto
from thinkfix.formats.records import Context, Record
from thinkfix.formats.repairs import Placement, PlacementKind, Repair, TextSlot
from thinkfix.formats.sqlite_format import StoreOnly, refuse_emptied, store_confidence
from thinkfix.formats.sqlite_store import MAGIC as SQLITE_MAGIC
from thinkfix.formats.sqlite_store import (
    RowChanges,
    snapshot,
)
from thinkfix.formats.turn_shapes import args_text, iso, output_text
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import UnexpectedShape, text_value


#: Tables (and their columns) OpenCode's SQLite store has; anything else is not ours.
class OpenCode(StoreOnly, FormatBase):
    id = "opencode"
    description = (
        "OpenCode sessions: the SQLite store opencode.db (tables message, part) and "
        "the older file store storage/{session,message,part}/*.json"
    )
    detection = (
        "a SQLite file with OpenCode's message and part tables, or a JSON object with "
        "ses_/msg_/prt_ ids (a part's text is read with the role of its message file)"
    )
    placement = (
        "SQLite: a new reasoning part whose id sorts right before the text part, in "
        "one transaction per session after an online backup; file store: the repair "
        "manifest (a new part would be a new file)"
    )
    locations_source = (
        "$XDG_DATA_HOME/opencode (else ~/.local/share/opencode): opencode.db "
        "and storage/ (packages/opencode/src/global/index.ts, Global.Path.data; "
        "session/session.sql.ts; storage/storage.ts)"
    )
    shapes = (dict,)
    manifest_only = "in the file store a new reasoning part would be a new file"
    #: A part file holds no role (its message file does); every record with text has this.
    assistant_marker = b'"text"'

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        data = FsPath(env.get("XDG_DATA_HOME", "").strip() or home / ".local" / "share")
        root = data / "opencode"
        return [root / "opencode.db", root / "storage"]

    def detect(self, head: bytes, path: str = "") -> float:
        found = store_confidence(head, path, TABLES, is_store_name)
        if found is not None:
            return found
        s = sample(head)
        return 0.95 if storage_kind(s.doc) is not None else 0.0

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        head = fp.read(len(SQLITE_MAGIC))
        if head == SQLITE_MAGIC:
            yield from self._read_database(fp)
            return
        name = getattr(fp, "name", "")
        for record in read_auto(
            io.BytesIO(head + fp.read()), shapes=self.shapes, doc_shapes=self.shapes
        ):
            doc = record.obj
            if record.error is None and storage_kind(doc) is None:
                # read by its place (or --format): no object OpenCode writes, never clean
                record = _refused(record, doc, self.shapes, STRANGER)
            elif doc is not None and storage_kind(doc) == "part":
                record.ctx = self._part_context(name, doc)
                if (
                    doc.get("type") == "text"
                    and not doc.get("synthetic")
                    and record.ctx.extra.get("role") is None
                ):
                    error = (
                        f"no message file for {doc.get('messageID')} beside "
                        "this part: its role (user or assistant) is unknown"
                    )
                    record = _refused(record, doc, self.shapes, error)
            yield record

    def _read_database(self, fp: BinaryIO) -> Iterator[Record]:
        path = getattr(fp, "name", None)
        if not isinstance(path, str) or not os.path.isfile(path):
            raise ValueError("OpenCode's SQLite store is read from the file on disk, not a stream")
        with snapshot(path) as db:
            for n, message in enumerate(database_messages(db)):
                raw = orjson.dumps(message)
                # a row whose data is not JSON reads as nothing (a part as its id alone): its
                # text is lost to the record, so no leak could be seen in it; never clean
                lost = [p["id"] for p in message["parts"] if set(p) == {"id"}]
                if message["info"] is None or lost:
                    rows = ", ".join(map(str, lost)) or f"message {message['id']}"
                    error = f"unknown shape: the data of {rows} is not JSON"
                    yield Record(
                        n, n + 1, raw, b"\n", shapes=self.shapes, data=message, error=error
                    )
                    continue
                yield Record(n, n + 1, raw, b"\n", shapes=self.shapes)

    @staticmethod
    def _part_context(path: str, part: dict[str, Any]) -> Context:
        """What a part's text is judged with: its message's role and model (from
        `storage/message/<session>/<message>.json`) and the message's reasoning parts
        (its siblings in `storage/part/<message>/`), the native reasoning of rule 9."""
        folder = os.path.dirname(os.path.abspath(path))
        storage = os.path.dirname(os.path.dirname(folder))
        session, message = part.get("sessionID"), part.get("messageID")
        info = read_json(os.path.join(storage, "message", str(session), f"{message}.json"))
        if not isinstance(info, dict):
            return Context(session_id=as_str(session), extra={"role": None})
        reasoning = []
        if info.get("role") == "assistant" and part.get("type") == "text":
            names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
            reasoning = [read_json(os.path.join(folder, n)) for n in names]
        return Context(
            session_id=as_str(session),
            model=as_str(info.get("modelID")),
            extra={"role": info.get("role"), "native": part_reasoning(reasoning)},
        )

    def apply_database(self, db: Any, repairs: list[Repair]) -> list[Placement]:
        return apply_database(db, repairs)

    def messages(self, record: Record) -> Iterator[Message]:
        doc = record.obj
        if doc is None:
            return
        if "info" in doc and "parts" in doc:  # a SQLite message with its parts
            info = doc["info"]
            if not isinstance(info, dict):  # its data is not JSON: its role is unknown
                raise UnexpectedShape(("info",), info, "the message's data, a JSON object")
            if info.get("role") != "assistant":
                return
            yield Message(
                (),
                record.index,
                partial(part_slots, doc["parts"], ("parts",)),
                native=partial(part_reasoning, doc["parts"]),
                message_id=as_str(doc.get("id")),
                model=as_str(info.get("modelID")),
                session_id=as_str(doc.get("sessionID")),
            )
            return
        if (
            storage_kind(doc) == "part"
            and doc.get("type") == "text"
            and record.ctx.extra.get("role") == "assistant"
            and text_value(doc.get("text"), ("text",)) is not None
            and not doc.get("synthetic")
        ):
            yield Message(
                (),
                0,
                [TextSlot(("text",), doc["text"])],
                native=record.ctx.extra.get("native"),
                message_id=as_str(doc.get("messageID")),
                model=record.ctx.model,
                session_id=as_str(doc.get("sessionID")),
            )

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- repair of the SQLite store ------------------------------------------------------------
# The engine owns the transaction, the backup and the manifest; this is where OpenCode's rows
# change: the text part gets its visible text, and a new reasoning part, whose id sorts right
# before it, takes the extracted reasoning (MessageV2.parts orders a message's parts by id).

_ID_TAIL = 14  # Identifier.ascending: 12 hex digits of time and counter, then 14 random chars


def id_before(text_id: str, previous: str | None) -> str | None:
    """A part id that sorts after `previous` and before `text_id`, in OpenCode's id shape.

    The time part is taken one step back and the random tail set to its highest value,
    so the new id sorts just before the text part; None when no such id exists (the
    caller then refuses rather than reorder the message).
    """
    prefix, _, rest = text_id.partition("_")
    head = rest[:-_ID_TAIL] if len(rest) > _ID_TAIL else ""
    try:
        stamp = int(head, 16)
    except ValueError:
        stamp = 0
    if head and stamp > 0:
        candidate = f"{prefix}_{stamp - 1:0{len(head)}x}{'z' * _ID_TAIL}"
    else:
        candidate = (previous or text_id[:-1]) + "0"
    if candidate < text_id and (previous is None or candidate > previous):
        return candidate
    return None


def apply_database(db: RowChanges, repairs: list[Repair]) -> list[Placement]:
    """Apply repairs to an open store inside the caller's transaction; one Placement each.
    Every row edit goes through `db` (a `RowChanges`), which records it for undo.

    A part whose text is no longer the one the repair was planned on is left alone
    (SKIPPED); a text that would become empty is dropped when its message shows something
    else, else the message is REFUSED, as in every format.
    """
    placements: list[Placement | None] = [None] * len(repairs)
    # Last part first: a part inserted before (or a text deleted at) one index never moves
    # the parts before it, so every later repair still finds its part where it was read.
    for k in sorted(range(len(repairs)), key=lambda k: _part_index(repairs[k]), reverse=True):
        placements[k] = _apply_one(db, repairs[k])
    return [p for p in placements if p is not None]


def _part_index(repair: Repair) -> int:
    """Where in its message's parts (as read) the repair's text part stands; -1 if unknown."""
    path = repair.site.path
    return path[1] if len(path) == 3 and path[0] == "parts" and isinstance(path[1], int) else -1


def _apply_one(db: RowChanges, repair: Repair) -> Placement:
    site = repair.site
    index = _part_index(repair)
    rows = db.execute(
        "SELECT id, session_id, time_created, time_updated, data FROM part "
        "WHERE message_id = ? ORDER BY id",
        (site.message_id,),
    ).fetchall()
    if not 0 <= index < len(rows):
        return Placement(
            site,
            PlacementKind.SKIPPED,
            "part not found",
            applied=False,
            reason="the message's parts changed since they were read",
        )
    part_id, session_id, created, updated, raw = rows[index]
    data = loads(raw)
    if not isinstance(data, dict) or data.get("text") != site.text:
        return Placement(
            site,
            PlacementKind.SKIPPED,
            "part changed",
            applied=False,
            reason="the part's text changed since it was read",
        )
    segments = tuple(s for s in repair.thinking if s.strip())
    emptied = not repair.visible.strip()
    others = [r for k, r in enumerate(rows) if k != index and _shows(loads(r[4]))]
    if emptied and not others:
        return refuse_emptied(site, "an empty text part would break the session")
    where = f"part {part_id}"
    if segments:
        previous = rows[index - 1][0] if index > 0 else None
        new_id = id_before(part_id, previous)
        if new_id is None:
            return Placement(
                site,
                PlacementKind.SKIPPED,
                "no id before the part",
                applied=False,
                reason="no part id sorts between its neighbours",
            )
        reasoning = {"type": "reasoning", "text": "\n\n".join(segments)}
        if isinstance(data.get("time"), dict):
            reasoning["time"] = data["time"]
        db.insert(
            "part",
            {
                "id": new_id,
                "message_id": site.message_id,
                "session_id": session_id,
                "time_created": created,
                "time_updated": updated,
                "data": _dumps(reasoning),
            },
            key=("id",),
        )
        where = f"a new reasoning part {new_id} before part {part_id}"
    if emptied:
        db.delete("part", {"id": part_id})
    else:
        db.update("part", {"id": part_id}, {"data": _dumps({**data, "text": repair.visible})})
    kind = PlacementKind.RECORD if segments else PlacementKind.NONE
    return Placement(site, kind, where if segments else "no reasoning to place")


def _shows(data: Any) -> bool:
    """Does a part show the user something (a non-empty text, a tool call, a file)?"""
    if not isinstance(data, dict):
        return False
    if data.get("type") == "text":
        return (
            isinstance(data.get("text"), str)
            and bool(data["text"].strip())
            and not data.get("synthetic")
        )
    return data.get("type") in ("tool", "file", "patch", "subtask")


def _dumps(value: Any) -> str:
    """Compact JSON, as OpenCode writes its `data` column."""
    return orjson.dumps(value).decode()


# --- turns: the session as `show` reads it --------------------------------------------------
# `show` takes one file: the SQLite store shows every message of every session in it; a
# file-store part shows that part alone (its role comes from the message file beside it).

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _part(p: Any, path: Path) -> Part | None:
    if not isinstance(p, dict):
        return None
    kind = p.get("type")
    if kind == "text" and isinstance(p.get("text"), str):
        return Part(PartKind.TEXT, p["text"], path=path + ("text",))
    if kind == "reasoning" and isinstance(p.get("text"), str):
        return Part(
            PartKind.THINKING, p["text"], signed=bool(_dict(p.get("metadata")).get("anthropic"))
        )
    if kind == "tool":
        state = _dict(p.get("state"))
        return Part(
            PartKind.TOOL_CALL,
            args_text(state.get("input")),
            name=str(p.get("tool")),
            call_id=as_str(p.get("callID")),
        )
    return None


def _tool_results(parts: list[Any]) -> list[Part]:
    results = []
    for p in parts:
        state = p.get("state") if isinstance(p, dict) and p.get("type") == "tool" else None
        if isinstance(state, dict) and state.get("status") in ("completed", "error"):
            results.append(
                Part(
                    PartKind.TOOL_RESULT,
                    output_text(state.get("output") or state.get("error")),
                    name=str(p.get("tool")),
                    call_id=as_str(p.get("callID")),
                    error=state.get("status") == "error",
                )
            )
    return results


def turns(record: Record) -> Iterator[Turn]:
    """A SQLite message with its parts, or one file-store part (role from beside it)."""
    doc = record.obj
    if doc is None:
        return
    if isinstance(doc.get("info"), dict) and isinstance(doc.get("parts"), list):
        info, raw_parts = doc["info"], doc["parts"]
        role = _ROLES.get(info.get("role"))
        if role is None:
            return
        parts = [p for i, item in enumerate(raw_parts) if (p := _part(item, ("parts", i)))]
        time = _dict(info.get("time"))
        yield Turn(
            role,
            tuple(parts),
            iso(time.get("created")),
            as_str(info.get("modelID")),
            as_str(doc.get("id")),
        )
        results = _tool_results(raw_parts)
        if results:
            yield Turn(Role.TOOL, tuple(results), iso(time.get("completed")))
        return
    if storage_kind(doc) == "part":
        role = _ROLES.get(record.ctx.extra.get("role") or "")
        part = _part(doc, ())
        if role is not None and part is not None:
            time = _dict(doc.get("time"))
            yield Turn(
                role,
                (part,),
                iso(time.get("start")),
                record.ctx.model,
                as_str(doc.get("messageID")),
            )


STRANGER = (
    "not an OpenCode session, message or part: a message has string id and sessionID, a role "
    "user or assistant and a time object; a part string id, sessionID, messageID and type"
)


def _refused(record: Record, doc: Any, shapes: Any, error: str) -> Record:
    """`record` as an error for its file, its object kept."""
    return Record(
        record.index,
        record.line,
        record.raw,
        record.eol,
        ctx=record.ctx,
        shapes=shapes,
        data=doc,
        error=error,
    )


class KiloCli(OpenCode):
    """Kilo CLI (Kilo-Org/kilo), an OpenCode fork: OpenCode's store under Kilo's names, read,
    repaired and placed as OpenCode's (as Kilo Code shares Roo Code's module)."""

    id = "kilo"
    description = (
        "Kilo CLI (an OpenCode fork) sessions: the SQLite store kilo.db "
        "(OpenCode's message and part tables)"
    )
    detection = (
        "as OpenCode, told apart by the store's name (kilo.db, kilo-<channel>.db, or "
        "opencode-<channel>.db in Kilo's data folder kilo/)"
    )
    locations_source = (
        "$KILO_DB (absolute, or relative to the data folder), else "
        "$XDG_DATA_HOME/kilo (else ~/.local/share/kilo): kilo.db, kilo-<channel>.db, "
        "opencode-<channel>.db, and the older storage/ (Kilo-Org/kilo "
        'packages/opencode/src/global/index.ts, app = "kilo")'
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        data = FsPath(env.get("XDG_DATA_HOME", "").strip() or home / ".local" / "share")
        root = data / "kilo"
        named = env.get("KILO_DB", "").strip()
        stores = [root / named] if named else []  # an absolute path replaces root
        stores.append(root / "kilo.db")
        if root.is_dir():  # a channel build's store, by the names it may have
            stores += sorted(
                p for p in root.iterdir() if p.suffix == ".db" and is_kilo_store_name(str(p))
            )
        return [*stores, root / "storage"]

    def detect(self, head: bytes, path: str = "") -> float:
        if not path or not _kilo_path(path):
            return 0.0
        return super().detect(head, path)


def _kilo_path(path: str) -> bool:
    """A Kilo store by name, or a file under Kilo's `kilo/storage` file store."""
    if is_kilo_store_name(path):
        return True
    return "/kilo/storage/" in os.path.abspath(path).replace(os.sep, "/")
