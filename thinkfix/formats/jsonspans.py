"""Where each value of a JSON text lies: member and item spans found in the original text, and its layout (indent unit, separators), so an edit changes only the bytes it means to."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from thinkfix.formats.repairs import UnsafeEdit
from thinkfix.formats.turns import Path

# --- locating spans in the original text ---------------------------------------------------


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
            if not has_raw_slash:  # once settled, no search can change `escape_slash`
                has_raw_slash, escaped = _slashes(raw)
                has_slash_escape = has_slash_escape or escaped
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

#: Slashes `_slashes` looks at one by one before it searches the whole chunk.
_FIRST_SLASHES = 8


def _slashes(raw: bytes) -> tuple[bool, bool]:
    """(a raw `/`, a `\\/`) in `raw`, where a raw slash is one no backslash precedes (what
    is left once every `\\/` is removed). The first few slashes settle most files (a path
    or a URL writes them raw): a `\\/` search costs a pass at ~0.6 GB/s, since JSON is
    dense in backslashes (#26 item 4); a chunk that escapes them all is searched whole."""
    escaped = False
    find, at = raw.find, raw.find(b"/")
    for _ in range(_FIRST_SLASHES):
        if at < 0:
            return False, escaped
        if at == 0 or raw[at - 1] != 0x5C:  # not after a backslash
            return True, escaped
        escaped = True
        at = find(b"/", at + 1)
    if at < 0:
        return False, escaped
    return b"/" in raw.replace(b"\\/", b""), True


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


_DECODER = json.JSONDecoder()
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"[ \t]*")


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


def _ws(text: str, i: int) -> int:
    """Past the blanks at `i`: none in compact JSON, which is told without the regex (a
    record's members are walked this way per edit, #26 item 4); the end of the text is
    `in` the blanks (an empty string), so it takes the regex, as before."""
    if text[i : i + 1] not in " \t\n\r":
        return i
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def value_end(text: str, i: int) -> int:
    """End offset of the JSON value starting at `i`, skipped at C speed."""
    if text[i] == '"':
        return int(_scanstring(text, i + 1)[1])
    try:
        return int(_DECODER.raw_decode(text, i)[1])
    except (ValueError, RecursionError) as exc:
        raise UnsafeEdit(f"cannot skip value at {i}: {exc}") from exc


class _Member(NamedTuple):  # one per member walked: a tuple is made at C speed
    key: str
    key_start: int
    key_end: int
    start: int
    end: int


_BLANKS = " \t\n\r"  # `text[j:j + 1] in _BLANKS`: a blank at j, or the end of the text
_new_tuple = tuple.__new__  # a `_Member` made at C speed (its generated `__new__` is Python)


def _members(text: str, i: int) -> tuple[list[_Member], int]:
    """Members of the object opening at `i`, and the offset of its `}`. `_ws`, `_next` and a
    string's `value_end` written out in the loop: ~10 members are walked per edit, each
    was five Python calls (#26 item 4); the offsets and errors are theirs."""
    if text[i] != "{":
        raise UnsafeEdit(f"expected an object at {i}")
    members: list[_Member] = []
    append, blank = members.append, _WS.match
    j = i + 1
    if text[j : j + 1] in _BLANKS:
        j = blank(text, j).end()  # type: ignore[union-attr]
    if text[j] == "}":
        return members, j
    while True:
        if text[j] != '"':
            raise UnsafeEdit(f"expected a key at {j}")
        key, key_end = _scanstring(text, j + 1)
        k = key_end
        if text[k : k + 1] in _BLANKS:
            k = blank(text, k).end()  # type: ignore[union-attr]
        if text[k] != ":":
            raise UnsafeEdit(f"expected ':' at {k}")
        v = k + 1
        if text[v : v + 1] in _BLANKS:
            v = blank(text, v).end()  # type: ignore[union-attr]
        end = int(_scanstring(text, v + 1)[1]) if text[v] == '"' else value_end(text, v)
        append(_new_tuple(_Member, (key, j, key_end, v, end)))
        j = end
        if text[j : j + 1] in _BLANKS:
            j = blank(text, j).end()  # type: ignore[union-attr]
        if text[j] == ",":
            j += 1
            if text[j : j + 1] in _BLANKS:
                j = blank(text, j).end()  # type: ignore[union-attr]
        elif text[j] == "}":
            return members, j
        else:
            raise UnsafeEdit(f"expected ',' or '}}' at {j}")


def _items(text: str, i: int) -> tuple[list[tuple[int, int]], int]:
    """(start, end) of each element of the array opening at `i`, and the offset of its `]`."""
    if text[i] != "[":
        raise UnsafeEdit(f"expected an array at {i}")
    items: list[tuple[int, int]] = []
    j = _ws(text, i + 1)
    if text[j] == "]":
        return items, j
    while True:
        end = value_end(text, j)
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


class Scan:
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


def line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return _INDENT.match(text, start).group()  # type: ignore[union-attr]


def _indent_unit(text: str) -> str | None:
    """Indentation unit of a pretty-printed document (that of its first indented line)."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else None


def layout_of(text: str, scan: Scan | None = None) -> Layout:
    """Separators of the record's top-level object (compact `,`/`:` or `, `/`: `). Given the
    `scan` the edits then use, the top-level containers are read once, not twice (#26 item 4:
    it decoded the whole record once more per edit)."""
    unit = _indent_unit(text)
    scan = scan or Scan(text)
    try:
        root = _root(text)
        if text[root] == "[":
            items = scan.items(root)[0]
            if not items or text[items[0][0]] != "{":
                return Layout(unit=unit)
            root = items[0][0]
        members = scan.members(root)[0]
    except (UnsafeEdit, IndexError):
        return Layout(unit=unit)
    key_sep = text[members[0].key_end : members[0].start].replace("\n", "") if members else ":"
    item_sep = ","
    if len(members) >= 2:
        between = text[members[0].end : members[1].key_start]
        item_sep = ", " if between.startswith(", ") and "\n" not in between else ","
    return Layout(key_sep=key_sep or ":", item_sep=item_sep, unit=unit)
