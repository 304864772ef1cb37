"""Every string of a report value made safe to show (`engine.controls` says how).

Every terminal renderer (scan's text, diff's text, show) and every line-oriented format passes
its data through `visible_strings` first: names (paths, models, ids, tags, mapping keys) are
shown on one line by `visible_name`, text keeps its layout (`visible_controls`) unless the
format has one line per item (`one_line`).
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, TypeVar

from thinkfix.engine.controls import visible_controls, visible_name

T = TypeVar("T")

#: The fields of report values that hold a name: a path, an id, a model, a tag. A newline in
#: one is never layout.
NAME_FIELDS = frozenset(
    {
        "path",
        "output",
        "manifest",
        "source",
        "target",
        "json_path",
        "format",
        "model",
        "session_id",
        "message_id",
        "tag",
        "fingerprint",
        "reason",
        "kind",
        "detail",
    }
)


def visible_strings(value: T, *, one_line: bool = False) -> T:
    """`value` with every string inside it made safe to show.

    Walks frozen dataclasses, NamedTuples, tuples, lists and dicts (keys too: a breakdown keyed by model
    name is shown); enum members are left as they are, being the program's own words. A name
    (a field in `NAME_FIELDS`, a mapping key) and, with `one_line`, every string is shown on
    one line (`visible_name`); other text keeps its tabs and newlines (`visible_controls`).
    """
    text = visible_name if one_line else visible_controls
    return _walk(value, text)  # type: ignore[no-any-return]


def _walk(value: Any, text: Any, name: bool = False) -> Any:
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return visible_name(value) if name else text(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _walk(getattr(value, f.name), text, f.name in NAME_FIELDS)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        names = getattr(value, "_fields", None)
        if names is not None:  # a NamedTuple: a field in NAME_FIELDS holds a name, as above
            return type(value)(
                *(_walk(v, text, name or n in NAME_FIELDS) for n, v in zip(names, value))
            )
        return tuple(_walk(v, text, name) for v in value)
    if isinstance(value, list):
        return [_walk(v, text, name) for v in value]
    if isinstance(value, dict):
        return {_walk(k, text, True): _walk(v, text, name) for k, v in value.items()}
    return value
