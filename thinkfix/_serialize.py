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
set of them. A value that is only built and read is a `NamedTuple`: typing's class of that
name, built without its per-class `eval` and field checks (~0.5-2 M instructions a class).
"""

from __future__ import annotations

import sys
import typing
from collections import _tuplegetter  # type: ignore[attr-defined]
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from enum import Enum
from types import FunctionType, new_class
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


# `class X(NamedTuple)` costs typing ~0.5-2 M instructions a class at every start-up (27 on a
# scan's path, #26 item 3): `collections.namedtuple` compiles each class's `__new__` from
# source (`eval`, ~0.3 M), and typing checks each field's annotation and assigns the class's
# `__bases__` again. `NamedTuple` below makes the same class (tuple subclass, fields,
# defaults, `_make`, `_replace`, `_asdict`, repr, pickling, `__match_args__`, the class body's
# methods and docstring) from `__new__` functions compiled once, into this module's bytecode
# cache: the template of the class's arity with its field names in place of `aN`. Annotations
# stay as written. Modules import it under `if not TYPE_CHECKING`, so type checkers read
# typing's (tests/test_named_tuple.py holds a class made either way to the same answers).

_tuple_new = tuple.__new__

#: `__new__` of a NamedTuple of each arity thinkfix defines (tests/test_named_tuple.py checks
#: that every class has its template): `collections.namedtuple`'s source for that arity.
# fmt: off
_NEW = {
    1: lambda _cls, a0: _tuple_new(_cls, (a0,)),
    2: lambda _cls, a0, a1: _tuple_new(_cls, (a0, a1)),
    3: lambda _cls, a0, a1, a2: _tuple_new(_cls, (a0, a1, a2)),
    4: lambda _cls, a0, a1, a2, a3: _tuple_new(_cls, (a0, a1, a2, a3)),
    5: lambda _cls, a0, a1, a2, a3, a4: _tuple_new(_cls, (a0, a1, a2, a3, a4)),
    6: lambda _cls, a0, a1, a2, a3, a4, a5: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5)),
    7: lambda _cls, a0, a1, a2, a3, a4, a5, a6: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5, a6)),
    8: lambda _cls, a0, a1, a2, a3, a4, a5, a6, a7: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5, a6, a7)),
    11: lambda _cls, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10)),
    12: lambda _cls, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11)),
    13: lambda _cls, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12)),
    17: lambda _cls, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16)),
    36: lambda _cls, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34, a35: _tuple_new(_cls, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34, a35)),
}
# fmt: on

_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults"}
    | {"_make", "_replace", "_asdict", "_source"}
)
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_UNEXPECTED = TypeError if sys.version_info >= (3, 13) else ValueError


def _new_function(typename: str, fields: tuple[str, ...], defaults: tuple[Any, ...]) -> Any:
    """`collections.namedtuple`'s `__new__` for these fields."""
    arg_list = ", ".join(fields)
    if len(fields) == 1:
        arg_list += ","
    template = _NEW.get(len(fields))
    if template is not None:
        code = template.__code__.replace(co_varnames=("_cls", *fields))
        new = FunctionType(code, globals())
    else:  # no template: what `collections.namedtuple` does for every class
        namespace = {"_tuple_new": _tuple_new, "__builtins__": {}, "__name__": typename}
        new = eval(f"lambda _cls, {arg_list}: _tuple_new(_cls, ({arg_list}))", namespace)
    new.__name__ = "__new__"
    new.__doc__ = f"Create new instance of {typename}({arg_list})"
    if defaults:
        new.__defaults__ = defaults
    return new


def _named_tuple(typename: str, ns: dict[str, Any]) -> type:
    """The class `collections.namedtuple` and typing's `NamedTuple` make of a class body."""
    annotations = ns.get("__annotations__", {})
    default_names: list[str] = []
    for name in annotations:
        if name in ns:
            default_names.append(name)
        elif default_names:
            raise TypeError(
                f"Non-default namedtuple field {name} cannot follow default field"
                f"{'s' if len(default_names) > 1 else ''} {', '.join(default_names)}"
            )
    for name in annotations:
        if name.startswith("_"):
            raise ValueError(f"Field names cannot start with an underscore: {name!r}")
    typename = sys.intern(typename)
    fields = tuple(map(sys.intern, annotations))
    defaults = tuple(ns[name] for name in default_names)
    num_fields = len(fields)
    arg_list = ", ".join(fields) + ("," if num_fields == 1 else "")
    repr_fmt = "(" + ", ".join(f"{name}=%r" for name in fields) + ")"

    def _make(cls: type, iterable: Iterable[Any]) -> Any:
        result: tuple[Any, ...] = _tuple_new(cls, iterable)
        if len(result) != num_fields:
            raise TypeError(f"Expected {num_fields} arguments, got {len(result)}")
        return result

    _make.__doc__ = f"Make a new {typename} object from a sequence or iterable"

    def _replace(self: Any, /, **kwds: Any) -> Any:
        result = self._make(map(kwds.pop, fields, self))
        if kwds:
            raise _UNEXPECTED(f"Got unexpected field names: {list(kwds)!r}")
        return result

    _replace.__doc__ = f"Return a new {typename} object replacing specified fields with new values"

    def __repr__(self: Any) -> str:
        "Return a nicely formatted representation string"
        return str(self.__class__.__name__ + repr_fmt % self)

    def _asdict(self: Any) -> dict[str, Any]:
        "Return a new dict which maps field names to their values."
        return dict(zip(self._fields, self))

    def __getnewargs__(self: Any) -> tuple[Any, ...]:
        "Return self as a plain tuple.  Used by copy and pickle."
        return tuple(self)

    new = _new_function(typename, fields, defaults)
    for method in (new, _make, _replace, __repr__, _asdict, __getnewargs__):
        method.__qualname__ = f"{typename}.{method.__name__}"
    body: dict[str, Any] = {
        "__doc__": f"{typename}({arg_list})",
        "__slots__": (),
        "_fields": fields,
        "_field_defaults": dict(zip(default_names, defaults)),
        "__new__": new,
        "_make": classmethod(_make),
    }
    if sys.version_info >= (3, 13):
        body["__replace__"] = _replace
    body.update(
        _replace=_replace, __repr__=__repr__, _asdict=_asdict, __getnewargs__=__getnewargs__
    )
    body["__match_args__"] = fields
    for index, name in enumerate(fields):
        body[name] = _tuplegetter(index, sys.intern(f"Alias for field number {index}"))
    body["__module__"] = ns["__module__"]
    body["__annotations__"] = annotations
    for key, value in ns.items():
        if key in _PROHIBITED:
            raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
        if key not in _SPECIAL and key not in fields:
            body[key] = value
    new.__annotations__ = annotations
    return type(typename, (tuple,), body)


class _NamedTupleType(type):
    """Makes a subclass of `NamedTuple` as typing's `NamedTuple` does (`_named_tuple`)."""

    def __new__(mcls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # `NamedTuple` itself
            return super().__new__(mcls, typename, bases, ns)
        if bases != (NamedTuple,):
            raise TypeError("can only inherit from a NamedTuple type and Generic")
        if "__annotations__" not in ns:  # Python 3.14+ evaluates a body's annotations lazily
            return new_class(typename, (typing.NamedTuple,), exec_body=lambda d: d.update(ns))
        return _named_tuple(typename, ns)


class NamedTuple(metaclass=_NamedTupleType):
    """typing's `NamedTuple`, cheaper to subclass (see above)."""
