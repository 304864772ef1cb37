"""JSON and text output that carries every string losslessly, lone surrogates included.

Session files may hold `"\\ud800"`: valid JSON, and Python reads it into a str
with a lone surrogate, which orjson refuses to write and UTF-8 refuses to
encode. Every writer and reporter goes through here: JSON keeps such a code
point as its `\\uXXXX` escape (so reading it back gives the same string), and
plain text shows it as a backslash escape instead of crashing.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

#: Compiled on the fallback only (re's cache keeps it): not a start-up cost (#26 item 3).
_LONE = "[\ud800-\udfff]"


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(
    value: Any, *, indent: bool = False, newline: bool = False, sort_keys: bool = False
) -> bytes:
    """`value` as UTF-8 JSON: orjson's bytes, or the same layout with surrogates escaped.

    The fallback runs only when orjson refuses a string; the stdlib's layout for
    `indent` matches orjson's `OPT_INDENT_2`.
    """
    option = (
        (orjson.OPT_INDENT_2 if indent else 0)
        | (orjson.OPT_APPEND_NEWLINE if newline else 0)
        | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    )
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as exc:
        if "surrogates" not in str(exc):
            raise
    text = json.dumps(
        value,
        ensure_ascii=False,
        indent=2 if indent else None,
        sort_keys=sort_keys,
        separators=(",", ": ") if indent else (",", ":"),
        allow_nan=False,
    )
    return re.sub(_LONE, _escape, text).encode("utf-8") + (b"\n" if newline else b"")


def encode_text(text: str) -> bytes:
    """Human-readable text as UTF-8; a lone surrogate becomes its visible `\\udXXX` escape."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def loads(data: bytes | str) -> Any:
    """Parse JSON that `dumps` wrote: orjson, or the stdlib where orjson refuses an escape.

    orjson rejects `\\ud800` (a lone surrogate escape); the stdlib reads it into
    the same string that was written. Raises `ValueError` for text that is not JSON.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text)
