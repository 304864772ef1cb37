"""Style-preserving JSON edits: change a few values, keep every other byte.

Re-serialising a parsed record cannot be trusted to reproduce it (Node writes
`0.000005` where Python writes `5e-06`; Go writes `\\u003c`; pretty-printed files
use tabs or spaces). So an edit is a byte splice: the spans of the values to
change are located in the original text, and only new values are serialised,
in the style of the file (escaping, separators, indentation). Every edit is
then proven: the spliced text must parse to exactly the intended tree, or the
edit is refused with `UnsafeEdit` and the record is left alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from thinkfix.formats.jsonspans import (
    DEFAULT_STYLE,
    Layout,
    Scan,
    Style,
    dump_str,
    layout_of,
    line_indent,
    value_end,
)
from thinkfix.formats.records import parse_json
from thinkfix.formats.repairs import UnsafeEdit
from thinkfix.formats.turns import Path

# --- edits ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetValue:
    """Replace the value at `path`."""

    path: Path
    value: Any


@dataclass(frozen=True)
class InsertItems:
    """Insert `values` into the array at `path`, before its original element `index`."""

    path: Path
    index: int
    values: tuple[Any, ...]


@dataclass(frozen=True)
class SetKey:
    """Set `key` on the object at `path`; a new key goes right after `after` (else last)."""

    path: Path
    key: str
    value: Any
    after: str | None = None


@dataclass(frozen=True)
class RemoveItem:
    """Remove the array element at `path`'s original index `index` (an emptied text block).

    Indices are those of the original array, like InsertItems'; an insert before
    the same element and its removal together replace it.
    """

    path: Path
    index: int


Edit = SetValue | InsertItems | SetKey | RemoveItem


# --- applying ------------------------------------------------------------------------------


def _separator(text: str, open_at: int, first: int, compact: str) -> str:
    """The separator a one-element container would use: derived from its lead whitespace."""
    lead = text[open_at + 1 : first]
    return "," + lead if "\n" in lead else compact


#: (start, end, order, new text): the span of the original text a new text replaces.
Splice = tuple[int, int, int, str]


def _splices(
    text: str, edits: Sequence[Edit], style: Style, layout: Layout, scan: Scan
) -> list[Splice]:
    out: list[Splice] = []
    for seq, edit in enumerate(edits):
        if isinstance(edit, SetValue):
            start = scan.locate(edit.path)
            end = value_end(text, start)
            base = line_indent(text, start) if layout.unit else ""
            out.append((start, end, seq, layout.dump(edit.value, style, base)))
        elif isinstance(edit, RemoveItem):
            items = scan.items(scan.locate(edit.path))[0]
            if not 0 <= edit.index < len(items) or len(items) < 2:
                raise UnsafeEdit(f"no element {edit.index} to remove beside another")
            if edit.index + 1 < len(items):  # the element and the separator after it
                out.append((items[edit.index][0], items[edit.index + 1][0], seq, ""))
            else:  # the last one: the separator before it and the element
                out.append((items[edit.index - 1][1], items[edit.index][1], seq, ""))
        elif isinstance(edit, InsertItems):
            start = scan.locate(edit.path)
            items, close = scan.items(start)
            if not items:
                out.append(
                    (start, close + 1, seq, _fresh(text, start, list(edit.values), style, layout))
                )
                continue
            sep = (
                text[items[0][1] : items[1][0]]
                if len(items) > 1
                else _separator(text, start, items[0][0], layout.item_sep)
            )
            pretty = "\n" in sep
            base = line_indent(text, items[0][0]) if pretty else ""
            sub = layout if pretty else Layout(layout.key_sep, layout.item_sep, None)
            dumped = [sub.dump(v, style, base) for v in edit.values]
            if edit.index < len(items):
                pos = items[edit.index][0]
                out.append((pos, pos, seq, "".join(d + sep for d in dumped)))
            else:
                pos = items[-1][1]
                out.append((pos, pos, seq, "".join(sep + d for d in dumped)))
        else:
            start = scan.locate(edit.path)
            members, close = scan.members(start)
            same = [m for m in members if m.key == edit.key]
            if same:
                m = same[-1]
                base = line_indent(text, m.start) if layout.unit else ""
                out.append((m.start, m.end, seq, layout.dump(edit.value, style, base)))
                continue
            if not members:
                out.append(
                    (
                        start,
                        close + 1,
                        seq,
                        _fresh(text, start, {edit.key: edit.value}, style, layout),
                    )
                )
                continue
            key_sep = text[members[0].key_end : members[0].start]
            sep = (
                text[members[0].end : members[1].key_start]
                if len(members) > 1
                else _separator(text, start, members[0].key_start, layout.item_sep)
            )
            pretty = "\n" in sep
            base = line_indent(text, members[0].key_start) if pretty else ""
            sub = Layout(key_sep, layout.item_sep, layout.unit if pretty else None)
            anchors = [m for m in members if m.key == edit.after] or members
            pos = anchors[-1].end
            out.append(
                (
                    pos,
                    pos,
                    seq,
                    sep + dump_str(edit.key, style) + key_sep + sub.dump(edit.value, style, base),
                )
            )
    return out


def _fresh(text: str, start: int, value: Any, style: Style, layout: Layout) -> str:
    """A whole new container replacing an empty one, indented like its line."""
    base = line_indent(text, start) if layout.unit else ""
    return layout.dump(value, style, base)


def _merge(edits: Sequence[Edit]) -> list[Edit]:
    """Fold inserts into the same array position into one, keeping their order; an insert
    before an element that is also removed becomes a replacement of that element (so the
    two splices never overlap, whichever end of the array the element is at)."""
    merged: list[Edit] = []
    inserts: dict[tuple[Path, int], int] = {}
    for edit in edits:
        if isinstance(edit, InsertItems):
            key = (edit.path, edit.index)
            if key in inserts:
                prev = merged[inserts[key]]
                assert isinstance(prev, InsertItems)
                merged[inserts[key]] = InsertItems(prev.path, prev.index, prev.values + edit.values)
                continue
            inserts[key] = len(merged)
        merged.append(edit)
    removed = {(e.path, e.index) for e in merged if isinstance(e, RemoveItem)}
    replaced = removed & set(inserts)
    if not replaced:
        return merged
    out: list[Edit] = []
    for edit in merged:
        if (
            not isinstance(edit, (InsertItems, RemoveItem))
            or (edit.path, edit.index) not in replaced
        ):
            out.append(edit)
        elif isinstance(edit, InsertItems):
            if edit.values[:-1]:
                out.append(InsertItems(edit.path, edit.index, edit.values[:-1]))
            out.append(SetValue(edit.path + (edit.index,), edit.values[-1]))
    return out


def _resolve(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def apply_tree(data: Any, edits: Sequence[Edit]) -> Any:
    """The same edits on a parsed tree (mutated in place; also returned)."""
    try:
        targets = [
            (edit, _resolve(data, edit.path[:-1] if isinstance(edit, SetValue) else edit.path))
            for edit in edits
        ]
        for edit, target in targets:
            if isinstance(edit, RemoveItem):
                target[edit.index]
    except (KeyError, IndexError, TypeError) as exc:
        raise UnsafeEdit(f"path not found: {exc}") from exc
    for edit, target in targets:
        if isinstance(edit, SetValue):
            target[edit.path[-1]] = edit.value
        elif isinstance(edit, SetKey):
            if edit.key in target or edit.after not in target:
                target[edit.key] = edit.value
            else:
                items = list(target.items())
                at = [k for k, _ in items].index(edit.after) + 1
                items.insert(at, (edit.key, edit.value))
                target.clear()
                target.update(items)
    # Inserts and removals name original indices: apply them from the end of each array,
    # a removal before an insert at the same index (the insert goes before that element).
    shifting = [(e, t) for e, t in targets if isinstance(e, (InsertItems, RemoveItem))]
    for edit, target in sorted(
        shifting, key=lambda et: (et[0].index, isinstance(et[0], RemoveItem)), reverse=True
    ):
        if isinstance(edit, RemoveItem):
            del target[edit.index]
        else:
            target[edit.index : edit.index] = list(edit.values)
    return data


def edit(raw: bytes, edits: Sequence[Edit], style: Style = DEFAULT_STYLE) -> tuple[bytes, Any]:
    """Apply `edits` to one record's bytes; return the new bytes and their parsed tree.

    Raises UnsafeEdit when the result would not parse to exactly the edited
    tree; the caller then leaves the record untouched.

    A record may be tens of megabytes (#22 item 9), so its copies are made one after
    another, never side by side: the new bytes are spliced from views of `raw` (the text
    is only read to locate the spans and dropped before the join), and the proof parses
    the original and applies the edits (which frees the values they replace) before it
    parses the new bytes.
    """
    if not edits:
        data, error = parse_json(raw)
        if error is not None:
            raise UnsafeEdit(error)
        return raw, data
    edits = _merge(edits)
    try:
        text = raw.decode("utf-8")
        scan = Scan(text)
        splices = _splices(text, edits, style, layout_of(text, scan), scan)
    except (UnicodeDecodeError, IndexError, ValueError, RecursionError) as exc:
        raise UnsafeEdit(f"cannot locate edit: {exc}") from exc
    offsets = _byte_offsets(text, {i for s in splices for i in s[:2]})
    del text, scan
    new_raw = _spliced(raw, splices, offsets)
    try:
        after = _proven(raw, new_raw, edits)
    except (ValueError, RecursionError) as exc:
        raise UnsafeEdit(f"the spliced record does not parse: {exc}") from exc
    return new_raw, after


def _spliced(raw: bytes, splices: list[Splice], offsets: dict[int, int]) -> bytes:
    """`raw` with each splice's span (character offsets, `offsets` maps them to bytes)
    replaced by its text. `splices` is emptied as it is encoded, so a long new value is never
    held as text and as bytes beside the joined result; the runs kept are views of `raw`."""
    new = [
        (offsets[a], offsets[b], seq, text.encode("utf-8")) for a, b, seq, text in _drain(splices)
    ]
    new.sort(key=lambda s: (s[0], s[1], s[2]), reverse=True)
    view = memoryview(raw)
    limit = len(raw)
    pieces: list[bytes | memoryview] = []
    for start, end, _seq, data in new:
        if end > limit:
            raise UnsafeEdit("overlapping edits")
        pieces.extend((view[end:limit], data))
        limit = start
    pieces.append(view[:limit])
    try:
        return b"".join(reversed(pieces))
    finally:
        pieces.clear()
        view.release()


def _drain(splices: list[Splice]) -> Iterator[Splice]:
    """Each splice, taken out of the list as it is handed over (so it is freed once used)."""
    while splices:
        yield splices.pop()


def _byte_offsets(text: str, positions: Iterable[int]) -> dict[int, int]:
    """The UTF-8 byte offset of each character offset in `positions` (the same in ASCII)."""
    if text.isascii():
        return {p: p for p in positions}
    out, at, size = {}, 0, 0
    for p in sorted(positions):
        size += len(text[at:p].encode("utf-8"))
        out[p], at = size, p
    return out


def _proven(old: bytes, new: bytes, edits: Sequence[Edit]) -> Any:
    """`new` parsed, when it parses to the edited `old`; UnsafeEdit when it does not. Both
    are parsed by the same parser (orjson and the stdlib differ on huge integers), the edits
    applied to the first before the second is parsed (only one whole tree at a time)."""
    try:
        expected = apply_tree(orjson.loads(old), edits)
        after = orjson.loads(new)
    except orjson.JSONDecodeError:
        expected = apply_tree(json.loads(_unmarked(old)), edits)
        after = json.loads(_unmarked(new))
    if after != expected:
        raise UnsafeEdit("the spliced record does not parse to the intended value")
    return after


def _unmarked(raw: bytes) -> str:
    """The text without a leading byte-order mark, as the stdlib parser wants it."""
    return raw.decode("utf-8").removeprefix("\ufeff")


def dump_record(value: Any, style: Style = DEFAULT_STYLE, like: bytes = b"") -> bytes:
    """A new compact record (a JSONL line) with the separators of a neighbour `like`."""
    layout = layout_of(like.decode("utf-8", "replace")) if like else Layout()
    return Layout(layout.key_sep, layout.item_sep, None).dump(value, style).encode("utf-8")
