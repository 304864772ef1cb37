"""`_serialize.NamedTuple` makes the class typing's `NamedTuple` makes (#26 item 3: start-up).

typing builds each class through `collections.namedtuple`, which compiles its `__new__` from
source, and checks every field's annotation: ~0.5-2 M instructions a class, 27 classes on a
scan's path. The cheaper base must be indistinguishable to every user of such a class: the
same fields, defaults, signature, constructor answers and errors, repr, equality, hash,
`_make`, `_replace`, `_asdict`, copies and pickles, the class body's methods and docstring,
and the same refusals of a malformed class."""

from __future__ import annotations

import ast
import copy
import inspect
import pickle
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix import _serialize
from thinkfix._serialize import NamedTuple


class Pickled(NamedTuple):
    """A module-level class, so pickle finds it by name."""

    name: str
    count: int = 0


def _make_class(base: Any, fields: list[str], defaults: int, doc: bool, method: bool) -> Any:
    lines = ["class Value(Base):"]
    if doc:
        lines.append('    """A value."""')
    for i, name in enumerate(fields):
        default = f" = {i!r}" if i >= len(fields) - defaults else ""
        lines.append(f"    {name}: int{default}")
    if method:
        lines.append("    def total(self):\n        return sum(self)")
        lines.append("    LIMIT = 3")
    if len(lines) == 1:
        lines.append("    pass")
    namespace: dict[str, Any] = {"Base": base, "__name__": __name__}
    exec(compile("\n".join(lines), "<value>", "exec", dont_inherit=True), namespace)  # noqa: S102
    return namespace["Value"]


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as exc:  # noqa: BLE001 - the answer compared is the error itself
        return (type(exc), str(exc))


names = st.lists(st.sampled_from(["a", "b", "count", "name", "x1", "tags"]), unique=True)
shapes = st.tuples(names, st.integers(0, 6), st.booleans(), st.booleans())
values = st.one_of(st.integers(-3, 3), st.text(max_size=2))
calls = st.tuples(
    st.lists(values, max_size=7),
    st.dictionaries(st.sampled_from(["a", "b", "count", "name", "zz"]), values, max_size=3),
)


@given(shapes, calls)
def test_a_class_made_either_way_answers_alike(
    shape: tuple[list[str], int, bool, bool], call: tuple[list[Any], dict[str, Any]]
) -> None:
    fields, defaults, doc, method = shape
    defaults = min(defaults, len(fields))
    typed = _make_class(typing.NamedTuple, fields, defaults, doc, method)
    cheap = _make_class(NamedTuple, fields, defaults, doc, method)
    assert type(cheap) is type(typed) is type
    assert cheap.__bases__ == typed.__bases__ == (tuple,)
    for attr in ("_fields", "_field_defaults", "__doc__", "__match_args__", "__module__"):
        assert getattr(cheap, attr) == getattr(typed, attr), attr
    assert cheap.__qualname__ == typed.__qualname__
    assert list(cheap.__annotations__) == list(typed.__annotations__)
    assert [a for a in vars(cheap) if a != "__orig_bases__"] == [
        a for a in vars(typed) if a != "__orig_bases__"
    ]
    assert str(inspect.signature(cheap)) == str(inspect.signature(typed))
    for name in ("__new__", "_make", "_replace", "__repr__", "_asdict", "__getnewargs__"):
        ours, theirs = getattr(cheap, name), getattr(typed, name)
        assert (ours.__qualname__, ours.__doc__) == (theirs.__qualname__, theirs.__doc__), name
    args, kwargs = call
    made, expected = (
        _outcome(lambda: cheap(*args, **kwargs)),
        _outcome(lambda: typed(*args, **kwargs)),
    )
    assert made[0] == expected[0]
    if made[0] != "ok":
        assert made[1] == expected[1]
        return
    ours, theirs = made[1], expected[1]
    assert tuple(ours) == tuple(theirs) and ours == theirs and hash(ours) == hash(theirs)
    assert repr(ours) == repr(theirs)
    assert ours._asdict() == theirs._asdict()
    assert _outcome(lambda: ours._replace(**kwargs)) == _outcome(lambda: theirs._replace(**kwargs))
    assert _outcome(lambda: cheap._make(args)) == _outcome(lambda: typed._make(args))
    assert copy.copy(ours) == ours and copy.deepcopy(ours) == ours
    assert type(copy.deepcopy(ours)) is cheap
    if method:
        assert _outcome(ours.total) == _outcome(theirs.total) and cheap.LIMIT == typed.LIMIT == 3


@pytest.mark.parametrize(
    "body",
    [
        "    a: int = 1\n    b: int\n",  # a field without a default after one with
        "    _a: int\n",  # a field named like namedtuple's own names
        "    a: int\n    def _replace(self):\n        return 0\n",  # a namedtuple method
        "    a: int\n    __slots__ = ('b',)\n",
    ],
)
def test_a_malformed_class_is_refused_alike(body: str) -> None:
    def made(base: Any) -> Any:
        source = f"class V(Base):\n{body}"
        return _outcome(lambda: exec(source, {"Base": base, "__name__": "m"}))  # noqa: S102

    assert made(NamedTuple) == made(typing.NamedTuple)
    assert made(NamedTuple)[0] != "ok"


def test_a_string_annotation_stays_a_string_that_reads_as_typing_reads_it() -> None:
    """The one difference, and the cost it saves: typing compiles a string annotation (what
    `from __future__ import annotations` writes) into a `ForwardRef`, one `compile` a field;
    `get_type_hints` reads either to the same type."""

    class Typed(typing.NamedTuple):
        name: str
        count: int = 0

    assert Pickled.__annotations__ == {"name": "str", "count": "int"}
    assert (
        typing.get_type_hints(Pickled)
        == typing.get_type_hints(Typed)
        == {
            "name": str,
            "count": int,
        }
    )


def test_a_value_pickles_and_a_wide_class_has_no_template() -> None:
    value = Pickled("x", 2)
    assert pickle.loads(pickle.dumps(value)) == value
    assert type(pickle.loads(pickle.dumps(value))) is Pickled
    fields = [f"f{i}" for i in range(max(_serialize._NEW) + 3)]  # past the templates: eval
    wide = _make_class(NamedTuple, fields, 2, False, False)
    assert wide(*range(len(fields)))._asdict()["f0"] == 0
    assert str(inspect.signature(wide)) == str(
        inspect.signature(_make_class(typing.NamedTuple, fields, 2, False, False))
    )


def test_the_templates_build_the_tuple_of_their_arity() -> None:
    for arity, template in _serialize._NEW.items():
        assert template(tuple, *range(arity)) == tuple(range(arity))
        assert template.__code__.co_varnames == ("_cls", *(f"a{i}" for i in range(arity)))


def test_every_named_tuple_thinkfix_defines_has_a_template() -> None:
    """A class of an arity without a template still works, but compiles its `__new__` at
    every start-up: give the arity its line in `_serialize._NEW`."""
    package = Path(__file__).resolve().parents[1] / "thinkfix"
    arities = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                getattr(base, "id", None) == "NamedTuple" for base in node.bases
            ):
                fields = [s for s in node.body if isinstance(s, ast.AnnAssign)]
                arities[f"{path.name}:{node.name}"] = len(fields)
    assert len(arities) > 20
    assert {name: n for name, n in arities.items() if n not in _serialize._NEW} == {}
