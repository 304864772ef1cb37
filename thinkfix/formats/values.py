"""Small pure helpers on parsed JSON values and texts: paths into a record, squashed text,
and the shape checks on the fields that hold an assistant's visible text.

Below both the planner and the shared format code, so neither imports the other
for them.

Shape checks: a slot reader that skips what it does not expect (an object where the runtime
writes a string or a list of parts, a part that is no object or has no `type`, a text that
is a list) counts a leak inside it as clean: scan exits 0 over text it never looked at. So a
value no runtime writes there raises `UnexpectedShape`; the readers' guard
(`SessionFormat.checked_messages`) makes that an error for the record, and the file's scan
exits 2. Values the runtimes do write (None, a string, a list of typed parts) pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: a scan loads no transcript model
    from collections.abc import Callable

    from thinkfix.formats.turns import Path


def fmt_path(path: Path) -> str:
    """`("message", "content", 1, "text")` -> `message.content[1].text`."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(("." if out else "") + part)
    return "".join(out)


def get_path(data: Any, path: Path, default: Any = None) -> Any:
    """The value at `path`, or `default` when any step is missing."""
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return default
    return data


class UnexpectedShape(ValueError):
    """A text-bearing field holds a value its runtime never writes there."""

    def __init__(self, path: Path, found: Any, expected: str) -> None:
        where = fmt_path(path) or "the record"
        super().__init__(f"{where} is a JSON {_kind(found)} where the runtime writes {expected}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string"}.get(
        type(value), "array" if isinstance(value, list) else "object"
    )


def text_value(value: Any, path: Path) -> str | None:
    """A field that holds text or nothing: the string, or None when absent or null."""
    if value is None or isinstance(value, str):
        return value
    raise UnexpectedShape(path, value, "a string")


def text_or_parts(value: Any, path: Path) -> str | list[Any] | None:
    """A content field that holds a string, a list of parts, or nothing."""
    if value is None or isinstance(value, (str, list)):
        return value
    raise UnexpectedShape(path, value, "a string or a list of parts")


def parts_list(value: Any, path: Path) -> list[Any] | None:
    """A field that holds a list of parts, or nothing."""
    if value is None or isinstance(value, list):
        return value
    raise UnexpectedShape(path, value, "a list of parts")


def typed_parts(
    parts: list[Any], path: Path, *, key: str = "type", texts: dict[str, str] | None = None
) -> None:
    """Every part is an object whose `key` is a string, and a part of a type in `texts`
    (type -> its text field) holds a string (or nothing) in that field."""
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise UnexpectedShape((*path, i), part, f"an object with a {key!r}")
        kind = part.get(key)
        if not isinstance(kind, str):
            raise UnexpectedShape((*path, i, key), kind, "a string naming the part's type")
        field = texts.get(kind) if texts else None
        if field is not None:
            text_value(part.get(field), (*path, i, field))


# --- where a repaired text's characters were in the old one -----------------------------
# A repair keeps the visible text and takes the reasoning out, so the new text is most often
# a subsequence of the old: offsets a runtime keeps into a text (Copilot CLI's citation
# spans) and a text split over lines (Kimi's wire runs) are carried over by that match.


def kept_chars(old: str, new: str) -> list[bool] | None:
    """For each character of `old`, whether it is one of `new`'s, matched from the end (a
    leak most often precedes the answer); None when `new` is no subsequence of `old` (a
    placeholder)."""
    kept = [False] * len(old)
    j = len(new) - 1
    for i in range(len(old) - 1, -1, -1):
        if j < 0:
            break
        if old[i] == new[j]:
            kept[i] = True
            j -= 1
    return kept if j < 0 else None


def shift_utf16(old: str, new: str) -> Callable[[int], int] | None:
    """Maps an offset into `old` to the same place in `new`, both in UTF-16 code units (as
    JavaScript counts them): the kept characters before it. None when `new` is no
    subsequence of `old`."""
    kept = kept_chars(old, new)
    if kept is None:
        return None
    table, n = [0], 0
    for char, keep in zip(old, kept):
        width = 2 if ord(char) > 0xFFFF else 1
        n += width if keep else 0
        table.extend([n] * width)
    last = len(table) - 1
    return lambda offset: table[min(max(offset, 0), last)]
