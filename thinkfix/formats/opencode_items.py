"""OpenCode's storage read: which store a file or folder is (JSON files or `opencode.db`), its messages from the database, and where a message's text parts and reasoning are."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import orjson

from thinkfix.formats.common import join_texts
from thinkfix.formats.repairs import TextSlot
from thinkfix.formats.values import parts_list, typed_parts

TABLES = {
    "message": {"id", "session_id", "data"},
    "part": {"id", "message_id", "session_id", "data"},
}


def _strings(doc: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(doc.get(k), str) for k in keys)


def storage_kind(doc: Any) -> str | None:
    """`part`, `message` or `session` for a file-store object (by its keys), else None.

    Real ids carry `prt_`/`msg_`/`ses_` prefixes, but the shapes decide: exports and
    test fixtures rename ids.
    """
    if not isinstance(doc, dict):
        return None
    if _strings(doc, "id", "sessionID", "messageID", "type"):
        return "part"
    if (
        _strings(doc, "id", "sessionID")
        and doc.get("role") in ("user", "assistant")
        and isinstance(doc.get("time"), dict)
    ):
        return "message"
    if (
        _strings(doc, "id")
        and isinstance(doc.get("time"), dict)
        and ("projectID" in doc or _strings(doc, "title", "version"))
    ):
        return "session"
    return None


def is_store_name(path: str) -> bool:
    """Is this the name OpenCode gives its store (`opencode.db`; a channel build's
    `opencode-<channel>.db`, `Database.getChannelPath` in storage/db.ts)?"""
    name = os.path.basename(path)
    return name == "opencode.db" or (name.startswith("opencode-") and name.endswith(".db"))


def is_kilo_store_name(path: str) -> bool:
    """Is this a Kilo CLI store: `kilo.db` or `kilo-<channel>.db`, or a channel build's
    fallback `opencode-<channel>.db` inside Kilo's data folder (`kilo`)?"""
    name = os.path.basename(path)
    if name == "kilo.db" or (name.startswith("kilo-") and name.endswith(".db")):
        return True
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return folder == "kilo" and is_store_name(path)


def database_messages(db: Any) -> Iterator[dict[str, Any]]:
    """Every message of the store with its parts in id order (as OpenCode reads them), as
    one JSON object: `{id, sessionID, info, parts}`."""
    rows = db.execute("SELECT id, session_id, data FROM message ORDER BY session_id, id")
    for message_id, session_id, data in rows:
        info = loads(data)
        parts = [
            dict(loads(pdata) or {}, id=pid)
            for pid, pdata in db.execute(
                "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,)
            )
        ]
        yield {"id": message_id, "sessionID": session_id, "info": info, "parts": parts}


def loads(data: Any) -> Any:
    try:
        return orjson.loads(data) if data is not None else None
    except orjson.JSONDecodeError:
        return None


def read_json(path: str) -> Any:
    try:
        with open(path, "rb") as fh:
            return loads(fh.read())
    except (OSError, ValueError):  # ValueError: an id holding a NUL byte names no file
        return None


def part_slots(parts: Any, base: tuple[str | int, ...]) -> list[TextSlot]:
    """Text parts; one with a `tool` part after it carries rule 4's evidence. A part that
    is no object with a string `type` (a row whose data is not JSON reads as one), or a text
    or reasoning part whose text is no string, raises `UnexpectedShape`: skipped, its leak
    was counted clean (`Part` in packages/opencode/src/session/message-v2.ts)."""
    parts = parts_list(parts, base)
    if parts is None:
        return []
    typed_parts(parts, base, texts=_TEXT_FIELDS)
    last_tool = max(
        (i for i, p in enumerate(parts) if isinstance(p, dict) and p.get("type") == "tool"),
        default=-1,
    )
    return [
        TextSlot(base + (i, "text"), p["text"], tool_after=i < last_tool)
        for i, p in enumerate(parts)
        if isinstance(p, dict)
        and p.get("type") == "text"
        and isinstance(p.get("text"), str)
        and not p.get("synthetic")
    ]


_TEXT_FIELDS = {"text": "text", "reasoning": "text"}


def part_reasoning(parts: Any) -> str | None:
    if not isinstance(parts, list):
        return None
    return join_texts(
        p.get("text") for p in parts if isinstance(p, dict) and p.get("type") == "reasoning"
    )
