"""Control characters made visible, so a session cannot drive the terminal that shows it.

A model name or message holding `\\x1b[2J` (clear screen), an OSC title (`\\x1b]0;...\\x07`)
or an OSC 8 hyperlink would otherwise be interpreted by the auditor's terminal while it reads
the session. Every terminal renderer (scan's text, diff's text, show) passes its data through
`visible_strings` first: C0 controls become their Unicode control pictures (`\\x1b` is `␛`),
DEL is `␡`, C1 controls are written as `\\x9b`. Tab and newline stay, being layout; a CR that
does not end a line becomes `␍` (alone it would let text overwrite the line shown before it).
"""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from typing import Any, TypeVar

T = TypeVar("T")

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_TABLE[0x7F] = "\u2421"
_TABLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})


def visible_controls(text: str) -> str:
    """`text` with every control character but tab and newline shown, never interpreted."""
    if not _CONTROLS.search(text):
        return text
    return text.replace("\r\n", "\n").translate(_TABLE)


def visible_strings(value: T) -> T:
    """`value` with `visible_controls` applied to every string inside it.

    Walks frozen dataclasses, tuples, lists and dicts (keys too: a breakdown keyed by model
    name is shown); enum members are left as they are, being the program's own words.
    """
    return _walk(value)  # type: ignore[no-any-return]


def _walk(value: Any) -> Any:
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return visible_controls(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _walk(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        items = [_walk(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_walk(v) for v in value]
    if isinstance(value, dict):
        return {_walk(k): _walk(v) for k, v in value.items()}
    return value
