"""Goose's messages, item by item: where its sessions live, how a row or a legacy line is read, where an item's texts and reasoning are, and a thinking item as Goose writes it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import orjson

from thinkfix.formats import sqlite_store
from thinkfix.formats.common import join_texts
from thinkfix.formats.repairs import TextSlot
from thinkfix.formats.turns import Path
from thinkfix.formats.values import parts_list, typed_parts

TABLES = {
    "sessions": {"id", "working_dir"},
    "messages": {"id", "session_id", "role", "content_json", "created_timestamp"},
}
#: Content items that are tool calls: rule 4's evidence after a text.
CALLS = frozenset({"toolRequest", "frontendToolRequest"})
#: Content items that hold reasoning: beside them a message still shows nothing.
_REASONING = frozenset({"thinking", "redactedThinking"})
#: `created` above this is in milliseconds (session_manager.rs MILLISECOND_TIMESTAMP_THRESHOLD).
MS_THRESHOLD = 10_000_000_000


def is_store_path(path: str) -> bool:
    """Is this where Goose keeps its store (`goose/sessions/sessions.db`, or Windows'
    `goose/data/sessions/sessions.db`)? Only a store that cannot be read is judged by this:
    `sessions.db` is a generic name, so a readable one is Goose's by its tables alone."""
    parts = os.path.abspath(path).replace("\\", "/").split("/")
    return parts[-2:] == ["sessions", "sessions.db"] and "goose" in parts[-4:-2]


# --- reading ---------------------------------------------------------------------------------


def loads(data: Any) -> Any:
    try:
        return orjson.loads(data) if data is not None else None
    except orjson.JSONDecodeError:
        return None


def _columns(db: Any, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({sqlite_store.quote(table)})")}


def _models(db: Any) -> dict[str, str]:
    """Each session's model name (`model_config_json.model_name`, schema v6 on), by id."""
    if "model_config_json" not in _columns(db, "sessions"):
        return {}
    out = {}
    for sid, config in db.execute("SELECT id, model_config_json FROM sessions"):
        name = loads(config)
        if isinstance(name, dict) and isinstance(name.get("model_name"), str):
            out[str(sid)] = name["model_name"]
    return out


def database_messages(db: Any) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Every message row as one JSON object (`id` is the row's key, `content` the parsed
    `content_json`), in the order Goose reads a session back; with why it is unreadable."""
    have = _columns(db, "messages")
    optional = [c for c in ("message_id", "metadata_json") if c in have]
    models = _models(db)
    rows = db.execute(
        "SELECT id, session_id, role, created_timestamp, content_json"
        + "".join(f", {c}" for c in optional)
        + " FROM messages ORDER BY session_id, created_timestamp, id"
    )
    for row in rows:
        rowid, session, role, created, content_json, *rest = row
        extra = dict(zip(optional, rest, strict=True))
        content = loads(content_json)
        doc: dict[str, Any] = {
            "id": rowid,
            "message_id": extra.get("message_id"),
            "session_id": session,
            "role": role,
            "created": created,
            "model": models.get(str(session)),
            "content": content,
        }
        metadata = loads(extra.get("metadata_json"))
        if metadata is not None:
            doc["metadata"] = metadata
        error = None if isinstance(content, list) else "content_json is not a JSON list of items"
        yield doc, error


def is_metadata(o: Any) -> bool:
    """The legacy file's first line (`SessionMetadata`: description and message_count)."""
    return isinstance(o, dict) and "description" in o and "message_count" in o and "role" not in o


def is_message(o: Any) -> bool:
    """A serialized `Message`: a role, a `created` number and a list of tagged items."""
    content = o.get("content") if isinstance(o, dict) else None
    return (
        isinstance(o, dict)
        and o.get("role") in ("user", "assistant")
        and isinstance(o.get("created"), int)
        and isinstance(content, list)
        and all(isinstance(c, dict) and isinstance(c.get("type"), str) for c in content)
    )


#: Item types only Goose writes (camelCase tags of `MessageContent`).
_GOOSE_ITEMS = frozenset(
    {
        "toolRequest",
        "toolResponse",
        "toolConfirmationRequest",
        "actionRequired",
        "frontendToolRequest",
        "redactedThinking",
        "systemNotification",
        "jsonRenderSpec",
        "contextLengthExceeded",
        "summarizationRequested",
        "conversationCompacted",
    }
)


def goose_items(o: dict[str, Any]) -> bool:
    return any(c.get("type") in _GOOSE_ITEMS for c in o["content"]) or (
        isinstance(o.get("metadata"), dict) and "userVisible" in o["metadata"]
    )


# --- sites -----------------------------------------------------------------------------------


def slots(content: Any, base: Path) -> list[TextSlot]:
    """Text items of a message; one with a tool request after it carries rule 4's evidence.
    An item that is no object or has no string `type` (`MessageContent` is serde-tagged by
    `type`, block/goose crates/goose/src/conversation/message.rs), or a text or thinking item
    whose text is no string, raises `UnexpectedShape`: skipped, its leak counted clean."""
    content = parts_list(content, base)
    if content is None:
        return []
    typed_parts(content, base, texts=_TEXT_FIELDS)
    last_call = max(
        (i for i, c in enumerate(content) if isinstance(c, dict) and c.get("type") in CALLS),
        default=-1,
    )
    return [
        TextSlot(base + (i, "text"), c["text"], tool_after=i < last_call)
        for i, c in enumerate(content)
        if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)
    ]


#: The text field of Goose's text and thinking items (`TextContent.text`, `ThinkingContent.thinking`).
_TEXT_FIELDS = {"text": "text", "thinking": "thinking"}


def reasoning_of(content: Any) -> str | None:
    if not isinstance(content, list):
        return None
    return join_texts(
        c.get("thinking") for c in content if isinstance(c, dict) and c.get("type") == "thinking"
    )


def thinking_item(segments: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The item the reasoning goes into, in `ThinkingContent`'s field order; no signature."""
    return {"type": "thinking", "thinking": "\n\n".join(segments), "signature": ""}


def shows_of(item: Any) -> bool:
    """Does a content item show the user something (a non-empty text, a tool call, ...)?"""
    if not isinstance(item, dict) or item.get("type") in _REASONING:
        return False
    if item.get("type") == "text":
        return isinstance(item.get("text"), str) and bool(item["text"].strip())
    return True
