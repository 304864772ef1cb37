"""Undo of a JSON document its runtime saved again since the repair: the values the repair
changed are put back where they still hold what it wrote, and everything else the runtime
wrote since (a turn appended, a title or a timestamp set) is kept.

Gemini CLI, Continue, Cline and Copilot Chat (its `.json` sessions) write a session whole on
every change, so a session used after a repair no longer holds the bytes the repair wrote,
and undo refused it ("changed since the repair"), though the messages the repair changed were
still as it left them. The repair records, beside the document it replaced, the smallest
values where the repaired document differs from the original (`tree_changes`: each a path
and a hash of what the repair left there). Undo reads the document now: when each of those
values is still what the repair left, it sets each back to the original's (`jsonedit`, in
the document's own layout) and keeps the rest; when one changed since, or its path is gone
(the runtime moved the messages), it refuses, as before, naming the path.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from thinkfix.engine.ledger.manifest import unblob
from thinkfix.formats.jsonedit import Edit, InsertItems, RemoveItem, SetValue, edit
from thinkfix.formats.records import parse_json
from thinkfix.formats.repairs import UnsafeEdit
from thinkfix.formats.turns import Path


def value_sha256(value: Any) -> str:
    """A hash of a JSON value (keys in their order, numbers of their type). TypeError for a
    value orjson cannot write (a lone surrogate, an integer past 64 bits)."""
    return hashlib.sha256(orjson.dumps(value)).hexdigest()


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and orjson.dumps(a) == orjson.dumps(b)


def undone_document(entry: dict[str, Any], path: str) -> tuple[bytes | None, str]:
    """The session document at `path` with the repair's values put back (`merged`), for an
    entry whose one record is a whole document the repair recorded `tree_changes` of."""
    records = entry.get("records")
    if not isinstance(records, list) or len(records) != 1 or not isinstance(records[0], dict):
        return None, ""
    record = records[0]
    if record.get("inserted") or "tree_changes" not in record:
        return None, ""
    with open(path, "rb") as fp:
        now = fp.read()
    try:
        return merged(record, unblob(record["before"]), now)
    except TypeError as exc:  # a value orjson cannot write: never a guess
        return None, f"cannot compare the document's values: {exc}"


def _diff(before: Any, after: Any, path: Path, out: list[tuple[Path, int | None]]) -> None:
    """The paths where `after` differs from `before`, smallest first; a list whose length the
    repair changed (a reasoning message inserted) is one change, with its repaired length, so
    that items the runtime appended since can be kept."""
    if isinstance(before, dict) and isinstance(after, dict) and list(before) == list(after):
        for key in after:
            if not _same(before[key], after[key]):
                _diff(before[key], after[key], (*path, key), out)
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            if not _same(b, a):
                _diff(b, a, (*path, i), out)
    elif isinstance(before, list) and isinstance(after, list):
        out.append((path, len(after)))
    else:
        out.append((path, None))


def _at(data: Any, path: Path) -> tuple[bool, Any]:
    """(True, the value at `path`) or (False, None) where the path is not there."""
    for step in path:
        if isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            data = data[step]
            continue
        if not isinstance(data, dict) or not isinstance(step, str) or step not in data:
            return False, None
        data = data[step]
    return True, data


def tree_changes(before: bytes, after: bytes) -> list[dict[str, Any]] | None:
    """The smallest values where the repaired document `after` differs from `before`, each
    as its path and a hash of the repaired value; None when either is no JSON document (an
    object or an array) or when the whole document is the one value changed."""
    old, error = parse_json(before)
    new, error_after = parse_json(after)
    if error or error_after or not isinstance(old, (dict, list)) or type(old) is not type(new):
        return None
    paths: list[tuple[Path, int | None]] = []
    try:
        _diff(old, new, (), paths)
        if not paths or ((), None) in paths:
            return None
        return [_change(new, p, length) for p, length in paths]
    except TypeError:  # a value orjson cannot write: such a document is undone whole only
        return None


def _change(new: Any, path: Path, length: int | None) -> dict[str, Any]:
    value = _at(new, path)[1]
    if length is None:
        return {"path": list(path), "after_sha256": value_sha256(value)}
    return {"path": list(path), "length": length, "after_sha256": value_sha256(value)}


def _paths(changes: Any) -> list[tuple[Path, str, int | None]] | None:
    """The recorded changes, checked as hostile (a manifest is data): None when malformed."""
    if not isinstance(changes, list) or not changes:
        return None
    out = []
    for change in changes:
        if not isinstance(change, dict):
            return None
        path, digest, length = change.get("path"), change.get("after_sha256"), change.get("length")
        if not isinstance(path, list) or not isinstance(digest, str):
            return None
        if not all(isinstance(s, str) or type(s) is int for s in path):
            return None
        if length is not None and (type(length) is not int or length < 0):
            return None
        if not path and length is None:
            return None
        out.append((tuple(path), digest, length))
    return out


def merged(record: dict[str, Any], original: bytes, now: bytes) -> tuple[bytes | None, str]:
    """The document `now` with each value the repair changed set back to `original`'s:
    (the new bytes, ""), or (None, why not); (now, "") unchanged when every value already
    holds the original's (an undo done before)."""
    changes = _paths(record.get("tree_changes"))
    if changes is None:
        return None, ""
    old, error = parse_json(original)
    current, error_now = parse_json(now)
    if error or error_now:
        return None, "the document does not parse now"
    edits: list[Edit] = []
    undone = 0
    for path, digest, length in changes:
        there, value = _at(current, path)
        if not there:
            return None, f"{_shown(path)} is not there now"
        _, before = _at(old, path)
        if length is not None:  # a list: the repair's items, then any appended since
            if not isinstance(value, list) or not isinstance(before, list):
                return None, f"{_shown(path)} is no list now"
            if _same(value[: len(before)], before) and value_sha256(value[:length]) != digest:
                undone += 1
                continue
            if len(value) < length or value_sha256(value[:length]) != digest:
                return None, f"{_shown(path)} changed since the repair"
            edits.extend(_put_back_items(path, before, length, len(value)))
            continue
        if _same(value, before):
            undone += 1
            continue
        if value_sha256(value) != digest:
            return None, f"{_shown(path)} changed since the repair"
        edits.append(SetValue(path, before))
    if undone == len(changes):
        return now, ""
    if undone:
        return None, "part of what the repair changed is already undone"
    try:
        new, _ = edit(now, edits)
    except UnsafeEdit as exc:
        return None, f"cannot put the values back: {exc}"
    return new, ""


def _put_back_items(path: Path, before: list[Any], length: int, now: int) -> list[Edit]:
    """The edits that turn a list's first `length` items (the repair's) into `before`'s,
    leaving the `now - length` items after them as they are."""
    if path and now == length:
        return [SetValue(path, before)]
    return [
        *(RemoveItem(path, i) for i in range(length)),
        InsertItems(path, length, tuple(before)),
    ]


def _shown(path: Path) -> str:
    return (
        "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in path).lstrip(".")
        or "the document"
    )
