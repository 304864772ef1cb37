"""`--fix tool-pairs` for the OpenAI-message runtimes (Kimi CLI, Hermes, OpenAI chat logs,
Copilot CLI's legacy history) and the Cline family (Cline, Roo Code, Kilo Code), whether a
message is a line of its own or an item of a document's message list:

- Hermes: the `tool` message it appends for a call an interrupt skipped
  (`agent/tool_executor.py`, `execute_tool_calls_concurrent`, through
  `tool_dispatch_helpers.make_tool_result_message`).
- Cline, Roo Code, Kilo Code: the `tool_result` "Task was interrupted before this tool call
  could be completed." that resuming a task adds for each unanswered `tool_use`
  (Roo-Code `src/core/task/Task.ts`, `resumeTaskFromHistory`; Cline's the same), in the
  user message after the call, after the results it already holds.
- Kimi CLI writes an assistant message and its results together, under a shield
  (`soul/kimisoul.py`, `_grow_context`), so it has no record of its own for an open call:
  its error-result shape (`soul/message.py`, `tool_result_to_message`) saying
  `INTERRUPTED`; OpenAI chat logs and Copilot's legacy file: a plain `tool` message.

- Continue: a `message.toolCalls` entry without a `toolCallStates` entry gets the state
  Continue keeps for a call the user cancelled, `{toolCallId, toolCall, status: "canceled",
  parsedArgs}` (`core/index.d.ts` `ToolCallState`, gui `sessionSlice.ts` `cancelToolCall`);
  `constructMessages` (gui/src/redux/util/constructMessages.ts) then sends the `tool`
  message "The user cancelled this tool call." for it.

A `tool` message that answers no call is dropped (its line emptied: Kimi skips an empty
line, `Context.restore`; in a document it leaves the list); so is a Continue state whose
call its message does not make (`constructMessages` would send its `tool` message anyway).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from thinkfix.engine.health.fixes.model import FixEdits, resolve
from thinkfix.engine.health.fixes.pairs import (
    INTERRUPTED,
    Anchor,
    Call,
    Orphans,
    Planner,
    call_paths,
    dump,
    here,
    ids,
    note,
    remove,
)
from thinkfix.formats.jsonedit import Edit, InsertItems, RemoveItem, SetKey, SetValue
from thinkfix.formats.records import Record
from thinkfix.formats.turns import Path

#: What `constructMessages` sends for a `canceled` state (`core/tools/constants.ts`).
CONTINUE_CANCELLED = "The user cancelled this tool call."
CLINE_INTERRUPTED = "Task was interrupted before this tool call could be completed."
#: `[k].tool_calls[j]`, `messages[k].tool_calls[j]`: a call inside a document's list.
_IN_LIST = re.compile(r"^(\w*)\[(\d+)\]\.(?:tool_calls|content)\[")


def _hermes(call_id: str, name: str) -> dict[str, Any]:
    text = f"[Tool execution cancelled \u2014 {name} was skipped due to user interrupt]"
    return {
        "role": "tool",
        "name": name,
        "tool_name": name,
        "content": text,
        "tool_call_id": call_id,
        "effect_disposition": "none",
    }


def _kimi(call_id: str, name: str) -> dict[str, Any]:
    # one text part is written as a plain string (`Context`, kosong's `Message`)
    return {
        "role": "tool",
        "content": f"<system>ERROR: {INTERRUPTED}</system>",
        "tool_call_id": call_id,
    }


def _openai(call_id: str, name: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED}


def _copilot_legacy(call_id: str, name: str) -> dict[str, Any]:
    return {"role": "tool", "content": INTERRUPTED, "tool_call_id": call_id}


Maker = Callable[[str, str], dict[str, Any]]
#: Records a line-format runtime writes after an assistant message and before its results.
_BETWEEN = {"kimi-cli": frozenset({"tool", "_usage"})}


def _role(data: Any) -> Any:
    return data.get("role") if isinstance(data, dict) else None


def _openai_planner(fmt_id: str, make: Maker) -> tuple[Anchor, Planner]:
    between = _BETWEEN.get(fmt_id, frozenset({"tool"}))

    def anchor(records: Sequence[Record], edits: FixEdits, index: int) -> int:
        """A message of its own line: after it and the results that already follow it."""
        if "tool_calls" not in (records[index].data or {}):
            return index  # a document, or a line holding a list of messages
        while index + 1 < len(records) and index + 1 not in edits.replaced:
            if _role(records[index + 1].data) not in between:
                break
            index += 1
        return index

    def plan(records: Sequence[Record], edits: FixEdits, at: int, calls: list[Call]) -> None:
        index = calls[0][0]
        data = edits.data(index)
        paths = call_paths(fmt_id, data, ids(calls))
        names = {c: _name(data, p) for c, p in paths.items()}
        lone = [(i, c) for i, c in calls if c in paths and not _IN_LIST.match(paths[c])]
        if lone:
            raws = [dump(make(c, names[c]), records[i].raw) for i, c in lone]
            edits.insert_after(at, raws)
            note(edits, records, lone, "tool message")
        listed = [(i, c) for i, c in calls if c in paths and _IN_LIST.match(paths[c])]
        inserts: dict[tuple[Path, int], list[dict[str, Any]]] = {}
        for _, call_id in listed:
            key, k = _list_at(paths[call_id])
            listed_in = data.get(str(key[0])) if key and isinstance(data, dict) else data
            items = listed_in if isinstance(listed_in, list) else []
            k += 1
            while k < len(items) and _role(items[k]) == "tool":
                k += 1
            inserts.setdefault((key, k), []).append(make(call_id, names[call_id]))
        changes = [InsertItems(key, k, tuple(v)) for (key, k), v in sorted(inserts.items())]
        if changes and edits.edit(index, changes):
            note(edits, records, listed, "tool message")

    return anchor, plan


def _list_at(path: str) -> tuple[Path, int]:
    m = _IN_LIST.match(path)
    assert m is not None
    return ((m.group(1),) if m.group(1) else ()), int(m.group(2))


def _name(data: Any, path: str) -> str:
    found = resolve(data, path)
    call = found[1] if found else None
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else ""


def _openai_orphans(edits: FixEdits, index: int, data: Any, gone: set[str]) -> bool:
    def answers(message: Any) -> bool:
        return _role(message) == "tool" and message.get("tool_call_id") in gone

    if isinstance(data, dict) and answers(data):
        edits.replace(index, b"")
        return True
    changes: list[Edit] = []
    for key, items in _lists(data):
        drop = [k for k, m in enumerate(items) if answers(m)]
        changes += remove(key, drop, len(items)) if drop else []
    return bool(changes) and edits.edit(index, changes)


def _lists(data: Any) -> list[tuple[Path, list[Any]]]:
    if isinstance(data, list):
        return [((), data)]
    if not isinstance(data, dict):
        return []
    return [((k,), data[k]) for k in ("messages", "chatMessages") if isinstance(data.get(k), list)]


def _cline(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    """The results go in the user message after the call (after the results it holds; a
    string content becomes blocks), or in a new user message when none follows."""
    data = edits.data(index)
    if not isinstance(data, list):
        return
    paths = call_paths("cline", data, ids(calls))
    by_message: dict[int, list[Call]] = {}
    for i, call_id in calls:
        m = _IN_LIST.match(paths.get(call_id, ""))
        if m is not None:
            by_message.setdefault(int(m.group(2)), []).append((i, call_id))
    changes: list[Edit] = []
    for k, mine in sorted(by_message.items()):
        blocks = tuple(
            {"type": "tool_result", "tool_use_id": c, "content": CLINE_INTERRUPTED} for _, c in mine
        )
        nxt = data[k + 1] if k + 1 < len(data) else None
        content = nxt.get("content") if isinstance(nxt, dict) and _role(nxt) == "user" else None
        if isinstance(content, list):
            changes.append(InsertItems((k + 1, "content"), _leading(content), blocks))
        elif isinstance(content, str):
            text = ({"type": "text", "text": content},) if content else ()
            changes.append(SetValue((k + 1, "content"), list(blocks + text)))
        else:
            message: dict[str, Any] = {"role": "user", "content": list(blocks)}
            if isinstance(data[k], dict) and "ts" in data[k]:
                message["ts"] = data[k]["ts"]
            changes.append(InsertItems((), k + 1, (message,)))
    if changes and edits.edit(index, changes):
        note(edits, records, calls, f'tool_result "{CLINE_INTERRUPTED}"')


def _leading(content: list[Any]) -> int:
    at = 0
    while at < len(content) and isinstance(content[at], dict):
        if content[at].get("type") != "tool_result":
            break
        at += 1
    return at


def _cline_orphans(edits: FixEdits, index: int, data: Any, gone: set[str]) -> bool:
    if not isinstance(data, list):
        return False
    changes: list[Edit] = []
    gone_messages: list[int] = []
    for k, message in enumerate(data):
        content = message.get("content") if _role(message) == "user" else None
        if not isinstance(content, list):
            continue
        drop = [
            j
            for j, b in enumerate(content)
            if isinstance(b, dict)
            and b.get("type") == "tool_result"
            and b.get("tool_use_id") in gone
        ]
        if drop and len(drop) == len(content):
            gone_messages.append(k)
        else:
            changes += [RemoveItem((k, "content"), j) for j in drop]
    if gone_messages:
        changes += remove((), gone_messages, len(data))
    return bool(changes) and edits.edit(index, changes)


def _continue(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    """Each open call of an assistant history item gets a `canceled` state, placed among the
    item's states in the order of its calls (the key made after `contextItems` if absent)."""
    data = edits.data(index)
    history = data.get("history") if isinstance(data, dict) else None
    if not isinstance(history, list):
        return
    wanted = ids(calls)
    changes: list[Edit] = []
    for i, item in enumerate(history):
        message = item.get("message") if isinstance(item, dict) else None
        listed = message.get("toolCalls") if isinstance(message, dict) else None
        if not isinstance(listed, list) or _role(message) != "assistant":
            continue
        order = [c.get("id") if isinstance(c, dict) else None for c in listed]
        states = item.get("toolCallStates")
        have = [_state_id(s) for s in states] if isinstance(states, list) else []
        new = [(k, c) for k, c in enumerate(listed) if order[k] in wanted - set(have)]
        if not new:
            continue
        if not isinstance(states, list):
            after = "contextItems" if "contextItems" in item else None
            value = [_canceled(c) for _, c in new]
            changes.append(SetKey(("history", i), "toolCallStates", value, after=after))
            continue
        inserts: dict[int, list[dict[str, Any]]] = {}
        for k, call in new:
            at = sum(1 for s in have if s in order and order.index(s) < k)
            inserts.setdefault(at, []).append(_canceled(call))
        path: Path = ("history", i, "toolCallStates")
        changes += [InsertItems(path, at, tuple(v)) for at, v in sorted(inserts.items())]
    if changes and edits.edit(index, changes):
        note(edits, records, calls, f'state "canceled" ("{CONTINUE_CANCELLED}" sent)')


def _state_id(state: Any) -> Any:
    call = state.get("toolCall") if isinstance(state, dict) else None
    return call.get("id") if isinstance(call, dict) else None


def _canceled(call: dict[str, Any]) -> dict[str, Any]:
    """The state Continue keeps for a cancelled call; `parsedArgs` as `tryParseJson` gives it
    (core/util/messageConversion.ts: the arguments parsed, else the string itself)."""
    function = call.get("function")
    raw = function.get("arguments") if isinstance(function, dict) else None
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        parsed = raw
    return {
        "toolCallId": call.get("id"),
        "toolCall": call,
        "status": "canceled",
        "parsedArgs": parsed,
    }


def _continue_orphans(edits: FixEdits, index: int, data: Any, gone: set[str]) -> bool:
    history = data.get("history") if isinstance(data, dict) else None
    changes: list[Edit] = []
    for i, item in enumerate(history if isinstance(history, list) else ()):
        states = item.get("toolCallStates") if isinstance(item, dict) else None
        if isinstance(states, list):
            drop = [j for j, s in enumerate(states) if _state_id(s) in gone]
            changes += remove(("history", i, "toolCallStates"), drop, len(states)) if drop else []
    return bool(changes) and edits.edit(index, changes)


_CLINE = (here, _cline)
DOC_PLANNERS: dict[str, tuple[Anchor, Planner]] = {
    "kimi-cli": _openai_planner("kimi-cli", _kimi),
    "openai-chat": _openai_planner("openai-chat", _openai),
    "hermes": _openai_planner("hermes", _hermes),
    "cline": _CLINE,
    "roo-code": _CLINE,
    "kilo-code": _CLINE,
    "continue": (here, _continue),
}
DOC_ORPHANS: dict[str, Orphans] = {
    "kimi-cli": _openai_orphans,
    "openai-chat": _openai_orphans,
    "hermes": _openai_orphans,
    "cline": _cline_orphans,
    "roo-code": _cline_orphans,
    "kilo-code": _cline_orphans,
    "continue": _continue_orphans,
}
#: Copilot CLI's legacy history file keeps OpenAI messages under `chatMessages`.
COPILOT_LEGACY = _openai_planner("copilot-cli", _copilot_legacy)
