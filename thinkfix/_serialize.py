"""One way from a result value to the plain dict its JSON carries.

Every report value (a finding, an error, a summary, an audit row, a streamed message's
leak) is a frozen dataclass or a NamedTuple; its JSON is its fields in order, made plain the
same way: a nested value by its own `to_dict`, an enum by its value, a tuple as a list, a
mapping sorted by key (so output never depends on the order files ran in). A class names its
keys only where the JSON order or content differs from its fields. orjson writes the
result; nothing here decides spacing or escaping.

A report value that must stay a dataclass (`replace`d and `fields`-read across the program)
is defined with `frozen`: `dataclass(frozen=True)` compiles six generated methods per class
at every start-up (~7 M instructions for a 13-field class, #26 item 3), `frozen` shares one
set of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing import dataclass_transform  # Python 3.11+ (mypy checks as 3.11): PEP 681
else:

    def dataclass_transform(**_: Any) -> Any:
        """PEP 681's marker (what type checkers read), a no-op where the program runs."""
        return lambda decorator: decorator


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


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[T]) -> type[T]:
    """`cls` as `dataclass(frozen=True)` makes it (fields, defaults and default factories,
    `__post_init__`, `replace`, `fields`, equality and hash by its fields' tuple, the same
    repr, no assignment), with methods shared by every such class instead of compiled for
    each (see the module's doc). Keyword-only fields and `InitVar`s are not supported."""
    done = dataclass(init=False, repr=False, eq=False)(cls)
    members = fields(done)  # type: ignore[arg-type]
    if any(f.kw_only is True for f in members):
        raise TypeError(f"{cls.__name__}: frozen values take no keyword-only fields")
    setattr(done, "_frozen_fields", tuple(f for f in members if f.init))  # noqa: B010
    setattr(done, "_frozen_compared", tuple(f.name for f in members if f.compare))  # noqa: B010
    for name, method in _FROZEN_METHODS.items():
        setattr(done, name, method)
    setattr(done, "__signature__", _Signature())  # noqa: B010
    return done


class _Factory:
    """How a signature shows a default made by a factory, as `dataclass`'s does."""

    def __repr__(self) -> str:
        return "<factory>"


def _default(f: Field[Any]) -> Any:
    import inspect

    if f.default is not MISSING:
        return f.default
    return inspect.Parameter.empty if f.default_factory is MISSING else _Factory()


class _Signature:
    """The class's signature as `dataclass` writes it (`help()`, documentation), built when
    asked: the shared `__init__` takes `*args, **kwargs`."""

    def __get__(self, obj: Any, cls: type) -> Any:
        import inspect

        keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return inspect.Signature(
            [
                inspect.Parameter(f.name, keyword, default=_default(f), annotation=f.type)
                for f in getattr(cls, "_frozen_fields", ())
            ],
            return_annotation=None,
        )


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    members = self._frozen_fields
    cls = type(self).__qualname__
    if len(args) > len(members):
        raise TypeError(
            f"{cls}.__init__() takes {len(members) + 1} positional arguments "
            f"but {len(args) + 1} were given"
        )
    for f, value in zip(members, args):
        if f.name in kwargs:
            raise TypeError(f"{cls}.__init__() got multiple values for argument {f.name!r}")
        object.__setattr__(self, f.name, value)
    for f in members[len(args) :]:
        if f.name in kwargs:
            value = kwargs.pop(f.name)
        elif f.default is not MISSING:
            value = f.default
        elif f.default_factory is not MISSING:
            value = f.default_factory()
        else:
            raise TypeError(f"{cls}.__init__() missing 1 required positional argument: {f.name!r}")
        object.__setattr__(self, f.name, value)
    names = {f.name for f in members}
    for name in kwargs:
        if name not in names:
            raise TypeError(f"{cls}.__init__() got an unexpected keyword argument {name!r}")
    post_init = getattr(self, "__post_init__", None)
    if post_init is not None:
        post_init()


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in self._frozen_compared)


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_compared(self))


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


_FROZEN_METHODS = {
    "__init__": _init,
    "__repr__": _repr,
    "__eq__": _eq,
    "__hash__": _hash,
    "__setattr__": _setattr,
    "__delattr__": _delattr,
}
