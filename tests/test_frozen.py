"""`_serialize.frozen` behaves as `dataclass(frozen=True)` (#26 item 3: start-up).

The report values that stay dataclasses share their methods instead of compiling six each
at every start-up; a class made either way must be indistinguishable to its users: built
from the same arguments (or refused with TypeError), equal, hashed, shown, `replace`d and
read with `fields` alike, and never changed."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix._serialize import frozen


def _body() -> dict[str, Any]:
    def __post_init__(self: Any) -> None:  # normalises a field, as Policy's does
        object.__setattr__(self, "name", self.name.lower())

    return {
        "__annotations__": {
            "name": "str",
            "count": "int",
            "tags": "tuple[str, ...]",
            "extra": "dict[str, int]",
        },
        "count": 0,
        "tags": ("a",),
        "extra": dataclasses.field(default_factory=dict, compare=False),
        "__post_init__": __post_init__,
        "__doc__": "A value.",
    }


Generated = dataclasses.dataclass(frozen=True)(type("Value", (), _body()))
Shared = frozen(type("Value", (), _body()))

values = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.tuples(st.text(max_size=2)))
names = st.sampled_from(["name", "count", "tags", "extra", "other"])
calls = st.tuples(st.lists(values, max_size=5), st.dictionaries(names, values, max_size=3))


def _outcome(cls: type, args: list[Any], kwargs: dict[str, Any]) -> Any:
    try:
        value = cls(*args, **kwargs)
    except (TypeError, AttributeError) as exc:
        return type(exc)
    return value


@given(calls)
def test_built_from_the_same_arguments_or_refused_alike(
    call: tuple[list[Any], dict[str, Any]],
) -> None:
    args, kwargs = call
    a, b = _outcome(Generated, args, dict(kwargs)), _outcome(Shared, args, dict(kwargs))
    if isinstance(a, type):
        assert b is a
        return
    assert repr(a) == repr(b)
    assert [f.name for f in dataclasses.fields(a)] == [f.name for f in dataclasses.fields(b)]
    assert dataclasses.astuple(a) == dataclasses.astuple(b)
    try:
        assert hash(a) == hash(b)
    except TypeError:
        with pytest.raises(TypeError):
            hash(b)


@given(calls, calls)
def test_equal_and_replaced_alike(
    one: tuple[list[Any], dict[str, Any]], two: tuple[list[Any], dict[str, Any]]
) -> None:
    a1, b1 = _outcome(Generated, *one), _outcome(Shared, *one)
    a2, b2 = _outcome(Generated, *two), _outcome(Shared, *two)
    if any(isinstance(v, type) for v in (a1, a2)):
        return
    assert (a1 == a2) is (b1 == b2)
    assert (b1 == a1) is False  # another class: never equal
    changes = {k: v for k, v in two[1].items() if k in {"name", "count", "tags"}}
    assert repr(dataclasses.replace(a1, **changes)) == repr(dataclasses.replace(b1, **changes))


def test_never_changed_and_factories_per_instance() -> None:
    value = Shared("X")
    assert value.name == "x" and value.extra == {} and value.extra is not Shared("y").extra
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.name = "y"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del value.count  # type: ignore[misc]
    assert dataclasses.is_dataclass(Shared) and Shared.__match_args__ == Generated.__match_args__


def test_shown_with_the_same_signature() -> None:
    """`help()` and the API documentation show the fields, not the shared `*args, **kwargs`."""
    assert str(inspect.signature(Shared)) == str(inspect.signature(Generated))
    assert "(name: 'str', count: 'int' = 0," in str(inspect.signature(Shared))
