"""Zed's agent threads: the SQLite store `threads/threads.db` in Zed's data folder.

One row per thread (`ThreadsDatabase::new` in zed-industries/zed crates/agent/src/db.rs):
`threads(id, summary, updated_at, data_type, data, parent_id, folder_paths,
folder_paths_order, created_at)`. `data` is the thread (`DbThread`, version "0.3.0") as
JSON, zstd-compressed at level 3 when `data_type` is `zstd` (`save_thread_sync`), plain
when it is `json` (`deserialize_thread` reads both). Its `messages` are serde's externally
tagged `Message` enum (crates/agent/src/thread.rs): `{"User": ...}`, `{"Agent": {content,
tool_results, reasoning_details}}` or `"Resume"`; an agent message's `content` is a list of
`{"Text": str}`, `{"Thinking": {text, signature}}`, `{"RedactedThinking": str}` and
`{"ToolUse": ...}`. `AgentMessage::to_request` replays every Thinking item to the model as
`MessageContent::Thinking`, in place, on resume.

Placement: a `{"Thinking": {"text", "signature": null}}` item right before the repaired
Text item, as Zed writes a thinking segment before the text that follows it; the blob is
compressed again the way Zed does (level 3) and only `data` of that thread's row changes
(through `RowChanges`, so undo puts the exact old blob back).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path as FsPath
from typing import Any, BinaryIO

import orjson
import zstandard

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str, join_texts
from thinkfix.formats.locations import LINUX, data_root, this_system
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import Placement, PlacementKind, Repair, TextSlot
from thinkfix.formats.sqlite_format import StoreOnly, refuse_emptied, store_confidence
from thinkfix.formats.sqlite_store import MAGIC as SQLITE_MAGIC
from thinkfix.formats.sqlite_store import (
    RowChanges,
    snapshot,
)
from thinkfix.formats.turn_shapes import args_text, output_text
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import UnexpectedShape, parts_list, text_value, typed_parts

#: The columns Zed's first release of the table has; later columns are optional.
_TABLES = {"threads": {"id", "summary", "updated_at", "data_type", "data"}}
#: `COMPRESSION_LEVEL` in `ThreadsDatabase::save_thread_sync`.
LEVEL = 3
STORE_NAME = "threads.db"


def is_store_name(path: str) -> bool:
    """Is this the file Zed keeps its agent threads in (`<data dir>/threads/threads.db`)?"""
    return os.path.basename(path) == STORE_NAME


def decode_blob(data_type: Any, data: Any) -> Any:
    """A thread's `data` as JSON (`deserialize_thread`); None when it cannot be read."""
    if isinstance(data, str):
        data = data.encode()
    if not isinstance(data, bytes):
        return None
    try:
        if data_type == "zstd":
            data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        return orjson.loads(data)
    except (zstandard.ZstdError, orjson.JSONDecodeError):
        return None


def encode_blob(data_type: Any, thread: Any) -> bytes:
    """A thread as Zed writes it: compact JSON (serde_json), zstd level 3 for `zstd`."""
    raw = orjson.dumps(thread)
    if data_type == "zstd":
        return zstandard.ZstdCompressor(level=LEVEL).compress(raw)
    return raw


def threads(db: Any) -> Iterator[dict[str, Any]]:
    """Every thread of the store, in row order: `{id, summary, dataType, thread}`."""
    rows = db.execute("SELECT id, summary, data_type, data FROM threads ORDER BY rowid")
    for thread_id, summary, data_type, data in rows:
        yield {
            "id": thread_id,
            "summary": summary,
            "dataType": data_type,
            "thread": decode_blob(data_type, data),
        }


def _thread(record: Record) -> tuple[dict[str, Any], dict[str, Any], list[Any]] | None:
    """A thread record's row, its thread and the thread's messages; None where the row holds
    no thread with a message list (its data could not be read)."""
    doc = record.obj
    if not isinstance(doc, dict):
        return None
    thread = doc.get("thread")
    if not isinstance(thread, dict) or not isinstance(thread.get("messages"), list):
        return None
    return doc, thread, thread["messages"]


def _agent(message: Any) -> dict[str, Any] | None:
    if isinstance(message, dict) and isinstance(message.get("Agent"), dict):
        agent: dict[str, Any] = message["Agent"]
        return agent
    return None


def _content(agent: dict[str, Any]) -> list[Any]:
    content = agent.get("content")
    return content if isinstance(content, list) else []


def _legacy(message: Any) -> bool:
    """An agent-1 message (`legacy_thread::SerializedMessage`: `{id, role, segments, ...}`),
    or agent 0's (`LegacySerializedMessage`: `{id, role, text, ...}`, in a thread with no
    version, upgraded to one text segment), which Zed still reads and upgrades
    (`DbThread::from_json`, `SerializedThread::from_json`, `upgrade_from_agent_1`)."""
    return (
        isinstance(message, dict)
        and "role" in message
        and ("segments" in message or ("text" in message and "id" in message))
    )


def _legacy_slots(message: dict[str, Any], base: tuple[str | int, ...]) -> list[TextSlot]:
    """Its `{"type": "text", "text"}` segments (the upgrade makes each a Text item), or agent
    0's `text`; a segment or text of no shape serde reads raises `UnexpectedShape`."""
    tools = bool(message.get("tool_uses"))  # its tool uses follow its segments
    if "segments" not in message:
        text = text_value(message.get("text"), (*base, "text"))
        return [] if text is None else [TextSlot((*base, "text"), text, tool_after=tools)]
    segments = parts_list(message.get("segments"), (*base, "segments"))
    typed_parts(segments or [], (*base, "segments"), texts={"text": "text", "thinking": "text"})
    return [
        TextSlot((*base, "segments", j, "text"), seg["text"], tool_after=tools)
        for j, seg in enumerate(segments or [])
        if seg["type"] == "text" and isinstance(seg.get("text"), str)
    ]


def _legacy_native(message: dict[str, Any]) -> str | None:
    segments = message.get("segments")
    return join_texts(
        s.get("text") for s in segments or () if isinstance(s, dict) and s.get("type") == "thinking"
    )


def _checked(message: Any, where: tuple[str | int, ...]) -> None:
    """Raise `UnexpectedShape` for a thread message this reader cannot read: one that is
    neither "Resume" nor an externally tagged object (`Message` in crates/agent/src/thread.rs),
    such as a legacy agent-1 message (`{id, role, segments}`, which Zed still reads and
    upgrades: `DbThread::from_json`, `upgrade_from_agent_1`), or an Agent message whose
    content is no list. Skipped, a leak in it was counted clean."""
    if message == "Resume":
        return
    if not isinstance(message, dict) or "role" in message or len(message) != 1:
        raise UnexpectedShape(where, message, 'a {"User": ...}, {"Agent": ...} or "Resume"')
    agent = message.get("Agent")
    if "Agent" in message and not isinstance(agent, dict):
        raise UnexpectedShape((*where, "Agent"), agent, "an agent message object")
    if isinstance(agent, dict):
        parts_list(agent.get("content"), (*where, "Agent", "content"))


def _text_slots(content: list[Any], base: tuple[str | int, ...]) -> list[TextSlot]:
    """Text items; one with a ToolUse after it carries rule 4's evidence. An item that is no
    object, or a Text that is no string, raises `UnexpectedShape`."""
    for i, c in enumerate(content):
        if not isinstance(c, dict):
            raise UnexpectedShape((*base, i), c, 'an item object ({"Text": ...}, ...)')
        text_value(c.get("Text"), (*base, i, "Text"))
    last_tool = max(
        (i for i, c in enumerate(content) if isinstance(c, dict) and "ToolUse" in c), default=-1
    )
    return [
        TextSlot(base + (i, "Text"), c["Text"], tool_after=i < last_tool)
        for i, c in enumerate(content)
        if isinstance(c, dict) and isinstance(c.get("Text"), str)
    ]


def _thinking(item: Any) -> str | None:
    if isinstance(item, dict) and isinstance(item.get("Thinking"), dict):
        text = item["Thinking"].get("text")
        return text if isinstance(text, str) else None
    return None


def _native(content: list[Any]) -> str | None:
    return join_texts(_thinking(c) for c in content)


class Zed(StoreOnly, FormatBase):
    id = "zed"
    description = "Zed agent threads: the SQLite store threads/threads.db (zstd-compressed JSON)"
    detection = (
        "a SQLite file with Zed's threads table (id, summary, updated_at, data_type, data), "
        "or a locked file named threads.db"
    )
    placement = (
        "a Thinking item right before the Text item inside the thread's data, compressed "
        "again at Zed's level 3; only that row's data changes, in one transaction after an "
        "online backup"
    )
    locations_source = (
        "Zed's data dir + threads/threads.db: $FLATPAK_XDG_DATA_HOME or $XDG_DATA_HOME "
        "(else ~/.local/share)/zed on Linux, ~/Library/Application Support/Zed on macOS, "
        "%LOCALAPPDATA%/Zed on Windows (crates/paths/src/paths.rs; ThreadsDatabase::new in "
        "crates/agent/src/db.rs)"
    )
    shapes = (dict,)
    manifest_only = "Zed reads its threads from threads.db, not from a file"
    assistant_marker = b'"Agent"'

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        system = this_system()
        if system != LINUX:  # data_root: ~/Library/Application Support, %LOCALAPPDATA%
            return [data_root(env, home, system) / "Zed" / "threads"]
        out = []
        for var in ("FLATPAK_XDG_DATA_HOME", "XDG_DATA_HOME"):
            if env.get(var, "").strip():
                out.append(FsPath(env[var].strip()) / "zed" / "threads")
        out.append(home / ".local" / "share" / "zed" / "threads")
        return list(dict.fromkeys(out))

    def detect(self, head: bytes, path: str = "") -> float:
        return store_confidence(head, path, _TABLES, is_store_name) or 0.0

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        head = fp.read(len(SQLITE_MAGIC))
        if head != SQLITE_MAGIC:  # a thread exported as JSON lines reads as its records
            yield from super().read(io.BytesIO(head + fp.read()))
            return
        path = getattr(fp, "name", None)
        if not isinstance(path, str) or not os.path.isfile(path):
            raise ValueError("Zed's thread store is read from the file on disk, not a stream")
        with snapshot(path) as db:
            for n, thread in enumerate(threads(db)):
                record = Record(n, n + 1, orjson.dumps(thread), b"\n", shapes=self.shapes)
                if not isinstance(thread["thread"], dict):
                    record = Record(
                        n,
                        n + 1,
                        record.raw,
                        b"\n",
                        shapes=self.shapes,
                        data=thread,
                        error=f"thread {thread['id']}: its data cannot be read "
                        f"(data_type {thread['dataType']!r})",
                    )
                yield record

    def apply_database(self, db: Any, repairs: list[Repair]) -> list[Placement]:
        return apply_database(db, repairs)

    def messages(self, record: Record) -> Iterator[Message]:
        found = _thread(record)
        if found is None:
            return
        doc, thread, messages = found
        model = thread.get("model")
        model_name = as_str(model.get("model")) if isinstance(model, dict) else None
        for i, message in enumerate(messages):
            base = ("thread", "messages", i)
            if _legacy(message):
                if message["role"] == "assistant":
                    yield Message(
                        base,
                        i,
                        partial(_legacy_slots, message, base),
                        native=partial(_legacy_native, message),
                        message_id=f"{doc.get('id')}#{i}",
                        model=model_name,
                        session_id=as_str(doc.get("id")),
                    )
                continue
            _checked(message, base)
            agent = _agent(message)
            if agent is None:
                continue
            content = _content(agent)
            yield Message(
                ("thread", "messages", i, "Agent"),
                i,
                partial(_text_slots, content, ("thread", "messages", i, "Agent", "content")),
                native=partial(_native, content),
                message_id=f"{doc.get('id')}#{i}",
                model=model_name,
                session_id=as_str(doc.get("id")),
            )

    def turns(self, record: Record) -> Iterator[Turn]:
        return turns(record)


# --- repair --------------------------------------------------------------------------------
# The engine owns the transaction, the backup and the manifest; here one thread's `data`
# changes: the Text item gets its visible text and a Thinking item before it the reasoning.


def _site_indexes(repair: Repair) -> tuple[int, int] | None:
    path = repair.site.path
    if (
        len(path) == 7
        and path[:2] == ("thread", "messages")
        and path[3:5] == ("Agent", "content")
        and isinstance(path[2], int)
        and isinstance(path[5], int)
    ):
        return path[2], path[5]
    return None


def _shows(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if isinstance(item.get("Text"), str):
        return bool(item["Text"].strip())
    return "ToolUse" in item


def _skip(repair: Repair, what: str, why: str) -> Placement:
    return Placement(repair.site, PlacementKind.SKIPPED, what, applied=False, reason=why)


def apply_database(db: RowChanges, repairs: list[Repair]) -> list[Placement]:
    """Apply repairs inside the caller's transaction; one Placement each, in repair order.
    Each thread's blob is read once, changed for all its repairs (last item first, so an
    inserted item never moves one still to be repaired), and written once."""
    placements: list[Placement | None] = [None] * len(repairs)
    by_thread: dict[str, list[int]] = {}
    for k, repair in enumerate(repairs):
        by_thread.setdefault(repair.site.session_id or "", []).append(k)
    for thread_id, ks in by_thread.items():
        row = db.execute(
            "SELECT data_type, data FROM threads WHERE id = ?", (thread_id,)
        ).fetchone()
        thread = decode_blob(row[0], row[1]) if row else None
        if not isinstance(thread, dict) or not isinstance(thread.get("messages"), list):
            for k in ks:
                placements[k] = _skip(repairs[k], "thread not found", "the thread changed")
            continue
        changed = False
        order = sorted(ks, key=lambda k: _site_indexes(repairs[k]) or (-1, -1), reverse=True)
        for k in order:
            placements[k] = _apply_one(thread["messages"], repairs[k])
            changed = changed or placements[k].applied  # type: ignore[union-attr]
        if changed:
            db.update("threads", {"id": thread_id}, {"data": encode_blob(row[0], thread)})
    return [p for p in placements if p is not None]


def _apply_one(messages: list[Any], repair: Repair) -> Placement:
    site = repair.site
    where = _site_indexes(repair)
    if site.path[3:4] in (("segments",), ("text",)):
        why = (
            "a legacy agent-1 thread: Zed upgrades it when it loads it and rewrites it on "
            "the next change; repair it after that (the scan keeps reporting the leak)"
        )
        return _skip(repair, "not modified", why)
    if where is None or not 0 <= where[0] < len(messages):
        return _skip(repair, "message not found", "the thread's messages changed")
    agent = _agent(messages[where[0]])
    content = _content(agent) if agent is not None else []
    index = where[1]
    if not 0 <= index < len(content) or not isinstance(content[index], dict):
        return _skip(repair, "item not found", "the message's content changed")
    if content[index].get("Text") != site.text:
        return _skip(repair, "text changed", "the text changed since it was read")
    segments = tuple(s for s in repair.thinking if s.strip())
    emptied = not repair.visible.strip()
    others = [c for j, c in enumerate(content) if j != index and _shows(c)]
    if emptied and not others:
        return refuse_emptied(site)
    if emptied:
        del content[index]
    else:
        content[index] = {"Text": repair.visible}
    if segments:
        thinking = {"Thinking": {"text": "\n\n".join(segments), "signature": None}}
        content.insert(index, thinking)
        return Placement(
            site, PlacementKind.BLOCK, f"a Thinking item before content[{index}] of the message"
        )
    return Placement(site, PlacementKind.NONE, "no reasoning to place")


def _result_text(content: Any) -> str:
    """A tool result's `content` (`LanguageModelToolResultContent`: text, or an image)."""
    if isinstance(content, dict) and isinstance(content.get("Text"), str):
        return str(content["Text"])
    return output_text(content)


# --- turns ----------------------------------------------------------------------------------


def turns(record: Record) -> Iterator[Turn]:
    """Every message of one thread, as `show` prints them."""
    found = _thread(record)
    if found is None:
        return
    doc, _, messages = found
    for i, message in enumerate(messages):
        base = ("thread", "messages", i)
        if isinstance(message, dict) and isinstance(message.get("User"), dict):
            content = message["User"].get("content")
            parts = [
                Part(PartKind.TEXT, c["Text"], path=base + ("User", "content", j, "Text"))
                for j, c in enumerate(content if isinstance(content, list) else [])
                if isinstance(c, dict) and isinstance(c.get("Text"), str)
            ]
            yield Turn(Role.USER, tuple(parts), None, None, None)
            continue
        agent = _agent(message)
        if agent is None:
            continue
        out: list[Part] = []
        for j, c in enumerate(_content(agent)):
            if not isinstance(c, dict):
                continue
            if isinstance(c.get("Text"), str):
                out.append(
                    Part(PartKind.TEXT, c["Text"], path=base + ("Agent", "content", j, "Text"))
                )
            elif (text := _thinking(c)) is not None:
                out.append(
                    Part(PartKind.THINKING, text, signed=bool(c["Thinking"].get("signature")))
                )
            elif isinstance(c.get("ToolUse"), dict):
                use = c["ToolUse"]
                out.append(
                    Part(
                        PartKind.TOOL_CALL,
                        args_text(use.get("input")),
                        name=str(use.get("name")),
                        call_id=as_str(use.get("id")),
                    )
                )
        yield Turn(Role.ASSISTANT, tuple(out), None, None, f"{doc.get('id')}#{i}")
        results = agent.get("tool_results")
        if isinstance(results, dict) and results:
            yield Turn(
                Role.TOOL,
                tuple(
                    Part(
                        PartKind.TOOL_RESULT,
                        _result_text(r.get("content")),
                        name=str(r.get("tool_name")),
                        call_id=as_str(r.get("tool_use_id")),
                        error=bool(r.get("is_error")),
                    )
                    for r in results.values()
                    if isinstance(r, dict)
                ),
                None,
            )
