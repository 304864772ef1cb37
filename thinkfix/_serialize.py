"""One way from a result value to the plain dict its JSON carries.

Every report value (a finding, an error, a summary, an audit row, a streamed message's
leak) is a frozen dataclass or a NamedTuple; its JSON is its fields in order, made plain the
same way: a nested value by its own `to_dict`, an enum by its value, a tuple as a list, a
mapping sorted by key (so output never depends on the order files ran in). A class names its
keys only where the JSON order or content differs from its fields. orjson writes the
result; nothing here decides spacing or escaping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from enum import Enum
from typing import Any, TypeVar

T = TypeVar("T")
_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:  # a NamedTuple's, else a dataclass's
        names = _NAMES[cls] = getattr(cls, "_fields", None) or tuple(f.name for f in fields(cls))
    return names


def plain(value: Any) -> Any:
    """`value` as JSON-ready data (see the module's rules)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, str):
        return value
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    if isinstance(value, Mapping):  # keys may be str-valued enums: JSON keys are their values
        return {k.value if isinstance(k, Enum) else k: plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def record(
    obj: Any, names: Iterable[str] | None = None, *, omit_none: Iterable[str] = (), **values: Any
) -> dict[str, Any]:
    """`obj`'s fields (or the attributes `names`, in that order) as a plain dict.

    `values` give a key's value instead of the attribute's (a key that is no attribute is
    named in `names`); a key in `omit_none` is left out while its value is None."""
    out: dict[str, Any] = {}
    skip = frozenset(omit_none)
    for name in names if names is not None else _field_names(type(obj)):
        value = values[name] if name in values else plain(getattr(obj, name))
        if value is None and name in skip:
            continue
        out[name] = value
    return out


def from_record(cls: type[T], data: Mapping[str, Any], **values: Any) -> T:
    """The `cls` that `record` wrote as `data`: each field from its key (a missing one raises
    KeyError), or from `values` where a key needs reading back (a nested value)."""
    return cls(
        **{name: values[name] if name in values else data[name] for name in _field_names(cls)}
    )


class Plain:
    """A result value whose JSON is `record(self)`: its fields in order, made plain."""

    def to_dict(self) -> dict[str, Any]:
        return record(self)
