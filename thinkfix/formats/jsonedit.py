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
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from thinkfix.formats.records import parse_json
from thinkfix.formats.repairs import UnsafeEdit
from thinkfix.formats.turns import Path

_DECODER = json.JSONDecoder()
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"[ \t]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
_HEX_ESCAPE = re.compile(r"\\u([0-9a-f]{4})")

_NON_ASCII_ESCAPE = re.compile(rb"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])[0-9a-fA-F]")
_HTML_ESCAPE = re.compile(rb"\\u00(?:3[cCeE]|26)")
_ANY_HEX_ESCAPE = re.compile(rb"\\u[0-9a-fA-F]{4}")


@dataclass(frozen=True)
class Style:
    """How a file escapes strings; sniffed from its bytes, applied to new strings only."""

    ensure_ascii: bool = False  # non-ASCII written as \\uXXXX (Python's default)
    escape_html: bool = False  # <, >, &, U+2028, U+2029 written as \\u003c ... (Go)
    escape_slash: bool = False  # / written as \\/ (PHP)
    upper_hex: bool = False  # \\u00E9 rather than \\u00e9

    @classmethod
    def sniff(cls, chunks: Iterable[bytes]) -> Style:
        """The escaping style shared by `chunks` (a file's records); raw UTF-8 when unsure."""
        has_non_ascii = has_ascii_escape = has_html_escape = has_raw_html = False
        has_slash_escape = has_raw_slash = False
        upper = lower = 0
        for raw in chunks:
            if b"\\" not in raw:
                if not raw.isascii():
                    has_non_ascii = True
                has_raw_html = has_raw_html or any(c in raw for c in (b"<", b">", b"&"))
                has_raw_slash = has_raw_slash or b"/" in raw
                continue
            # Each flag only ever turns on, and a regex search over a block is the cost: a
            # search whose answer can no longer change the style is skipped.
            if not raw.isascii():
                has_non_ascii = True
            elif not (has_ascii_escape or has_non_ascii) and _NON_ASCII_ESCAPE.search(raw):
                has_ascii_escape = True
            if not has_raw_html and any(c in raw for c in (b"<", b">", b"&")):
                has_raw_html = True
            if not (has_html_escape or has_raw_html) and _HTML_ESCAPE.search(raw):
                has_html_escape = True
            if b"\\/" in raw:
                has_slash_escape = True
                if not has_raw_slash and b"/" in raw.replace(b"\\/", b""):
                    has_raw_slash = True
            elif b"/" in raw:
                has_raw_slash = True
            if upper + lower < 64:
                for match in _ANY_HEX_ESCAPE.finditer(raw):
                    digits = match.group()[2:]
                    if digits.upper() != digits.lower():
                        if digits == digits.upper():
                            upper += 1
                        else:
                            lower += 1
                    if upper + lower >= 64:
                        break
        return cls(
            ensure_ascii=has_ascii_escape and not has_non_ascii,
            escape_html=has_html_escape and not has_raw_html,
            escape_slash=has_slash_escape and not has_raw_slash,
            upper_hex=upper > lower,
        )


DEFAULT_STYLE = Style()


def dump_str(value: str, style: Style = DEFAULT_STYLE) -> str:
    """A JSON string literal for `value`, escaped the way the file escapes."""
    if style.ensure_ascii:
        out = json.dumps(value)
    else:
        try:
            out = orjson.dumps(value).decode("utf-8")
        except orjson.JSONEncodeError:  # lone surrogates: escape them, as Node does
            out = _SURROGATE.sub(
                lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False)
            )
    if style.escape_html:
        out = (
            out.replace("<", "\\u003c")
            .replace(">", "\\u003e")
            .replace("&", "\\u0026")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )
    if style.escape_slash:
        out = out.replace("/", "\\/")
    if style.upper_hex:
        out = _HEX_ESCAPE.sub(lambda m: "\\u" + m.group(1).upper(), out)
    return out


@dataclass(frozen=True)
class Layout:
    """Separators and indentation for new containers, taken from the surrounding text."""

    key_sep: str = ":"
    item_sep: str = ","
    unit: str | None = None  # indentation unit of a pretty-printed document

    def dump(self, value: Any, style: Style, base: str = "") -> str:
        """Serialise a new value; `base` is the indentation of the line it starts on."""
        if isinstance(value, str):
            return dump_str(value, style)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        if isinstance(value, dict):
            if not value:
                return "{}"
            if self.unit is None:
                return (
                    "{"
                    + self.item_sep.join(
                        dump_str(str(k), style) + self.key_sep + self.dump(v, style)
                        for k, v in value.items()
                    )
                    + "}"
                )
            inner = base + self.unit
            return (
                "{\n"
                + ",\n".join(
                    inner + dump_str(str(k), style) + self.key_sep + self.dump(v, style, inner)
                    for k, v in value.items()
                )
                + "\n"
                + base
                + "}"
            )
        if isinstance(value, (list, tuple)):
            if not value:
                return "[]"
            if self.unit is None:
                return "[" + self.item_sep.join(self.dump(v, style) for v in value) + "]"
            inner = base + self.unit
            return (
                "[\n"
                + ",\n".join(inner + self.dump(v, style, inner) for v in value)
                + "\n"
                + base
                + "]"
            )
        raise TypeError(f"cannot serialise {type(value).__name__}")


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


# --- locating spans in the original text ---------------------------------------------------


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _value_end(text: str, i: int) -> int:
    """End offset of the JSON value starting at `i`, skipped at C speed."""
    if text[i] == '"':
        return int(_scanstring(text, i + 1)[1])
    try:
        return int(_DECODER.raw_decode(text, i)[1])
    except (ValueError, RecursionError) as exc:
        raise UnsafeEdit(f"cannot skip value at {i}: {exc}") from exc


@dataclass(frozen=True)
class _Member:
    key: str
    key_start: int
    key_end: int
    start: int
    end: int


def _members(text: str, i: int) -> tuple[list[_Member], int]:
    """Members of the object opening at `i`, and the offset of its `}`."""
    if text[i] != "{":
        raise UnsafeEdit(f"expected an object at {i}")
    members: list[_Member] = []
    j = _ws(text, i + 1)
    if text[j] == "}":
        return members, j
    while True:
        if text[j] != '"':
            raise UnsafeEdit(f"expected a key at {j}")
        key, key_end = _scanstring(text, j + 1)
        k = _ws(text, key_end)
        if text[k] != ":":
            raise UnsafeEdit(f"expected ':' at {k}")
        v = _ws(text, k + 1)
        end = _value_end(text, v)
        members.append(_Member(key, j, key_end, v, end))
        j, closed = _next(text, end, "}")
        if closed:
            return members, j


def _items(text: str, i: int) -> tuple[list[tuple[int, int]], int]:
    """(start, end) of each element of the array opening at `i`, and the offset of its `]`."""
    if text[i] != "[":
        raise UnsafeEdit(f"expected an array at {i}")
    items: list[tuple[int, int]] = []
    j = _ws(text, i + 1)
    if text[j] == "]":
        return items, j
    while True:
        end = _value_end(text, j)
        items.append((j, end))
        j, closed = _next(text, end, "]")
        if closed:
            return items, j


def _next(text: str, end: int, close: str) -> tuple[int, bool]:
    """Past an element ending at `end`: where the next one starts (False), or where the
    container's `close` is (True); anything else is JSON this module does not edit."""
    j = _ws(text, end)
    if text[j] == ",":
        return _ws(text, j + 1), False
    if text[j] == close:
        return j, True
    raise UnsafeEdit(f"expected ',' or '{close}' at {j}")


def _root(text: str) -> int:
    return _ws(text, 1 if text.startswith("\ufeff") else 0)


class _Scan:
    """Container spans of one text, each container parsed once however many edits touch it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._members: dict[int, tuple[list[_Member], int]] = {}
        self._items: dict[int, tuple[list[tuple[int, int]], int]] = {}

    def members(self, i: int) -> tuple[list[_Member], int]:
        if i not in self._members:
            self._members[i] = _members(self.text, i)
        return self._members[i]

    def items(self, i: int) -> tuple[list[tuple[int, int]], int]:
        if i not in self._items:
            self._items[i] = _items(self.text, i)
        return self._items[i]

    def locate(self, path: Path) -> int:
        """Start offset of the value at `path` (the last of duplicate keys, as parsers do)."""
        i = _root(self.text)
        for part in path:
            if isinstance(part, str):
                found = [m for m in self.members(i)[0] if m.key == part]
                if not found:
                    raise UnsafeEdit(f"no key {part!r}")
                i = found[-1].start
            else:
                items = self.items(i)[0]
                if not 0 <= part < len(items):
                    raise UnsafeEdit(f"no index {part}")
                i = items[part][0]
        return i


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return _INDENT.match(text, start).group()  # type: ignore[union-attr]


def _indent_unit(text: str) -> str | None:
    """Indentation unit of a pretty-printed document (that of its first indented line)."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else None


def _layout(text: str) -> Layout:
    """Separators of the record's top-level object (compact `,`/`:` or `, `/`: `)."""
    unit = _indent_unit(text)
    try:
        root = _root(text)
        if text[root] == "[":
            items = _items(text, root)[0]
            if not items or text[items[0][0]] != "{":
                return Layout(unit=unit)
            root = items[0][0]
        members = _members(text, root)[0]
    except (UnsafeEdit, IndexError):
        return Layout(unit=unit)
    key_sep = text[members[0].key_end : members[0].start].replace("\n", "") if members else ":"
    item_sep = ","
    if len(members) >= 2:
        between = text[members[0].end : members[1].key_start]
        item_sep = ", " if between.startswith(", ") and "\n" not in between else ","
    return Layout(key_sep=key_sep or ":", item_sep=item_sep, unit=unit)


# --- applying ------------------------------------------------------------------------------


def _separator(text: str, open_at: int, first: int, compact: str) -> str:
    """The separator a one-element container would use: derived from its lead whitespace."""
    lead = text[open_at + 1 : first]
    return "," + lead if "\n" in lead else compact


def _splices(
    text: str, edits: Sequence[Edit], style: Style, layout: Layout
) -> list[tuple[int, int, int, str]]:
    out: list[tuple[int, int, int, str]] = []
    scan = _Scan(text)
    for seq, edit in enumerate(edits):
        if isinstance(edit, SetValue):
            start = scan.locate(edit.path)
            end = _value_end(text, start)
            base = _line_indent(text, start) if layout.unit else ""
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
            base = _line_indent(text, items[0][0]) if pretty else ""
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
                base = _line_indent(text, m.start) if layout.unit else ""
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
            base = _line_indent(text, members[0].key_start) if pretty else ""
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
    base = _line_indent(text, start) if layout.unit else ""
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
    """
    if not edits:
        data, error = parse_json(raw)
        if error is not None:
            raise UnsafeEdit(error)
        return raw, data
    edits = _merge(edits)
    try:
        text = raw.decode("utf-8")
        splices = _splices(text, edits, style, _layout(text))
    except (UnicodeDecodeError, IndexError, ValueError, RecursionError) as exc:
        raise UnsafeEdit(f"cannot locate edit: {exc}") from exc
    splices.sort(key=lambda s: (s[0], s[1], s[2]), reverse=True)
    limit = len(text)
    pieces: list[str] = []
    for start, end, _seq, new in splices:
        if end > limit:
            raise UnsafeEdit("overlapping edits")
        pieces.append(text[end:limit])
        pieces.append(new)
        limit = start
    pieces.append(text[:limit])
    new_text = "".join(reversed(pieces))
    new_raw = new_text.encode("utf-8")
    try:
        before, after = _parse_alike(text, new_text)
    except (ValueError, RecursionError) as exc:
        raise UnsafeEdit(f"the spliced record does not parse: {exc}") from exc
    if after != apply_tree(before, edits):
        raise UnsafeEdit("the spliced record does not parse to the intended value")
    return new_raw, after


def _parse_alike(old: str, new: str) -> tuple[Any, Any]:
    """Both texts parsed by the same parser (orjson and the stdlib differ on huge integers)."""
    try:
        return orjson.loads(old), orjson.loads(new)
    except orjson.JSONDecodeError:
        return json.loads(old.removeprefix("\ufeff")), json.loads(new.removeprefix("\ufeff"))


def dump_record(value: Any, style: Style = DEFAULT_STYLE, like: bytes = b"") -> bytes:
    """A new compact record (a JSONL line) with the separators of a neighbour `like`."""
    layout = _layout(like.decode("utf-8", "replace")) if like else Layout()
    return Layout(layout.key_sep, layout.item_sep, None).dump(value, style).encode("utf-8")
