"""What the `tool-pairs` fix's planners share: the findings' names, the new records' ids,
and the few edits every runtime's planner makes (a parent link moved, a record emptied).

Each runtime's record for a call left without a result lives with its planner
(`toolpairs.py`: Claude Code, Codex, pi, OpenCode; `pairs_lines.py`: the other line
formats; `pairs_docs.py`: the formats whose session is one JSON document).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from thinkfix.engine.health.fixes.model import Fix, Fixed, FixEdits
from thinkfix.engine.health.shapes import TOOL_SHAPES
from thinkfix.formats.jsonedit import Edit, RemoveItem, SetValue, dump_record
from thinkfix.formats.jsonspans import Style
from thinkfix.formats.records import Record
from thinkfix.formats.turns import Path

CALL_WITHOUT_RESULT = "call-without-result"
RESULT_WITHOUT_CALL = "result-without-call"
#: The result written where a runtime writes none of its own for a call that never finished
#: (the words OpenCode sends for such a call, `session/message-v2.ts`, `toModelMessages`).
INTERRUPTED = "[Tool execution was interrupted]"
_NAMESPACE = uuid.UUID("6d1c4f0e-2f4a-5b8e-9a57-7468696e6b66")  # thinkfix's own

#: One call left without a result: the index of the record that holds it, and its id.
Call = tuple[int, str]
#: The record after which a call's result goes (the calling message's last record).
Anchor = Callable[[Sequence[Record], FixEdits, int], int]
#: Plans the results of the calls of one anchor.
Planner = Callable[[Sequence[Record], FixEdits, int, list[Call]], None]
#: Drops the orphan results (ids) of a record; True when something was dropped.
Orphans = Callable[[FixEdits, int, Any, set[str]], bool]


def new_id(*parts: str) -> uuid.UUID:
    """An id derived from the session and the call, so a second run plans the same bytes."""
    return uuid.uuid5(_NAMESPACE, "\x1f".join(parts))


def here(records: Sequence[Record], edits: FixEdits, index: int) -> int:
    return index


def dump(value: dict[str, Any], like: bytes) -> bytes:
    """A new line in the style (escaping, separators) of its neighbour `like`."""
    return dump_record(value, Style.sniff([like]), like)


def repoint(edits: FixEdits, after: int, key: str, old: Any, new: str | None) -> None:
    """Records after `after` whose `key` (their parent link) is `old` get `new`."""
    if not isinstance(old, str):
        return
    for k in range(after + 1, edits.count):
        if old.encode() not in edits.raw(k):
            continue
        data = edits.data(k)
        if isinstance(data, dict) and data.get(key) == old:
            edits.edit(k, [SetValue((key,), new)])


def empty(edits: FixEdits, index: int, data: dict[str, Any], own: str, parent: str) -> None:
    """Empty record `index`; the records that hung off it (`parent` key) hang off its parent."""
    edits.replace(index, b"")
    target = data.get(parent)
    if isinstance(target, str) or target is None:
        repoint(edits, index, parent, data.get(own), target)


def note(
    edits: FixEdits, records: Sequence[Record], calls: list[Call], what: str, verb: str = " added"
) -> None:
    for index, call_id in calls:
        line = records[index].line
        edits.fixed.append(
            Fixed(Fix.TOOL_PAIRS, CALL_WITHOUT_RESULT, line, f"{call_id}: {what}{verb}")
        )


def call_paths(fmt_id: str, data: Any, wanted: set[str]) -> dict[str, str]:
    """The JSON path of each call in `wanted` inside a record (as its check names it)."""
    return {
        call_id: path
        for is_call, call_id, path in TOOL_SHAPES[fmt_id].events(data)
        if is_call and call_id in wanted
    }


def ids(calls: list[Call]) -> set[str]:
    return {call_id for _, call_id in calls}


def remove(path: Path, drop: Sequence[int], length: int) -> list[Edit]:
    """Items `drop` out of the list at `path` (of `length` items); all of them: an empty list
    (a splice cannot remove an array's last element on its own)."""
    if len(drop) == length:
        return [SetValue(path, [])]
    return [RemoveItem(path, i) for i in drop]
