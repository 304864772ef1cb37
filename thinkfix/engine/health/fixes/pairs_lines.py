"""`--fix tool-pairs` for Qwen Code, Gemini CLI, Copilot CLI, Factory Droid, claw-code and
Goose: each call left without a result gets what its runtime writes (docs/fixes.md cites
each runtime's source):

- Qwen Code: a `tool_result` record whose `functionResponse` carries the error its resume
  repair synthesizes for a call whose result was never recorded
  (`packages/core/src/core/session-recovery.ts` with `llm-chat.ts`'s
  `ORPHAN_TOOL_USE_REPAIR_REASON`), in the envelope `ChatRecordingService.recordToolResult`
  writes; the records that hung off the call (`parentUuid`) hang off it.
- Gemini CLI keeps a call's result in its `toolCalls` entry: the entry becomes what the
  scheduler records for a call cancelled by the user (`scheduler/scheduler.ts`
  `cancelAll`, `scheduler/state-manager.ts` `toCancelled`): `status: "cancelled"` and a
  `functionResponse` error "[Operation Cancelled] Reason: Operation cancelled by user".
- Copilot CLI (closed source) and Factory Droid (closed source), claw-code (writes none):
  a failed result in the runtime's own result shape, saying `INTERRUPTED`.
- Goose writes no result for a call it never finished; before every provider call it
  drops such a request (`conversation/mod.rs`, `fix_tool_calling`), and the fix does the
  same in the file: the `toolRequest` item leaves its message (kept in the manifest).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from thinkfix.engine.health.fixes.model import Fix, Fixed, FixEdits, resolve
from thinkfix.engine.health.fixes.pairs import (
    CALL_WITHOUT_RESULT,
    INTERRUPTED,
    Anchor,
    Call,
    Orphans,
    Planner,
    call_paths,
    dump,
    empty,
    here,
    ids,
    new_id,
    note,
    remove,
    repoint,
)
from thinkfix.engine.health.fixes.pairs_docs import COPILOT_LEGACY
from thinkfix.formats.jsonedit import Edit, InsertItems, RemoveItem, SetKey, SetValue
from thinkfix.formats.records import Record
from thinkfix.formats.turns import Path

QWEN_NOT_RECORDED = (
    "Tool execution result was not recorded \u2014 likely interrupted by network failure, "
    "abort, or process exit. Treat as failure and retry if needed."
)
GEMINI_CANCELLED = "[Operation Cancelled] Reason: Operation cancelled by user"
_QWEN_ENVELOPE = ("sessionId", "timestamp")
_QWEN_AFTER = ("cwd", "version", "gitBranch")


def _qwen(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    data = records[index].data
    names = {
        (p.get("functionCall") or {}).get("id"): (p.get("functionCall") or {}).get("name")
        for p in (data.get("message") or {}).get("parts") or ()
        if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)
    }
    parent = data.get("uuid")
    raws = []
    for _, call_id in calls:
        new = str(new_id("qwen-code", str(data.get("sessionId", "")), call_id))
        entry: dict[str, Any] = {"uuid": new, "parentUuid": parent}
        entry.update({k: data[k] for k in _QWEN_ENVELOPE if k in data})
        entry["type"] = "tool_result"
        if "provenance" in data:  # builds that write it (0.15+) tag a result so
            entry["provenance"] = "tool_result"
        entry.update({k: data[k] for k in _QWEN_AFTER if k in data})
        response = {"id": call_id, "name": names.get(call_id) or "unknown"}
        response["response"] = {"error": QWEN_NOT_RECORDED}
        entry["message"] = {"role": "user", "parts": [{"functionResponse": response}]}
        raws.append(dump(entry, records[index].raw))
        parent = new
    repoint(edits, index, "parentUuid", data.get("uuid"), str(parent))
    edits.insert_after(index, raws)
    note(edits, records, calls, "tool_result with its resume repair's functionResponse error")


def _qwen_orphans(edits: FixEdits, index: int, data: dict[str, Any], gone: set[str]) -> bool:
    parts = (data.get("message") or {}).get("parts")
    if not isinstance(parts, list):
        return False
    drop = [
        i
        for i, p in enumerate(parts)
        if isinstance(p, dict) and (p.get("functionResponse") or {}).get("id") in gone
    ]
    if not drop:
        return False
    if len(drop) == len(parts):
        empty(edits, index, data, "uuid", "parentUuid")
        return True
    return edits.edit(index, [RemoveItem(("message", "parts"), i) for i in drop])


def _gemini(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    """The call's `toolCalls` entry (a Gemini CLI call carries its own result) gets the
    cancelled result; a call only in the message's `content` (a `functionCall` part, recorded
    before its entry was) gets the entry Gemini CLI records for a cancelled call."""
    data = edits.data(index)
    changes: list[Edit] = []
    wanted = ids(calls)
    for base, message in _gemini_messages(data):
        entries = message.get("toolCalls")
        listed = entries if isinstance(entries, list) else []
        have = set()
        for j, call in enumerate(listed):
            if not isinstance(call, dict) or call.get("id") not in wanted:
                continue
            have.add(call.get("id"))
            if not call.get("result"):
                changes += _cancelled((*base, "toolCalls", j), call)
        added = [
            _gemini_entry(part["functionCall"], message.get("timestamp"))
            for part in message.get("content") or ()
            if isinstance(part, dict)
            and isinstance(part.get("functionCall"), dict)
            and part["functionCall"].get("id") in wanted - have
        ]
        if added and isinstance(entries, list):
            changes.append(InsertItems((*base, "toolCalls"), len(entries), tuple(added)))
        elif added:
            changes.append(SetKey(base, "toolCalls", added, after="content"))
    if changes and edits.edit(index, changes):
        note(edits, records, calls, f'status "cancelled" with "{GEMINI_CANCELLED}"', " set")


def _gemini_result(call_id: Any, name: Any) -> list[dict[str, Any]]:
    response = {"id": call_id, "name": name or "", "response": {"error": GEMINI_CANCELLED}}
    return [{"functionResponse": response}]


def _cancelled(path: Path, call: dict[str, Any]) -> list[Edit]:
    result = _gemini_result(call.get("id"), call.get("name"))
    after = "args" if "args" in call else None
    out: list[Edit] = [
        SetValue((*path, "result"), result)
        if "result" in call
        else SetKey(path, "result", result, after=after)
    ]
    if "status" in call:
        out.append(SetValue((*path, "status"), "cancelled"))
    else:
        out.append(SetKey(path, "status", "cancelled", after="result"))
    return out


def _gemini_entry(call: dict[str, Any], timestamp: Any) -> dict[str, Any]:
    """A `ToolCallRecord` as `GeminiChat.recordCompletedToolCalls` writes a cancelled one."""
    entry = {"id": call.get("id"), "name": call.get("name") or "", "args": call.get("args") or {}}
    entry["result"] = _gemini_result(call.get("id"), call.get("name"))
    entry["status"] = "cancelled"
    if isinstance(timestamp, str):
        entry["timestamp"] = timestamp
    return entry


def _gemini_messages(data: Any) -> list[tuple[Path, dict[str, Any]]]:
    """A JSONL message line, or each message of the chat JSON, with its path."""
    if not isinstance(data, dict):
        return []
    messages = data.get("messages")
    found: list[tuple[Path, dict[str, Any]]] = (
        [((), data)] if "toolCalls" in data or (data.get("type") == "gemini") else []
    )
    if isinstance(messages, list):
        found += [(("messages", k), m) for k, m in enumerate(messages) if isinstance(m, dict)]
    return found


def _gemini_orphans(edits: FixEdits, index: int, data: Any, gone: set[str]) -> bool:
    """A `toolCalls` entry with a result for a call the message's `content` does not make
    (Gemini CLI sends its result all the same): the entry leaves the list."""
    changes: list[Edit] = []
    for base, message in _gemini_messages(data):
        entries = message.get("toolCalls")
        if not isinstance(entries, list):
            continue
        drop = [
            j
            for j, call in enumerate(entries)
            if isinstance(call, dict) and call.get("id") in gone and call.get("result")
        ]
        changes += remove((*base, "toolCalls"), drop, len(entries)) if drop else []
    return bool(changes) and edits.edit(index, changes)


def _copilot_anchor(records: Sequence[Record], edits: FixEdits, index: int) -> int:
    """After the calling message's own tool events (`tool.execution_start`, ...): the log is
    in time order, each event's `parentId` the one before it."""
    data = records[index].data
    requests = (data.get("data") or {}).get("toolRequests") if isinstance(data, dict) else None
    wanted = {r.get("toolCallId") for r in requests or () if isinstance(r, dict)}
    anchor = index
    for k in range(index + 1, len(records)):
        event = records[k].data
        if not isinstance(event, dict) or event.get("type") == "assistant.message":
            break
        if (event.get("data") or {}).get("toolCallId") in wanted and k not in edits.replaced:
            anchor = k
    return anchor


def _copilot(records: Sequence[Record], edits: FixEdits, anchor: int, calls: list[Call]) -> None:
    if records[calls[0][0]].data.get("type") != "assistant.message":  # the legacy history
        COPILOT_LEGACY[1](records, edits, anchor, calls)
        return
    data = records[anchor].data
    parent = data.get("id")
    raws = []
    for _, call_id in calls:
        new = str(new_id("copilot-cli", str(parent), call_id))
        result = {"toolCallId": call_id, "success": False, "error": {"message": INTERRUPTED}}
        entry: dict[str, Any] = {"type": "tool.execution_complete", "data": result, "id": new}
        if "timestamp" in data:
            entry["timestamp"] = data["timestamp"]
        entry["parentId"] = parent
        if "agentId" in data:
            entry["agentId"] = data["agentId"]
        raws.append(dump(entry, records[anchor].raw))
        parent = new
    repoint(edits, anchor, "parentId", data.get("id"), str(parent))
    edits.insert_after(anchor, raws)
    note(edits, records, calls, "failed tool.execution_complete (success false)")


def _anthropic_result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": INTERRUPTED, "is_error": True}


def _droid(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    """One user message with every missing result, after the calling message (or, where the
    next message already answers some of its calls, beside those results)."""
    data = records[index].data
    blocks = [_anthropic_result(call_id) for _, call_id in calls]
    after = index + 1
    nxt = edits.data(after) if after < edits.count else None
    content = ((nxt or {}).get("message") or {}).get("content") if isinstance(nxt, dict) else None
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        at = _leading_results(content)
        if edits.edit(after, [InsertItems(("message", "content"), at, tuple(blocks))]):
            note(edits, records, calls, "tool_result (is_error) added beside its results", "")
        return
    new = str(new_id("factory-droid", str(data.get("id")), calls[0][1]))
    entry: dict[str, Any] = {"type": "message", "id": new}
    if "timestamp" in data:
        entry["timestamp"] = data["timestamp"]
    entry["message"] = {"role": "user", "content": blocks}
    entry["parentId"] = data.get("id")
    repoint(edits, index, "parentId", data.get("id"), new)
    edits.insert_after(index, [dump(entry, records[index].raw)])
    note(edits, records, calls, "tool_result (is_error)")


def _leading_results(content: list[Any]) -> int:
    """Where a missing result goes in a user message: after the results it already holds
    (the API wants every `tool_result` before any other block)."""
    at = 0
    while at < len(content) and (content[at] or {}).get("type") == "tool_result":
        at += 1
    return at


def _droid_orphans(edits: FixEdits, index: int, data: dict[str, Any], gone: set[str]) -> bool:
    content = (data.get("message") or {}).get("content")
    if not isinstance(content, list):
        return False
    drop = [
        i
        for i, b in enumerate(content)
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in gone
    ]
    if not drop:
        return False
    if len(drop) == len(content):
        empty(edits, index, data, "id", "parentId")
        return True
    return edits.edit(index, [RemoveItem(("message", "content"), i) for i in drop])


def _claw_message(call_id: str, name: str) -> dict[str, Any]:
    # claw-code writes its JSON keys sorted (BTreeMap, `runtime/src/session.rs`)
    block = {
        "is_error": True,
        "output": INTERRUPTED,
        "tool_name": name,
        "tool_use_id": call_id,
        "type": "tool_result",
    }
    return {"blocks": [block], "role": "tool"}


_LEGACY = re.compile(r"^messages\[(\d+)\]")


def _claw_anchor(records: Sequence[Record], edits: FixEdits, index: int) -> int:
    """After the calling message and the tool messages that already answer it."""
    while index + 1 < len(records) and index + 1 not in edits.replaced:
        nxt = records[index + 1].data
        if not isinstance(nxt, dict) or (nxt.get("message") or {}).get("role") != "tool":
            break
        index += 1
    return index


def _claw(records: Sequence[Record], edits: FixEdits, anchor: int, calls: list[Call]) -> None:
    data = edits.data(calls[0][0])
    names = {
        call_id: (resolve(data, where) or ((), {}))[1].get("name") or ""
        for call_id, where in call_paths("claw-code", data, ids(calls)).items()
    }
    legacy = [(i, c) for i, c in calls if "messages" in data and "type" not in data]
    if legacy:  # the legacy session document: the tool messages join its `messages`
        _claw_legacy(records, edits, legacy, names)
        return
    raws = [
        dump({"message": _claw_message(c, names.get(c, "")), "type": "message"}, records[i].raw)
        for i, c in calls
    ]
    edits.insert_after(anchor, raws)
    note(edits, records, calls, "tool message with an is_error tool_result")


def _claw_legacy(
    records: Sequence[Record], edits: FixEdits, calls: list[Call], names: dict[str, str]
) -> None:
    index = calls[0][0]
    data = edits.data(index)
    paths = call_paths("claw-code", data, ids(calls))
    changes: dict[int, list[dict[str, Any]]] = {}
    messages = data.get("messages") or []
    for _, call_id in calls:
        m = _LEGACY.match(paths.get(call_id, ""))
        if m is None:
            continue
        at = int(m.group(1)) + 1
        while at < len(messages) and (messages[at] or {}).get("role") == "tool":
            at += 1
        changes.setdefault(at, []).append(_claw_message(call_id, names.get(call_id, "")))
    edit = [InsertItems(("messages",), at, tuple(v)) for at, v in sorted(changes.items())]
    if edit and edits.edit(index, edit):
        note(edits, records, calls, "tool message with an is_error tool_result")


def _claw_orphans(edits: FixEdits, index: int, data: dict[str, Any], gone: set[str]) -> bool:
    def answers(message: Any) -> bool:
        blocks = message.get("blocks") if isinstance(message, dict) else None
        return (
            isinstance(blocks, list)
            and bool(blocks)
            and all(
                isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("tool_use_id") in gone
                for b in blocks
            )
        )

    if answers(data.get("message")):
        edits.replace(index, b"")  # claw-code skips an empty line (`Session::load_jsonl`)
        return True
    messages = data.get("messages") or []
    drop = [k for k, m in enumerate(messages) if answers(m)]
    return bool(drop) and edits.edit(index, remove(("messages",), drop, len(messages)))


def _goose(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    """Drop the unanswered request, as Goose's `fix_tool_calling` does before each call."""
    data = edits.data(index)
    gone = ids(calls)
    drop = [
        i
        for i, item in enumerate(data.get("content") or ())
        if isinstance(item, dict) and item.get("type") == "toolRequest" and item.get("id") in gone
    ]
    content = data.get("content") or ()
    if drop and edits.edit(index, remove(("content",), drop, len(content))):
        dropped = (records[index].raw.decode("utf-8", "backslashreplace"),)
        for i, call_id in calls:
            edits.fixed.append(
                Fixed(
                    Fix.TOOL_PAIRS,
                    CALL_WITHOUT_RESULT,
                    records[i].line,
                    f"{call_id}: unanswered toolRequest dropped (kept in the manifest)",
                    dropped,
                )
            )


def _goose_orphans(edits: FixEdits, index: int, data: dict[str, Any], gone: set[str]) -> bool:
    drop = [
        i
        for i, item in enumerate(data.get("content") or ())
        if isinstance(item, dict) and item.get("type") == "toolResponse" and item.get("id") in gone
    ]
    return bool(drop) and edits.edit(index, remove(("content",), drop, len(data["content"])))


LINE_PLANNERS: dict[str, tuple[Anchor, Planner]] = {
    "qwen-code": (here, _qwen),
    "gemini-cli": (here, _gemini),
    "copilot-cli": (_copilot_anchor, _copilot),
    "factory-droid": (here, _droid),
    "claw-code": (_claw_anchor, _claw),
    "goose": (here, _goose),
}
LINE_ORPHANS: dict[str, Orphans] = {
    "gemini-cli": _gemini_orphans,
    "qwen-code": _qwen_orphans,
    "factory-droid": _droid_orphans,
    "claw-code": _claw_orphans,
    "goose": _goose_orphans,
}
