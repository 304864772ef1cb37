"""`--fix tool-pairs`: a call left without a result gets the result its runtime itself writes.

An interrupt, a crash or a compaction can leave a tool call with no result, and the next
request to the provider is refused (400) on every later turn. Each runtime has its own
answer for such a call, and the fix writes exactly that record, right after the call:

- Claude Code: a `user` line whose `tool_result` says "Interrupted by user", `is_error`
  true, `toolUseResult` the same text and `sourceToolAssistantUUID` the calling line's
  uuid (`src/query.ts`, `yieldMissingToolResultBlocks(assistantMessages, 'Interrupted by
  user')`, which Claude Code runs on an interrupt). It goes after the last line of the
  calling message, and the lines that hung off that line (`parentUuid`) hang off the new
  one, so the chain Claude Code follows back from the newest line passes through it.
- Codex: a `function_call_output` (`custom_tool_call_output` for a custom tool call)
  whose output is "aborted" (codex-rs `core/src/context_manager/normalize.rs`,
  `ensure_call_outputs_present`, which Codex applies to its history before each request).
- pi: a `toolResult` message "No result provided" with `isError` true
  (`packages/ai/src/providers/transform-messages.ts`, `transformMessages`, pi's own repair
  before each request); on a v2/v3 tree the entries that hung off the call (`parentId`)
  hang off the new entry. A call in a message pi does not replay (`stopReason` aborted or
  error) is left alone: a result for it would be a result without a call.

- OpenCode (its file store: a part per file): the tool part's `state` becomes
  `{...state, status: "error", error: "Tool execution aborted", time: {start, end}}`, what
  OpenCode writes for every part still pending or running when a turn ends
  (`packages/opencode/src/session/processor.ts`, the cleanup after the stream); the time
  is the part's own start, for both ends. No record is added.

Where the call's result is in the file but on another branch of the parent links (Claude
Code writes parallel results as siblings, and resumes along one chain of `parentUuid` from
its newest line; pi follows `parentId` the same way), no result is made up: the record on
the loaded branch that hangs off the result's parent hangs off the result instead, so the
branch passes through the real result.

A result whose call is not in the session is dropped, as Codex drops one before each
request (`remove_orphan_outputs`, the same module) and as the Anthropic API requires (it
refuses a `tool_result` whose `tool_use` is not in the message before): a record that is
only such a result is emptied (its line stays, its bytes go to the manifest) and, in Claude
Code and pi, the records that hung off it hang off its parent; an orphan `tool_result`
block beside other blocks leaves its array.

New ids are derived from the session and call id (uuid5), so a second run plans the same
record, and a call that already has its result is never touched.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from thinkfix.engine.health.fixes.model import Finding, Fix, Fixed, FixEdits, problem_of
from thinkfix.engine.health.fixes.pairs import (
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    Anchor,
    Call,
    Orphans,
    Planner,
    dump,
    empty,
    here,
    new_id,
    note,
    repoint,
)
from thinkfix.engine.health.fixes.pairs_docs import DOC_ORPHANS, DOC_PLANNERS
from thinkfix.engine.health.fixes.pairs_lines import LINE_ORPHANS, LINE_PLANNERS
from thinkfix.engine.health.shapes import TOOL_SHAPES
from thinkfix.engine.health.toolpairs import TREES
from thinkfix.formats.jsonedit import Edit, RemoveItem, SetValue
from thinkfix.formats.records import Record
from thinkfix.formats.turns import Path

CLAUDE_INTERRUPTED = "Interrupted by user"
OPENCODE_ABORTED = "Tool execution aborted"
CODEX_ABORTED = "aborted"
PI_NO_RESULT = "No result provided"
# Claude Code's line envelope, in the order it writes the keys, copied from the calling line.
_CLAUDE_ENVELOPE = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")
_CLAUDE_AFTER = ("agentId", "slug")


def fix_tool_pairs(
    fmt_id: str, records: Sequence[Record], edits: FixEdits, findings: Iterable[Finding]
) -> None:
    """Plan the runtime's own result after every call a finding says has none."""
    planner = _PLANNERS.get(fmt_id)
    if planner is None:
        return
    anchor_of, plan = planner
    groups: dict[int, list[Call]] = {}
    seen: set[str] = set()
    for finding in sorted(findings, key=lambda f: f.record_index):
        index, call_id = finding.record_index, finding.detail
        if problem_of(finding) != CALL_WITHOUT_RESULT or not call_id or call_id in seen:
            continue
        if index in edits.replaced or not isinstance(records[index].data, (dict, list)):
            continue
        seen.add(call_id)
        groups.setdefault(anchor_of(records, edits, index), []).append((index, call_id))
    if fmt_id in TREES:
        groups = _splice_stranded(fmt_id, records, edits, groups)
    for anchor in sorted(groups):
        plan(records, edits, anchor, groups[anchor])
    _drop_orphan_results(fmt_id, records, edits, findings)


def _splice_stranded(
    fmt_id: str, records: Sequence[Record], edits: FixEdits, groups: dict[int, list[Call]]
) -> dict[int, list[Call]]:
    """Splice each call's result that sits on another branch into the loaded branch; the
    calls whose result could not be spliced (or that have none) are returned."""
    wanted = {call_id for calls in groups.values() for _, call_id in calls}
    found: dict[str, int] = {}
    events = TOOL_SHAPES[fmt_id].events
    for i, record in enumerate(records):
        data = record.data if i not in edits.replaced else edits.data(i)
        if isinstance(data, dict):
            for is_call, call_id, _ in events(data):
                if not is_call and call_id in wanted:
                    found.setdefault(call_id, i)
    left: dict[int, list[Call]] = {}
    for anchor, calls in groups.items():
        for index, call_id in calls:
            at = found.get(call_id)
            if at is not None and _splice(fmt_id, records, edits, at):
                edits.fixed.append(
                    Fixed(
                        Fix.TOOL_PAIRS,
                        CALL_WITHOUT_RESULT,
                        records[index].line,
                        f"{call_id}: its result (line {records[at].line}) spliced into the "
                        "branch the runtime loads",
                    )
                )
            else:
                left.setdefault(anchor, []).append((index, call_id))
    return left


def _splice(fmt_id: str, records: Sequence[Record], edits: FixEdits, result: int) -> bool:
    """Make the loaded branch pass through record `result`: the branch's record that hangs
    off the result's parent hangs off the result. False when that cannot be done."""
    id_key, parent_key, ends = TREES[fmt_id]
    nodes: dict[str, tuple[int, str | None]] = {}  # id -> (record index, parent id)
    leaf: str | None = None
    for i, record in enumerate(records):
        data = record.data if i not in edits.replaced else edits.data(i)
        if not isinstance(data, dict) or not isinstance(data.get(id_key), str):
            continue
        parent = data.get(parent_key)
        nodes[data[id_key]] = (i, parent if isinstance(parent, str) else None)
        if not data.get("isSidechain") and (not ends or data.get("type") in ends):
            leaf = data[id_key]
    mine = edits.data(result)
    own = mine.get(id_key) if isinstance(mine, dict) else None
    parent = mine.get(parent_key) if isinstance(mine, dict) else None
    child: int | None = None
    node, seen = leaf, set()
    while node is not None and node not in seen:  # walk the loaded branch from its leaf
        seen.add(node)
        if node == own:
            return False  # already on it
        index, up = nodes.get(node, (None, None))
        if up == parent and index is not None:
            child = index
        node = up
    if child is None or not isinstance(own, str) or parent not in seen:
        return False
    return edits.edit(child, [SetValue((parent_key,), own)])


def _drop_orphan_results(
    fmt_id: str, records: Sequence[Record], edits: FixEdits, findings: Iterable[Finding]
) -> None:
    """Drop each result a finding says has no call (see the module doc)."""
    drop = _ORPHAN_RESULTS.get(fmt_id)
    if drop is None:
        return
    orphans: dict[int, set[str]] = {}
    for finding in findings:
        if problem_of(finding) == RESULT_WITHOUT_CALL and finding.detail:
            orphans.setdefault(finding.record_index, set()).add(finding.detail)
    for index in sorted(orphans):
        data = edits.data(index)
        if isinstance(data, (dict, list)) and drop(edits, index, data, orphans[index]):
            for call_id in sorted(orphans[index]):
                edits.fixed.append(
                    Fixed(
                        Fix.TOOL_PAIRS,
                        RESULT_WITHOUT_CALL,
                        records[index].line,
                        f"{call_id}: its result dropped (no call in the session; the record "
                        "is kept in the manifest)",
                        (records[index].raw.decode("utf-8", "backslashreplace"),),
                    )
                )


def _claude_orphans(edits: FixEdits, index: int, data: dict[str, Any], ids: set[str]) -> bool:
    content = (data.get("message") or {}).get("content") if data.get("type") == "user" else None
    if not isinstance(content, list):
        return False
    gone = [
        i
        for i, b in enumerate(content)
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in ids
    ]
    if not gone:
        return False
    if len(gone) == len(content):
        empty(edits, index, data, "uuid", "parentUuid")
        return True
    return edits.edit(index, [RemoveItem(("message", "content"), i) for i in gone])


def _codex_orphans(edits: FixEdits, index: int, data: dict[str, Any], ids: set[str]) -> bool:
    item = (data.get("payload") or {}) if data.get("type") == "response_item" else data
    if item.get("type") not in _CODEX_OUTPUTS or item.get("call_id") not in ids:
        return False
    edits.replace(index, b"")
    return True


def _pi_orphans(edits: FixEdits, index: int, data: dict[str, Any], ids: set[str]) -> bool:
    message = data.get("message") or {}
    if data.get("type") != "message" or message.get("role") != "toolResult":
        return False
    if message.get("toolCallId") not in ids:
        return False
    empty(edits, index, data, "id", "parentId")
    return True


_CODEX_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_ORPHAN_RESULTS: dict[str, Orphans] = {
    "claude-code": _claude_orphans,
    "codex": _codex_orphans,
    "pi": _pi_orphans,
    **LINE_ORPHANS,
    **DOC_ORPHANS,
}


def _claude_anchor(records: Sequence[Record], edits: FixEdits, index: int) -> int:
    """The last line of the calling message (Claude Code writes a line per content block,
    each with the message's id): results follow the whole message."""
    message_id = (records[index].data.get("message") or {}).get("id")
    anchor = index
    while anchor + 1 < len(records) and anchor + 1 not in edits.replaced:
        nxt = records[anchor + 1].data
        if not isinstance(nxt, dict) or nxt.get("type") != "assistant":
            break
        if message_id is None or (nxt.get("message") or {}).get("id") != message_id:
            break
        anchor += 1
    return anchor


def _claude(records: Sequence[Record], edits: FixEdits, anchor: int, calls: list[Call]) -> None:
    # Only a client tool's call waits for a result line (a server tool's is answered inside
    # the message itself).
    calls = [(i, c) for i, c in calls if c in _client_calls(records[i].data)]
    if not calls:
        return
    last = records[anchor].data
    parent = last.get("uuid")
    raws = []
    for index, call_id in calls:
        call = records[index].data
        new = str(new_id("claude-code", str(call.get("sessionId", "")), call_id))
        entry: dict[str, Any] = {"parentUuid": parent}
        entry.update({k: last[k] for k in _CLAUDE_ENVELOPE if k in last})
        entry.update({k: last[k] for k in _CLAUDE_AFTER if k in last})
        entry["type"] = "user"
        entry["message"] = {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "content": CLAUDE_INTERRUPTED,
                    "is_error": True,
                    "tool_use_id": call_id,
                }
            ],
        }
        entry["uuid"] = new
        if "timestamp" in last:
            entry["timestamp"] = last["timestamp"]
        entry["toolUseResult"] = CLAUDE_INTERRUPTED
        entry["sourceToolAssistantUUID"] = call.get("uuid")
        raws.append(dump(entry, records[anchor].raw))
        parent = new
    repoint(edits, anchor, "parentUuid", last.get("uuid"), str(parent))
    edits.insert_after(anchor, raws)
    note(edits, records, calls, f'"{CLAUDE_INTERRUPTED}" tool_result (is_error)')


def _client_calls(data: dict[str, Any]) -> set[Any]:
    return {
        b.get("id")
        for b in (data.get("message") or {}).get("content") or ()
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }


def _codex(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    data = records[index].data
    enveloped = data.get("type") == "response_item"  # else an item of an early rollout
    item = (data.get("payload") or {}) if enveloped else data
    kind = "custom_tool_call_output" if item.get("type") == "custom_tool_call" else None
    raws = []
    for _, call_id in calls:
        output = {"type": kind or "function_call_output", "call_id": call_id}
        output["output"] = CODEX_ABORTED
        entry: dict[str, Any] = output
        if enveloped:
            entry = {"timestamp": data["timestamp"]} if "timestamp" in data else {}
            entry.update(type="response_item", payload=output)
        raws.append(dump(entry, records[index].raw))
    edits.insert_after(index, raws)
    note(edits, records, calls, f'"{CODEX_ABORTED}" {kind or "function_call_output"}')


def _pi(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    data = records[index].data
    message = data.get("message") or {}
    if message.get("stopReason") in ("aborted", "error"):
        return  # pi drops this message when it replays (`transformMessages`)
    names = {
        block.get("id"): block.get("name")
        for block in message.get("content") or ()
        if isinstance(block, dict) and block.get("type") == "toolCall"
    }
    tree = "id" in data
    parent = data.get("id")
    raws = []
    for _, call_id in calls:
        entry: dict[str, Any] = {"type": "message"}
        if tree:
            new = new_id("pi", str(data.get("id")), call_id).hex[:8]
            entry["id"], entry["parentId"] = new, parent
            parent = new
        if "timestamp" in data:
            entry["timestamp"] = data["timestamp"]
        result: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": names.get(call_id, ""),
            "content": [{"type": "text", "text": PI_NO_RESULT}],
            "isError": True,
        }
        if "timestamp" in message:
            result["timestamp"] = message["timestamp"]
        entry["message"] = result
        raws.append(dump(entry, records[index].raw))
    if tree:
        repoint(edits, index, "parentId", data.get("id"), str(parent))
    edits.insert_after(index, raws)
    note(edits, records, calls, f'"{PI_NO_RESULT}" toolResult (isError)')


def _opencode(records: Sequence[Record], edits: FixEdits, index: int, calls: list[Call]) -> None:
    """A part file of the file store is the part; a record of the SQLite store is a message
    whose `parts` hold it (`engine.health.fixes.stores` lays that onto the part's row)."""
    data = edits.data(index)
    wanted = {call_id for _, call_id in calls}
    parts: list[tuple[Path, dict[str, Any]]] = []
    parts += [((), data)] if isinstance(data, dict) and data.get("type") == "tool" else []
    if isinstance(data, dict) and isinstance(data.get("parts"), list):
        parts += [(("parts", i), p) for i, p in enumerate(data["parts"]) if isinstance(p, dict)]
    changes: list[Edit] = []
    for path, part in parts:
        state = part.get("state")
        if part.get("type") != "tool" or (part.get("callID") or part.get("id")) not in wanted:
            continue
        if not isinstance(state, dict) or state.get("status") in ("completed", "error"):
            continue
        time = state.get("time")
        start = time.get("start", 0) if isinstance(time, dict) else 0
        new = dict(state)
        new["status"], new["error"] = "error", OPENCODE_ABORTED
        new["time"] = {"start": start, "end": start}
        changes.append(SetValue((*path, "state"), new))
    if changes and edits.edit(index, changes):
        note(edits, records, calls, f'tool part set to error "{OPENCODE_ABORTED}"', "")


_PLANNERS: dict[str, tuple[Anchor, Planner]] = {
    "claude-code": (_claude_anchor, _claude),
    "codex": (here, _codex),
    "pi": (here, _pi),
    "opencode": (here, _opencode),
    "kilo": (here, _opencode),  # Kilo CLI: OpenCode's processor (packages/opencode)
    **LINE_PLANNERS,
    **DOC_PLANNERS,
}


def planned_formats() -> frozenset[str]:
    """The formats whose open calls the fix answers."""
    return frozenset(_PLANNERS)
