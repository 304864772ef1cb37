"""Cursor (the IDE): chats and agent runs in `globalStorage/state.vscdb`, a SQLite key/value store.

Cursor is closed source; the shapes are read from public readers, which agree (cited in
docs/formats.md): the table `cursorDiskKV(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`
holds one JSON value per key. `composerData:<composerId>` is a conversation: its
`fullConversationHeadersOnly` lists the bubbles in order (`{bubbleId, type}`, type 1 user,
2 assistant); each bubble is its own row, `bubbleId:<composerId>:<bubbleId>`, with `text` (what
the chat shows), `richText` (the editor's copy, empty on assistant bubbles), and, on bubbles of
thinking models, `thinking: {text, signature?}`. Older composers keep their bubbles inline, in
`conversation[]`. A bubble row that no composer lists is read too, after the conversations.

One record is one bubble (or one composer with inline bubbles), in conversation order; its
`text` is the site and `thinking.text` the native reasoning. The store is read through
`sqlite_store.snapshot` (no trace, newest rows, "in use" when locked).

Placement: the reasoning goes into the bubble's `thinking.text` (after any unsigned reasoning
already there), the visible text into `text` (and into `richText` when that holds the same
plain text); nothing is written to `signature`, which is the model provider's and cannot be
made. A bubble whose thinking is signed keeps it: the reasoning stays in the repair manifest.
Only that bubble's row changes, spliced byte for byte (`jsonedit`), through `RowChanges`.

Cursor's CLI keeps its chats elsewhere (`~/.cursor/chats/<md5 of cwd>/<agent>/store.db`,
content-addressed protobuf and JSON blobs): not read yet, for the reasons docs/formats.md gives.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path as FsPath
from typing import Any, BinaryIO

import orjson

from thinkfix.formats import jsonedit, jsonspans
from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str
from thinkfix.formats.locations import editor_users
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Placement, PlacementKind, Repair, TextSlot, UnsafeEdit
from thinkfix.formats.sqlite_format import StoreOnly, store_confidence
from thinkfix.formats.sqlite_store import MAGIC as SQLITE_MAGIC
from thinkfix.formats.sqlite_store import (
    RowChanges,
    snapshot,
)
from thinkfix.formats.turn_shapes import iso, tool_call, tool_result
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import text_value

TABLE = "cursorDiskKV"
_TABLES = {TABLE: {"key", "value"}}
STORE_NAME = "state.vscdb"
COMPOSER = "composerData:"
BUBBLE = "bubbleId:"
USER, ASSISTANT = 1, 2


def is_store_name(path: str) -> bool:
    """Is this where Cursor keeps its chats (`state.vscdb` under a Cursor folder)? A locked
    file is claimed by this alone; VS Code's own `state.vscdb` has no Cursor in its path."""
    if os.path.basename(path) != STORE_NAME:
        return False
    folders = os.path.abspath(path).replace(os.sep, "/").lower().split("/")
    return any(f in ("cursor", ".cursor-server") for f in folders)


def _after(prefix: str) -> str:
    """The first key past every key that starts with `prefix` (keys are ASCII)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _loads(value: Any) -> Any:
    """A row's value as JSON; None for NULL; raises ValueError when it is not JSON."""
    if value is None:
        return None
    return orjson.loads(value)


def _bubble_key(composer: str, bubble: str) -> str:
    return f"{BUBBLE}{composer}:{bubble}"


def _bubble(doc: dict[str, Any], n: int) -> Record:
    return Record(n, n + 1, orjson.dumps(doc), b"\n", shapes=(dict,))


def _unreadable(n: int, key: str, why: str) -> Record:
    return Record(
        n,
        n + 1,
        orjson.dumps({"key": key}),
        b"\n",
        data={"key": key},
        error=f"{key}: {why}",
    )


def records(db: Any) -> Iterator[Record]:
    """Every bubble of the store as one record, conversation by conversation (composers in key
    order, their bubbles in `fullConversationHeadersOnly` order), then every bubble row no
    composer lists, in key order. A value that is not JSON is a record with an error."""
    n = 0
    seen: set[str] = set()
    keys = db.execute(
        f"SELECT key FROM {TABLE} WHERE key >= ? AND key < ? ORDER BY key",
        (COMPOSER, _after(COMPOSER)),
    )
    for (key,) in keys:  # one composer's value at a time: each holds its files' old states
        row = db.execute(f"SELECT value FROM {TABLE} WHERE key = ?", (key,)).fetchone()
        value = row[0] if row is not None else None
        composer_id = key[len(COMPOSER) :]
        try:
            composer = _loads(value)
        except ValueError:
            yield _unreadable(n, key, "not JSON")
            n += 1
            continue
        if not isinstance(composer, dict):
            continue
        inline = composer.get("conversation")
        if isinstance(inline, list) and inline:
            doc = {"key": key, "composerId": composer_id, "conversation": inline}
            yield _bubble(doc, n)
            n += 1
        headers = composer.get("fullConversationHeadersOnly")
        for header in headers if isinstance(headers, list) else ():
            bubble_id = header.get("bubbleId") if isinstance(header, dict) else None
            if not isinstance(bubble_id, str):
                continue
            bkey = _bubble_key(composer_id, bubble_id)
            if bkey in seen:
                continue
            row = db.execute(f"SELECT value FROM {TABLE} WHERE key = ?", (bkey,)).fetchone()
            if row is None or row[0] is None:
                continue
            seen.add(bkey)
            yield _record(n, bkey, composer_id, bubble_id, row[0])
            n += 1
    bubbles = db.execute(
        f"SELECT key, value FROM {TABLE} WHERE key >= ? AND key < ? ORDER BY key",
        (BUBBLE, _after(BUBBLE)),
    )
    for key, value in bubbles:
        if key in seen or value is None:
            continue
        composer_id, _, bubble_id = key[len(BUBBLE) :].partition(":")
        yield _record(n, key, composer_id, bubble_id, value)
        n += 1


def _record(n: int, key: str, composer_id: str, bubble_id: str, value: Any) -> Record:
    try:
        bubble = _loads(value)
    except ValueError:
        return _unreadable(n, key, "not JSON")
    doc = {"key": key, "composerId": composer_id, "bubbleId": bubble_id, "bubble": bubble}
    return _bubble(doc, n)


# --- a bubble's fields ------------------------------------------------------------------------


def _thinking_text(bubble: dict[str, Any]) -> str | None:
    """The bubble's reasoning: `thinking.text` (a plain string in some older bubbles)."""
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict):
        text = thinking.get("text")
        return text if isinstance(text, str) and text else None
    return thinking if isinstance(thinking, str) and thinking else None


def _signed(bubble: dict[str, Any]) -> bool:
    thinking = bubble.get("thinking")
    return isinstance(thinking, dict) and bool(thinking.get("signature"))


def _tool(bubble: dict[str, Any]) -> dict[str, Any] | None:
    """The tool call a bubble carries (`toolFormerData` with a name), or None."""
    tool = bubble.get("toolFormerData")
    return tool if isinstance(tool, dict) and tool.get("name") else None


def _shows_more(bubble: dict[str, Any]) -> bool:
    """Does the bubble show something besides its text (a tool call, code blocks)?"""
    blocks = bubble.get("codeBlocks")
    return _tool(bubble) is not None or (isinstance(blocks, list) and bool(blocks))


def _model(bubble: dict[str, Any]) -> str | None:
    info = bubble.get("modelInfo")
    return as_str(info.get("modelName")) if isinstance(info, dict) else None


def _assistant(bubble: Any) -> bool:
    return isinstance(bubble, dict) and bubble.get("type") == ASSISTANT


def _bubbles(doc: dict[str, Any]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(path from the record root, bubble) of each bubble a record holds."""
    if isinstance(doc.get("bubble"), dict):
        yield ("bubble",), doc["bubble"]
    elif isinstance(doc.get("conversation"), list):
        for i, bubble in enumerate(doc["conversation"]):
            if isinstance(bubble, dict):
                yield ("conversation", i), bubble


class Cursor(StoreOnly, FormatBase):
    id = "cursor"
    description = (
        "Cursor (the IDE) chats: globalStorage/state.vscdb, table cursorDiskKV "
        "(composerData:<id> conversations, bubbleId:<composer>:<bubble> messages)"
    )
    detection = (
        "a SQLite file with Cursor's cursorDiskKV table (key, value), or a locked "
        "state.vscdb under a Cursor folder"
    )
    placement = (
        "the bubble's thinking.text (after unsigned reasoning already there; no signature "
        "is written), its text (and richText when it holds the same text) made visible; "
        "only that row's value changes, spliced, in one transaction after an online "
        "backup; a signed thinking stays as it is and the reasoning goes to the manifest"
    )
    locations_source = (
        "<Cursor user dir>/globalStorage/state.vscdb: $XDG_CONFIG_HOME (else ~/.config)/Cursor/"
        "User on Linux, ~/Library/Application Support/Cursor/User on macOS, "
        "%APPDATA%/Cursor/User on Windows, ~/.cursor-server/data/User over SSH (public "
        "readers: pppp606/cursor-efficiency docs/vscdbRelation.md, cursor-chat-recovery "
        "paths.py)"
    )
    shapes = (dict,)
    manifest_only = "Cursor reads its chats from state.vscdb, not from a file"
    #: Every record holds it: whether a bubble is the assistant's is its `type`.
    assistant_marker = b'"composerId"'

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        users = editor_users(env, home, ("Cursor",))
        users.append(home / ".cursor-server" / "data" / "User")
        return [user / "globalStorage" / STORE_NAME for user in users]

    def detect(self, head: bytes, path: str = "") -> float:
        return store_confidence(head, path, _TABLES, is_store_name) or 0.0

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        head = fp.read(len(SQLITE_MAGIC))
        if head != SQLITE_MAGIC:  # bubbles exported as JSON lines read as their records
            yield from super().read(io.BytesIO(head + fp.read()))
            return
        path = getattr(fp, "name", None)
        if not isinstance(path, str) or not os.path.isfile(path):
            raise ValueError("Cursor's state.vscdb is read from the file on disk, not a stream")
        with snapshot(path) as db:
            yield from records(db)

    def apply_database(self, db: Any, repairs: list[Repair]) -> list[Placement]:
        return apply_database(db, repairs)

    def messages(self, record: Record) -> Iterator[Message]:
        doc = record.obj
        if doc is None:
            return
        composer_id = as_str(doc.get("composerId"))
        for path, bubble in _bubbles(doc):
            if not _assistant(bubble):
                continue
            # a text of another type was skipped with its leak: `UnexpectedShape`
            text = text_value(bubble.get("text"), (*path, "text"))
            slots = (
                [TextSlot(path + ("text",), text, tool_after=_tool(bubble) is not None)]
                if text
                else []  # an empty text (a tool call's bubble) holds nothing to find
            )
            yield Message(
                path,
                path[1] if len(path) == 2 and isinstance(path[1], int) else 0,
                slots,
                native=partial(_thinking_text, bubble),
                message_id=as_str(bubble.get("bubbleId") or doc.get("bubbleId")),
                model=_model(bubble),
                session_id=composer_id,
            )

    def turns(self, record: Record) -> Iterator[Turn]:
        return turns(record)


# --- repair --------------------------------------------------------------------------------
# The engine owns the transaction, the backup and the manifest; here one bubble's row changes:
# `text` gets the visible text and `thinking.text` the reasoning, spliced into the stored JSON.


def _skip(
    repair: Repair, what: str, why: str, kind: PlacementKind = PlacementKind.SKIPPED
) -> Placement:
    return Placement(repair.site, kind, what, applied=False, reason=why)


def _row_key(repair: Repair) -> tuple[str, Path] | None:
    """The row that holds the repair's bubble and the bubble's path inside its value."""
    site, path = repair.site, repair.site.path
    if path == ("bubble", "text") and site.session_id is not None and site.message_id:
        return _bubble_key(site.session_id, site.message_id), ()
    if (
        len(path) == 3
        and path[0] == "conversation"
        and isinstance(path[1], int)
        and site.session_id
    ):
        return f"{COMPOSER}{site.session_id}", path[:2]
    return None


def apply_database(db: RowChanges, repairs: list[Repair]) -> list[Placement]:
    """Apply repairs inside the caller's transaction; one Placement each, in repair order.
    A row is read once, gets every edit of its bubbles, and is written once."""
    placements: list[Placement | None] = [None] * len(repairs)
    by_row: dict[str, list[tuple[int, Path]]] = {}
    for k, repair in enumerate(repairs):
        where = _row_key(repair)
        if where is None:
            placements[k] = _skip(repair, "bubble not found", "not a Cursor bubble's text")
        else:
            by_row.setdefault(where[0], []).append((k, where[1]))
    for key, items in by_row.items():
        row = db.execute(f"SELECT value FROM {TABLE} WHERE key = ?", (key,)).fetchone()
        raw = row[0] if row is not None else None
        if not isinstance(raw, (bytes, str)):
            for k, _ in items:
                placements[k] = _skip(repairs[k], "bubble not found", "its row is gone")
            continue
        data = raw.encode() if isinstance(raw, str) else raw
        style = jsonspans.Style.sniff([data])
        edits: list[jsonedit.Edit] = []
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            value = None
        for k, at in items:
            placement, more = _plan_one(value, at, repairs[k])
            placements[k] = placement
            edits.extend(more)
        if not edits:
            continue
        try:
            new, _ = jsonedit.edit(data, edits, style)
        except UnsafeEdit as exc:
            for k, _ in items:
                if placements[k] is not None and placements[k].applied:  # type: ignore[union-attr]
                    placements[k] = _skip(repairs[k], "not repaired", f"unsafe edit: {exc}")
            continue
        db.update(TABLE, {"key": key}, {"value": new.decode() if isinstance(raw, str) else new})
    return [p for p in placements if p is not None]


def _plan_one(value: Any, at: Path, repair: Repair) -> tuple[Placement, list[jsonedit.Edit]]:
    """One bubble's edits and placement, decided on the row's current value."""
    site = repair.site
    bubble: Any = value
    for step in at:
        if isinstance(bubble, dict) and isinstance(step, str):
            bubble = bubble.get(step)
        elif isinstance(bubble, list) and isinstance(step, int) and 0 <= step < len(bubble):
            bubble = bubble[step]
        else:
            bubble = None
    if not isinstance(bubble, dict) or not _assistant(bubble):
        return _skip(repair, "bubble not found", "the bubble changed since it was read"), []
    if bubble.get("text") != site.text:
        return _skip(repair, "text changed", "the text changed since it was read"), []
    segments = tuple(s for s in repair.thinking if s.strip())
    emptied = not repair.visible.strip()
    rich = bubble.get("richText")
    if rich not in (None, "", site.text):
        why = (
            "refused: its richText holds a rich copy of the text that thinkfix does not "
            "rewrite, and readers would show the two apart"
        )
        return _skip(repair, "not repaired", why, PlacementKind.REFUSED), []
    if emptied and not _shows_more(bubble):
        why = (
            "refused: the text is all reasoning and the bubble would show nothing "
            "(readers then fall back to other fields, or drop the message)"
        )
        return _skip(repair, "not repaired", why, PlacementKind.REFUSED), []
    edits: list[jsonedit.Edit] = [jsonedit.SetValue(at + ("text",), repair.visible)]
    if rich == site.text:
        edits.append(jsonedit.SetValue(at + ("richText",), repair.visible))
    if not segments:
        return Placement(site, PlacementKind.NONE, "no reasoning to place"), edits
    if _signed(bubble):
        where = "repair manifest only (the bubble's thinking is signed: left as it is)"
        return Placement(site, PlacementKind.MANIFEST, where), edits
    reasoning = "\n\n".join(segments)
    thinking = bubble.get("thinking")
    native = _thinking_text(bubble)
    merged = f"{native}\n\n{reasoning}" if native else reasoning
    if isinstance(thinking, dict):
        edits.append(jsonedit.SetValue(at + ("thinking",), {**thinking, "text": merged}))
    elif "thinking" in bubble:
        replacement: Any = merged if isinstance(thinking, str) else {"text": merged}
        edits.append(jsonedit.SetValue(at + ("thinking",), replacement))
    else:
        edits.append(jsonedit.SetKey(at, "thinking", {"text": merged}, after="text"))
    where = "thinking.text of the bubble" + (" (after its reasoning)" if native else "")
    return Placement(site, PlacementKind.FIELD, where), edits


# --- turns ----------------------------------------------------------------------------------


def _turns(path: Path, bubble: dict[str, Any], composer: str | None) -> Iterator[Turn]:
    kind = bubble.get("type")
    text = as_str(bubble.get("text")) or ""
    when = iso(bubble.get("createdAt"))
    message_id = as_str(bubble.get("bubbleId"))
    if kind == USER:
        yield Turn(Role.USER, (Part(PartKind.TEXT, text, path=path + ("text",)),), when)
        return
    if kind != ASSISTANT:
        return
    parts: list[Part] = []
    reasoning = _thinking_text(bubble)
    if reasoning:
        parts.append(Part(PartKind.THINKING, reasoning, signed=_signed(bubble)))
    if text or _tool(bubble) is None:
        parts.append(Part(PartKind.TEXT, text, path=path + ("text",)))
    tool = _tool(bubble)
    if tool is not None:
        call_id = as_str(tool.get("toolCallId"))
        parts.append(
            tool_call(tool.get("rawArgs") or tool.get("params"), tool.get("name"), call_id)
        )
    yield Turn(Role.ASSISTANT, tuple(parts), when, _model(bubble), message_id or composer)
    if tool is not None and tool.get("result") is not None:
        result = tool_result(
            tool.get("result"),
            tool.get("name"),
            as_str(tool.get("toolCallId")),
            error=tool.get("status") == "error",
        )
        yield Turn(Role.TOOL, (result,), when)


def turns(record: Record) -> Iterator[Turn]:
    """The bubbles of one record, as `show` prints them."""
    doc = record.obj
    if doc is None:
        return
    for path, bubble in _bubbles(doc):
        yield from _turns(path, bubble, as_str(doc.get("composerId")))
