"""The style-preserving writer: only new values are serialised, in the file's own style."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.formats.jsonedit import InsertItems, RemoveItem, SetKey, SetValue, dump_record, edit
from thinkfix.formats.jsonspans import _WS, Style, _members, _ws, dump_str, value_end
from thinkfix.formats.repairs import UnsafeEdit

BLOCK = {"type": "thinking", "thinking": "plan"}


def test_jsonedit_keeps_number_literals_of_untouched_values() -> None:
    raw = (
        b'{"cost":{"input":0.000005,"tiny":1.2e-7,"one":1.0,"neg":-0.0},"text":"<think>p</think>a"}'
    )
    new, data = edit(raw, [SetValue(("text",), "a")])
    assert new == b'{"cost":{"input":0.000005,"tiny":1.2e-7,"one":1.0,"neg":-0.0},"text":"a"}'
    assert data["text"] == "a"


def test_jsonedit_keeps_go_html_escapes() -> None:
    raw = b'{"text":"\\u003cthink\\u003ep\\u003c/think\\u003ea \\u0026 b"}'
    style = Style.sniff([raw])
    assert style.escape_html
    new, _ = edit(raw, [SetValue(("text",), "a & b <ok>")], style)
    assert new == b'{"text":"a \\u0026 b \\u003cok\\u003e"}'


def test_jsonedit_keeps_python_ascii_escapes_and_separators() -> None:
    raw = b'{"role": "assistant", "content": "<think>caf\\u00e9</think>na\\u00efve"}'
    style = Style.sniff([raw])
    assert style.ensure_ascii and not style.escape_html
    new, _ = edit(
        raw,
        [
            SetValue(("content",), "na\u00efve \U0001f600"),
            SetKey((), "reasoning_content", "caf\u00e9", after="content"),
        ],
        style,
    )
    assert new == (
        b'{"role": "assistant", "content": "na\\u00efve \\ud83d\\ude00", '
        b'"reasoning_content": "caf\\u00e9"}'
    )


def test_jsonedit_keeps_uppercase_hex_and_slash_escapes() -> None:
    raw = b'{"a":"\\u00E9 http:\\/\\/x","b":"<think>"}'
    style = Style.sniff([raw])
    assert style.upper_hex and style.escape_slash and style.ensure_ascii
    new, _ = edit(raw, [SetValue(("b",), "\u00e9/\x01")], style)
    assert new == b'{"a":"\\u00E9 http:\\/\\/x","b":"\\u00E9\\/\\u0001"}'


def test_jsonedit_raw_utf8_stays_raw() -> None:
    raw = '{"a":"日志","b":"<think>x</think>好"}'.encode()
    new, _ = edit(raw, [SetValue(("b",), "好")], Style.sniff([raw]))
    assert new == '{"a":"日志","b":"好"}'.encode()


def test_jsonedit_lone_surrogates_are_escaped() -> None:
    raw = b'{"a":"\\ud800x"}'
    new, data = edit(raw, [SetValue(("a",), "\ud800y")])
    assert new == b'{"a":"\\ud800y"}' and data == {"a": "\ud800y"}


@pytest.mark.parametrize("indent", ["\t", "  ", "    "])
def test_jsonedit_inserts_with_the_documents_indentation(indent: str) -> None:
    doc = {"content": [{"type": "text", "text": "<think>plan</think>a"}], "thoughts": []}
    raw = json.dumps(doc, indent=indent).encode()
    new, _ = edit(
        raw,
        [
            InsertItems(("content",), 0, (BLOCK,)),
            SetValue(("content", 0, "text"), "a"),
            InsertItems(("thoughts",), 0, ("t",)),
        ],
    )
    expected = {"content": [BLOCK, {"type": "text", "text": "a"}], "thoughts": ["t"]}
    assert new == json.dumps(expected, indent=indent).encode()


def test_jsonedit_appends_after_last_item_and_inserts_between_items() -> None:
    raw = b'{"c":[1, 2, 3]}'
    new, data = edit(raw, [InsertItems(("c",), 3, ("x",)), InsertItems(("c",), 1, ("y", "z"))])
    assert new == b'{"c":[1, "y", "z", 2, 3, "x"]}'
    assert data == {"c": [1, "y", "z", 2, 3, "x"]}


def test_jsonedit_edits_the_last_of_duplicate_keys() -> None:
    raw = b'{"a":"first","a":"second"}'
    new, data = edit(raw, [SetValue(("a",), "third")])
    assert new == b'{"a":"first","a":"third"}' and data == {"a": "third"}


def test_jsonedit_handles_a_bom() -> None:
    raw = b'\xef\xbb\xbf{"a":"x"}'
    new, _ = edit(raw, [SetValue(("a",), "y")])
    assert new == b'\xef\xbb\xbf{"a":"y"}'


def test_jsonedit_refuses_a_missing_path() -> None:
    with pytest.raises(UnsafeEdit):
        edit(b'{"a":[1]}', [SetValue(("a", 3), "x")])
    with pytest.raises(UnsafeEdit):
        edit(b'{"a":', [SetValue(("a",), "x")])


def test_jsonedit_new_record_takes_neighbour_separators() -> None:
    assert dump_record({"a": [1, None]}, like=b'{"x": 1, "y": 2}') == b'{"a": [1, null]}'
    assert dump_record({"a": [1, None]}, like=b'{"x":1,"y":2}') == b'{"a":[1,null]}'


@pytest.mark.parametrize(
    "at,expected",
    [
        (0, b'{"c":[{"t":2},{"t":3}]}'),
        (1, b'{"c":[{"t":1},{"t":3}]}'),
        (2, b'{"c":[{"t":1},{"t":2}]}'),
    ],
)
def test_jsonedit_removes_an_element_with_one_separator(at: int, expected: bytes) -> None:
    assert edit(b'{"c":[{"t":1},{"t":2},{"t":3}]}', [RemoveItem(("c",), at)])[0] == expected


@pytest.mark.parametrize("at", [0, 1])
def test_jsonedit_insert_before_a_removed_element_replaces_it(at: int) -> None:
    # Dropping an emptied text block while a thinking block goes before it: at the end of
    # the array the two splices would overlap, so they become one replacement.
    raw = b'{\n  "c": [\n    {"t": 1},\n    {"t": 2}\n  ]\n}'
    new, data = edit(raw, [RemoveItem(("c",), at), InsertItems(("c",), at, (BLOCK, BLOCK))])
    blocks: list[object] = [{"t": 1}, {"t": 2}]
    blocks[at : at + 1] = [BLOCK, BLOCK]
    assert data == {"c": blocks} and json.loads(new) == data
    assert new.count(b"\n    {") == 3


def test_jsonedit_never_removes_the_only_element() -> None:
    with pytest.raises(UnsafeEdit):
        edit(b'{"c":[{"t":1}]}', [RemoveItem(("c",), 0)])


@settings(max_examples=100, deadline=None)
@given(
    items=st.lists(st.integers(0, 9), min_size=2, max_size=6),
    data=st.data(),
    layout=st.sampled_from([(None, ":", ","), (None, ": ", ", "), ("  ", ": ", ",")]),
)
def test_jsonedit_property_remove_keeps_every_other_element_byte_exact(items, data, layout) -> None:
    at = data.draw(st.integers(0, len(items) - 1))
    tree = {"c": [{"n": ("num", f"{i}.50")} for i in items]}
    raw = _dump(tree, *layout).encode("utf-8")
    new, parsed = edit(raw, [RemoveItem(("c",), at)])
    assert parsed == {"c": [{"n": i + 0.5} for j, i in enumerate(items) if j != at]}
    assert new.count(b".50") == len(items) - 1  # number literals kept as written


# --- property: an edit changes exactly the edited span -----------------------------------

LITERALS = ["0", "-17", "1.0", "-0.0", "0.000005", "1e-7", "1.2E+3", "123456789012345678901"]
texts = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["<think>", "\\", '"', "\x00\x1f\x7f", "\u2028", "é/", "\ud800"]
)
leaves = st.one_of(
    texts, st.sampled_from(LITERALS).map(lambda s: ("num", s)), st.booleans(), st.none()
)
trees = st.recursive(
    leaves,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(texts, kids, max_size=4),
    max_leaves=20,
)


def _dump(value: object, indent: str | None, key_sep: str, item_sep: str, level: int = 0) -> str:
    pad = "" if indent is None else "\n" + indent * (level + 1)
    end = "" if indent is None else "\n" + indent * level
    sep = item_sep if indent is None else "," + pad
    if isinstance(value, tuple):
        return value[1]
    if isinstance(value, str):  # as Node writes strings: raw UTF-8, lone surrogates escaped
        return re.sub(
            "[\ud800-\udfff]",
            lambda m: f"\\u{ord(m.group()):04x}",
            json.dumps(value, ensure_ascii=False),
        )
    if isinstance(value, list):
        return (
            "["
            + pad
            + sep.join(_dump(v, indent, key_sep, item_sep, level + 1) for v in value)
            + end
            + "]"
            if value
            else "[]"
        )
    if isinstance(value, dict):
        return (
            "{"
            + pad
            + sep.join(
                _dump(k, indent, key_sep, item_sep)
                + key_sep
                + _dump(v, indent, key_sep, item_sep, level + 1)
                for k, v in value.items()
            )
            + end
            + "}"
            if value
            else "{}"
        )
    return json.dumps(value)


def _string_paths(value: object, path: tuple = ()) -> list[tuple]:
    if isinstance(value, str):
        return [path]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _string_paths(v, path + (i,))]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _string_paths(v, path + (k,))]
    return []


@settings(max_examples=200, deadline=None)
@given(
    tree=st.dictionaries(texts, trees, min_size=1, max_size=5),
    layout=st.sampled_from(
        [(None, ":", ","), (None, ": ", ", "), ("\t", ": ", ","), ("  ", ": ", ",")]
    ),
    new_text=texts,
    data=st.data(),
)
def test_jsonedit_property_edit_changes_only_its_span(tree, layout, new_text, data) -> None:
    paths = _string_paths(tree)
    if not paths:
        return
    path = data.draw(st.sampled_from(paths))
    raw = _dump(tree, *layout).encode("utf-8")
    marked = _dump(_replace(tree, path, SENTINEL), *layout).encode("utf-8")
    prefix, _, suffix = marked.partition(json.dumps(SENTINEL, ensure_ascii=False).encode())
    new, _ = edit(raw, [SetValue(path, new_text)], Style.sniff([raw]))
    assert json.loads(new) == _replace(json.loads(raw), path, new_text)
    # everything outside the one string literal is identical, number literals included
    assert new.startswith(prefix) and new.endswith(suffix)
    assert json.loads(new[len(prefix) : len(new) - len(suffix)]) == new_text


SENTINEL = "\u00a7SENTINEL\u00a7"


def _replace(value: object, path: tuple, new: object) -> object:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]
    assert isinstance(value, dict)
    return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}


@settings(max_examples=200, deadline=None)
@given(
    tree=st.dictionaries(texts, trees, min_size=1, max_size=5),
    layout=st.sampled_from([(None, ":", ","), ("  ", ": ", ",")]),
    new_texts=st.lists(texts, min_size=2, max_size=4),
    data=st.data(),
)
def test_jsonedit_property_several_edits_in_a_multibyte_record(
    tree, layout, new_texts, data
) -> None:
    """Several spans spliced at once, located in the text and cut from the bytes (their
    offsets differ wherever a character takes more than one byte): the record parses to the
    edited tree, and the new bytes are exactly the old ones with each literal replaced."""
    paths = _string_paths(tree)
    chosen = data.draw(st.lists(st.sampled_from(paths), unique=True, min_size=1)) if paths else []
    if not chosen:
        return
    tree = {"\u00e9\U0001f600": "\u00fcber", **tree}  # multibyte before every span
    chosen = [p for p in chosen if p[:1] != ("\u00e9\U0001f600",)]
    raw = _dump(tree, *layout).encode("utf-8")
    edits = [SetValue(p, t) for p, t in zip(chosen, new_texts)]
    new, _ = edit(raw, edits, Style.sniff([raw]))
    expected = json.loads(raw)
    for e in edits:
        expected = _replace(expected, e.path, e.value)
    assert json.loads(new) == expected
    marked = tree
    for e in edits:
        marked = _replace(marked, e.path, SENTINEL)
    style = Style.sniff([raw])
    outside = (
        _dump(marked, *layout)
        .encode("utf-8")
        .split(json.dumps(SENTINEL, ensure_ascii=False).encode())
    )
    literals = [dump_str(e.value, style).encode("utf-8") for e in edits]
    assert len(outside) == len(literals) + 1
    pos = 0
    for i, run in enumerate(outside):  # the literals are spliced in document order
        assert new.startswith(run, pos)
        pos += len(run)
        if i < len(literals):
            lit = next(x for x in literals if new.startswith(x, pos))
            pos += len(lit)
    assert pos == len(new)


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from(' \t\n\r{}",:a\u00e9'), max_size=20), data=st.data())
def test_skipping_blanks_without_the_regex_lands_where_the_regex_does(
    text: str, data: st.DataObject
) -> None:
    """`_ws` answers compact JSON (no blank at `i`) without the regex: the same offset,
    the end of the text included."""
    i = data.draw(st.integers(0, len(text)))
    assert _ws(text, i) == _WS.match(text, i).end()  # type: ignore[union-attr]


def _members_walked(text: str, i: int) -> tuple[list[tuple[str, int, int, int, int]], int]:
    """`jsonspans._members` as it was, a call per blank skipped, per separator and per value
    (the reference its written-out loop must match, offsets and errors)."""
    if text[i] != "{":
        raise UnsafeEdit(f"expected an object at {i}")
    members: list[tuple[str, int, int, int, int]] = []
    j = _ws(text, i + 1)
    if text[j] == "}":
        return members, j
    while True:
        if text[j] != '"':
            raise UnsafeEdit(f"expected a key at {j}")
        key, key_end = json.decoder.scanstring(text, j + 1)  # type: ignore[attr-defined]
        k = _ws(text, key_end)
        if text[k] != ":":
            raise UnsafeEdit(f"expected ':' at {k}")
        v = _ws(text, k + 1)
        end = value_end(text, v)
        members.append((key, j, key_end, v, end))
        j = _ws(text, end)
        if text[j] == ",":
            j = _ws(text, j + 1)
        elif text[j] == "}":
            return members, j
        else:
            raise UnsafeEdit(f"expected ',' or '}}' at {j}")


def _outcome(walk: Any, text: str, i: int) -> object:
    try:
        members, close = walk(text, i)
    except (UnsafeEdit, IndexError, ValueError) as exc:
        return type(exc), str(exc)
    return [tuple(m) for m in members], close


_JSON_PIECES = st.sampled_from(
    [
        "{",
        "}",
        '"k"',
        '"\\u00e9\\"x"',
        ":",
        ",",
        " ",
        "\n  ",
        "\t",
        "1",
        "-2.5e3",
        "true",
        "null",
        "[1, {}]",
        '"v"',
        '"é"',
        "[",
        "]",
        "x",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    pieces=st.lists(_JSON_PIECES, max_size=24),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=8,
    ),
    indent=st.sampled_from([None, 1, "\t"]),
    data=st.data(),
)
def test_the_written_out_member_walk_is_the_walk_it_was(
    pieces: list[str], value: Any, indent: Any, data: st.DataObject
) -> None:
    """Any text, well-formed JSON objects (compact or pretty) and fragments: the same members
    at the same offsets, or the same error, from every `{` (#26 item 4)."""
    texts = ["".join(pieces), json.dumps({"a": value, "b": [value]}, indent=indent)]
    for text in texts:
        starts = [i for i, c in enumerate(text) if c == "{"]
        for i in starts or [0] * bool(text):
            assert _outcome(_members, text, i) == _outcome(_members_walked, text, i)
