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
