"""Goose (block/goose, now aaif-goose/goose) sessions: the SQLite store and the legacy JSONL.

Since 1.10 Goose keeps every session in one SQLite file, `<data>/sessions/sessions.db`
(`crates/goose/src/session/session_manager.rs`, `SessionStorage::create_schema`): table
`sessions` (id, working_dir, provider_name, model_config_json, ...) and table
`messages(id INTEGER PRIMARY KEY, message_id, session_id, role, content_json,
created_timestamp, timestamp, tokens, metadata_json)`. `content_json` is
`serde_json::to_string(&message.content)`: a list of `MessageContent` items tagged by
`type` (`conversation/message.rs`): `text`, `thinking` {thinking, signature},
`redactedThinking`, `toolRequest`, `toolResponse`, ... A session is read back
`ORDER BY created_timestamp, id` (`get_conversation`). Before 1.10 each session was a file
`<data>/sessions/<id>.jsonl`: a metadata line (working_dir, description, message_count,
token counts), then one serialized `Message` {id, role, created, content, metadata} a line
(`session/legacy.rs`, `read_messages`); 1.10 imports them once into the store and leaves them.

One format reads both (as OpenCode's reader reads its two stores): the message shapes are
the same, only the container differs, and `--format goose` means the runtime.

The store is read through `sqlite_store.snapshot` (traceless, `-wal` rows included; Goose
keeps it in WAL mode, `SessionStorage::create_pool`). Each message row is one record.

Placement: a `thinking` item holding the reasoning, right before the text item, in the same
message (the store: one UPDATE of that row's `content_json`, through `RowChanges`; the
JSONL: the same item spliced into the line). `ThinkingContent.signature` is a required
string, so the item carries `"signature": ""` (no signature: one absent would make the
whole message fail to deserialize). The agent does send thinking items to the provider
(`Message::agent_visible_content` keeps `Thinking` for `Role::Assistant`,
`MessageContent::filter_for_audience`), and the Anthropic formatter
(`providers/formats/anthropic.rs` `format_messages_with_options`) sends one only with its
signature: an unsigned item is dropped, or sent as a signature-less block only where the
model is configured with `preserve_unsigned_thinking` (Anthropic-compatible hosts that take
it). The update writes only `content_json`; Goose's counter triggers (`session/counter_triggers.rs`) fire on
INSERT, DELETE and `UPDATE OF metadata_json, created_timestamp`, so none fires.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from thinkfix.formats import jsonedit, jsonspans
from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str
from thinkfix.formats.detection import sample, share
from thinkfix.formats.locations import LINUX, WINDOWS, config_root, data_root, this_system
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.reader import bounded_lines, iter_jsonl
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Placement, PlacementKind, Repair, UnsafeEdit
from thinkfix.formats.sqlite_format import DatabaseStore, refuse_emptied, store_confidence
from thinkfix.formats.sqlite_store import MAGIC as SQLITE_MAGIC
from thinkfix.formats.sqlite_store import (
    RowChanges,
    snapshot,
)
from thinkfix.formats.turn_shapes import args_text, output_text
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import UnexpectedShape

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up
from thinkfix.formats.goose_items import (
    CALLS,
    MS_THRESHOLD,
    TABLES,
    database_messages,
    goose_items,
    is_message,
    is_metadata,
    is_store_path,
    loads,
    reasoning_of,
    shows_of,
    slots,
    thinking_item,
)


#: Tables (and columns) every Goose store has had since 1.10; a store is Goose's by these.
class Goose(DatabaseStore, FormatBase):
    id = "goose"
    description = (
        "Goose sessions: the SQLite store sessions/sessions.db (1.10+, tables sessions and "
        "messages with content_json) and the older sessions/<id>.jsonl files"
    )
    detection = (
        "a SQLite file with Goose's sessions and messages(content_json) tables (never by its "
        "name, sessions.db, alone), or JSONL whose first line is Goose's session metadata "
        "(description, message_count) or whose lines are Goose messages (role, created, "
        "items tagged toolRequest/toolResponse or userVisible metadata)"
    )
    placement = (
        'a thinking item ({"type": "thinking", "thinking", "signature": ""}) right before '
        "the text item, in the same message: one UPDATE of the row's content_json in the "
        "store (after an online backup), a splice in a legacy line; Goose strips thinking "
        "before every provider call, so the unsigned item is never replayed"
    )
    locations_source = (
        "$GOOSE_PATH_ROOT/data/sessions (an absolute path), else $XDG_DATA_HOME/goose/sessions "
        "(else ~/.local/share/goose/sessions) on Linux and macOS, "
        "%APPDATA%\\Block\\goose\\data\\sessions on Windows: sessions.db and the legacy "
        "<id>.jsonl (config/paths.rs Paths::data_dir, etcetera choose_app_strategy; "
        "session/session_manager.rs SESSIONS_FOLDER, DB_NAME)"
    )
    shapes = (dict,)

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        from pathlib import Path as FsPath

        root = env.get("GOOSE_PATH_ROOT", "").strip()
        folders = []
        if root and os.path.isabs(root):
            folders.append(FsPath(root) / "data" / "sessions")
        if this_system() == WINDOWS:  # etcetera's Windows strategy: the roaming %APPDATA%
            appdata = config_root(env, home, WINDOWS)
            folders.append(appdata / "Block" / "goose" / "data" / "sessions")
        else:  # its Xdg strategy, on macOS too
            folders.append(data_root(env, home, LINUX) / "goose" / "sessions")
        return [p for folder in folders for p in (folder / "sessions.db", folder)]

    def detect(self, head: bytes, path: str = "") -> float:
        found = store_confidence(head, path, TABLES, is_store_path)
        if found is not None:
            return found
        s = sample(head)
        objects = s.objects
        if not objects:
            return 0.0
        if is_metadata(objects[0]) and (len(objects) == 1 or is_message(objects[1])):
            return 0.95
        messages = [o for o in objects if is_message(o)]
        if messages and share(objects, is_message) >= 0.8 and any(map(goose_items, messages)):
            return 0.95
        return 0.0

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        head = fp.read(len(SQLITE_MAGIC))
        if head == SQLITE_MAGIC:
            yield from self._read_database(fp)
            return
        yield from iter_jsonl(bounded_lines(io.BytesIO(head + fp.read())), shapes=self.shapes)

    def _read_database(self, fp: BinaryIO) -> Iterator[Record]:
        path = getattr(fp, "name", None)
        if not isinstance(path, str) or not os.path.isfile(path):
            raise ValueError("Goose's SQLite store is read from the file on disk, not a stream")
        with snapshot(path) as db:
            for n, (doc, error) in enumerate(database_messages(db)):
                raw = orjson.dumps(doc)
                if error is None:
                    yield Record(n, n + 1, raw, b"\n", shapes=self.shapes)
                else:
                    yield Record(n, n + 1, raw, b"\n", shapes=self.shapes, data=doc, error=error)

    def apply_database(self, db: Any, repairs: list[Repair]) -> list[Placement]:
        return apply_database(db, repairs)

    def messages(self, record: Record) -> Iterator[Message]:
        o = record.obj
        if o is not None and not is_metadata(o) and o.get("role") not in ("user", "assistant"):
            # a message's role is rmcp's Role (user or assistant): anything else was skipped
            # with its leak
            raise UnexpectedShape(("role",), o.get("role"), '"user" or "assistant"')
        if o is None or o.get("role") != "assistant" or not isinstance(o.get("content"), list):
            return
        yield Message(
            (),
            record.index,
            partial(slots, o["content"], ("content",)),
            native=partial(reasoning_of, o["content"]),
            message_id=None if o.get("id") is None else str(o["id"]),
            model=as_str(o.get("model")),
            session_id=as_str(o.get("session_id")),
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        """A legacy line: the thinking item spliced in right before the text item."""
        self.place_blocks(
            draft,
            [thinking_item(draft.segments)] if draft.segments else [],
            "a thinking item (unsigned; Goose strips thinking before calling a model)",
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- repair of the SQLite store --------------------------------------------------------------
# The engine owns the transaction, the backup and the manifest; here a message row's
# content_json gets its visible text and, right before the text item, the thinking item:
# one UPDATE of content_json per row (no row inserted or deleted: Goose's counter triggers
# fire on those, and on UPDATE OF metadata_json or created_timestamp, never on this one).


def _index(repair: Repair) -> int:
    path = repair.site.path
    ok = len(path) == 3 and path[0] == "content" and isinstance(path[1], int)
    return path[1] if ok and isinstance(path[1], int) else -1


def apply_database(db: RowChanges, repairs: list[Repair]) -> list[Placement]:
    """Apply repairs to an open store inside the caller's transaction; one Placement each.
    A row's repairs are spliced into its `content_json` together (the other bytes kept),
    and the row is written once, through `db`, which records it for undo."""
    placements: dict[int, Placement] = {}
    rows: dict[str, list[int]] = {}
    for k, repair in enumerate(repairs):
        rows.setdefault(repair.site.message_id or "", []).append(k)
    for row_id, ks in rows.items():
        for k, placement in _apply_row(db, row_id, [repairs[k] for k in ks]).items():
            placements[ks[k]] = placement
    return [placements[k] for k in sorted(placements)]


def _skip(repair: Repair, what: str, reason: str) -> Placement:
    return Placement(repair.site, PlacementKind.SKIPPED, what, applied=False, reason=reason)


def _apply_row(db: RowChanges, row_id: str, repairs: list[Repair]) -> dict[int, Placement]:
    """Placements of one row's repairs, by their index in `repairs`."""
    key = int(row_id) if row_id.isdigit() else row_id
    found = db.execute("SELECT content_json FROM messages WHERE id = ?", (key,)).fetchone()
    if found is None or not isinstance(found[0], str):
        why = "the message is gone or its content_json is not text"
        return {k: _skip(r, "message not found", why) for k, r in enumerate(repairs)}
    raw = found[0].encode("utf-8")
    content = loads(raw)
    if not isinstance(content, list):
        why = "the message's content_json is not a list"
        return {k: _skip(r, "message changed", why) for k, r in enumerate(repairs)}
    out: dict[int, Placement] = {}
    edits: list[jsonedit.Edit] = []
    emptied = {_index(r) for r in repairs if not r.visible.strip()}
    applied: list[tuple[int, Repair, bool]] = []
    for k, repair in enumerate(repairs):
        at = _index(repair)
        item = content[at] if 0 <= at < len(content) else None
        if not isinstance(item, dict) or item.get("type") != "text":
            out[k] = _skip(repair, "item not found", "the message's items changed since read")
            continue
        if item.get("text") != repair.site.text:
            out[k] = _skip(repair, "item changed", "the item's text changed since it was read")
            continue
        segments = tuple(s for s in repair.thinking if s.strip())
        if not repair.visible.strip():
            others = [c for i, c in enumerate(content) if i not in emptied and shows_of(c)]
            if not others:
                out[k] = refuse_emptied(repair.site, "an empty text item would break the session")
                continue
            edits.append(jsonedit.RemoveItem((), at))
        else:
            edits.append(jsonedit.SetValue((at, "text"), repair.visible))
        if segments:
            edits.append(jsonedit.InsertItems((), at, (thinking_item(segments),)))
        applied.append((k, repair, bool(segments)))
    if not applied:
        return out
    try:
        new, _ = jsonedit.edit(raw, edits, jsonspans.Style.sniff([raw]))
    except UnsafeEdit as exc:
        for k, repair, _ in applied:
            out[k] = _skip(repair, "not repaired", f"the edit could not be proven: {exc}")
        return out
    db.update("messages", {"id": key}, {"content_json": new.decode("utf-8")})
    for k, repair, placed in applied:
        where = f"a thinking item before content[{_index(repair)}] of message {row_id}"
        out[k] = Placement(
            repair.site,
            PlacementKind.RECORD if placed else PlacementKind.NONE,
            where if placed else "no reasoning to place",
        )
    return out


# --- turns: the session as `show` reads it ---------------------------------------------------

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}


def _call_value(item: dict[str, Any], key: str) -> Any:
    """A tool call's or result's value (`{"status": "success", "value": ...}`), else None."""
    wrapped = item.get(key)
    return wrapped.get("value") if isinstance(wrapped, dict) else None


def _item_part(item: Any, path: Path) -> Part | None:
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "text" and isinstance(item.get("text"), str):
        return Part(PartKind.TEXT, item["text"], path=path + ("text",))
    if kind == "thinking":
        return Part(
            PartKind.THINKING,
            as_str(item.get("thinking")) or "",
            signed=bool(item.get("signature")),
        )
    if kind == "redactedThinking":
        return Part(PartKind.THINKING, "", signed=True, redacted=True)
    if kind in CALLS:
        call = _call_value(item, "toolCall")
        call = call if isinstance(call, dict) else {}
        return Part(
            PartKind.TOOL_CALL,
            args_text(call.get("arguments")),
            name=as_str(call.get("name")) or "",
            call_id=as_str(item.get("id")),
        )
    if kind == "toolResponse":
        result = item.get("toolResult")
        value = _call_value(item, "toolResult")
        failed = isinstance(result, dict) and result.get("status") == "error"
        if isinstance(value, dict):  # CallToolResult {content, isError}; older: the list
            failed = failed or bool(value.get("isError"))
            value = value.get("content")
        output = result.get("error") if failed and isinstance(result, dict) else value
        return Part(
            PartKind.TOOL_RESULT,
            output_text(output),
            call_id=as_str(item.get("id")),
            error=failed,
        )
    return None


def _iso(created: Any) -> str | None:
    from thinkfix.formats.turn_shapes import iso

    if isinstance(created, int) and not isinstance(created, bool) and created < MS_THRESHOLD:
        created *= 1000
    return iso(created)


def turns(record: Record) -> Iterator[Turn]:
    """A message (a store row or a legacy line): its text, thinking and tool calls, then its
    tool results as a TOOL turn (Goose keeps them on user messages)."""
    o = record.obj
    if o is None or not isinstance(o.get("content"), list):
        return
    role = _ROLES.get(o.get("role") or "")
    if role is None:
        return
    parts = [p for i, c in enumerate(o["content"]) if (p := _item_part(c, ("content", i)))]
    own = tuple(p for p in parts if p.kind is not PartKind.TOOL_RESULT)
    results = tuple(p for p in parts if p.kind is PartKind.TOOL_RESULT)
    when = _iso(o.get("created"))
    message_id = None if o.get("id") is None else str(o["id"])
    if own:
        yield Turn(role, own, when, as_str(o.get("model")), message_id)
    if results:
        yield Turn(Role.TOOL, results, when)
