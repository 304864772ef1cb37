"""A state file whose values are of the wrong type (review10): a count that is text, a size
that is a float, a context that is a list of numbers, a format id this version does not know.
Each reached the run's arithmetic or the format registry and ended `scan --incremental` with
an internal error (exit 2, no other file reported, the state not saved). Now such a state is
damaged, as a state that is not JSON is: a note on stderr, every file read whole, the report
and exit code a full scan's."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.telemetry import sessions
from tests.telemetry.test_cli_incremental import OLD_NS, _plain_env  # noqa: F401 (autouse)
from thinkfix.cli import main


def _run(*args: str) -> tuple[int, Any, str]:
    result = CliRunner().invoke(main, ["scan", "--isolated", "--output-format", "json", *args])
    return result.exit_code, json.loads(result.stdout), result.stderr


def _files(root: Path) -> None:
    """A leaking session, a clean one, and one with a bad line: findings, counts per model and
    an error in the state's entries."""
    root.mkdir()
    files = {
        "leak.jsonl": b"".join(sessions.claude_code(i, leak=i == 2) for i in range(4)),
        "clean.jsonl": b"".join(sessions.claude_code(i, leak=False) for i in range(4)),
        "bad.jsonl": sessions.claude_code(0, leak=False) + b'{"type": "assistant", ,\n',
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
        os.utime(root / name, ns=(OLD_NS, OLD_NS))


def _state(root: Path) -> tuple[dict[str, Any], tuple[int, Any]]:
    """A state saved by an incremental run over `root`, and a full scan's exit and report."""
    _run("--state", "good.json", str(root))
    full = _run(str(root))
    return json.loads(Path("good.json").read_bytes()), full[:2]


def _at(doc: Any, where: tuple[Any, ...]) -> Any:
    for step in where:
        doc = doc[step]
    return doc


def _put(doc: Any, where: tuple[Any, ...], value: Any) -> None:
    _at(doc, where[:-1])[where[-1]] = value


def _leaves(doc: Any, where: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in the document but its version: each value, list or object."""
    if where:
        yield where
    if isinstance(doc, dict):
        for key, value in doc.items():
            if where or key != "version":
                yield from _leaves(value, (*where, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _leaves(value, (*where, i))


def _json_type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


@pytest.mark.parametrize(
    ("name", "where", "value"),
    [
        ("a count that is text", ("leak.jsonl", 12, 3), "x"),
        ("a size that is a float", ("leak.jsonl", 3), 1.5),
        ("a context of numbers", ("leak.jsonl", 11), [1, 2, 3]),
        ("a model count that is text", ("leak.jsonl", 12, 6, 0, 1), "a"),
    ],
)
def test_a_state_value_of_the_wrong_type_is_a_damaged_state(
    tmp_path: Path, name: str, where: tuple[Any, ...], value: Any
) -> None:
    root = tmp_path / "s"
    _files(root)
    good, full = _state(root)
    (folder,) = good["dirs"]
    _put(good, ("dirs", folder, *where), value)
    Path("state.json").write_text(json.dumps(good))

    code, report, err = _run("--state", "state.json", str(root))

    assert "internal error" not in err, name
    assert (code, report) == full
    assert "is damaged" in err
    assert "3 read whole" in err


def test_a_format_id_this_version_does_not_know_is_a_damaged_state(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _files(root)
    good, full = _state(root)
    good["formats"] = ["no-such-runtime"]
    Path("state.json").write_text(json.dumps(good))

    code, report, err = _run("--state", "state.json", str(root))

    assert "internal error" not in err
    assert (code, report) == full
    assert "is damaged" in err


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    home = tmp_path_factory.mktemp("shapes")
    before = os.getcwd()
    os.chdir(home)
    try:
        _files(home / "s")
        _run("--state", "good.json", str(home / "s"))
        yield home, json.loads((home / "good.json").read_bytes())
    finally:
        os.chdir(before)


WRONG = [1.5, True, "text", [], [1], {}, {"a": 1}]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_value_of_another_type_is_a_damaged_state_never_a_crash(
    saved: tuple[Path, dict[str, Any]], data: st.DataObject
) -> None:
    """Property: a state whose one value (a number, a text, a list, an object, a null; the
    version aside) is replaced by one of another JSON type that cannot stand there is never an
    internal error: it is named damaged, and the run's report and exit code are a full
    scan's."""
    home, good = saved
    os.chdir(home)
    where = data.draw(st.sampled_from(sorted(_leaves(good), key=repr)))
    original = _at(good, where)
    # a null stands for an optional text or index: only a float or a boolean is never one; a
    # finding's or error's path is 0 for the entry's own, or another path's text
    wrong = [1.5, True] if original is None else WRONG
    if where[-1] == 0 and original == 0 and where[-3] in (7, 8):
        wrong = [v for v in wrong if v != "text"]
    value = data.draw(st.sampled_from([v for v in wrong if _json_type(v) != _json_type(original)]))
    doc = json.loads(json.dumps(good))
    _put(doc, where, value)
    (home / "state.json").write_text(json.dumps(doc))

    code, report, err = _run("--state", "state.json", str(home / "s"))

    assert "internal error" not in err
    assert (code, report) == _run(str(home / "s"))[:2]
    assert "is damaged" in err, (where, value)
