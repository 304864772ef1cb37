"""`repair --fix` on OpenCode's SQLite store (opencode.db): the same state change as its file
store, made row by row in the store repair's one transaction, undone exactly (keeping what
the runtime wrote since)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.health.fixes.store_helpers import (
    assert_dry_run_writes_nothing,
    assert_fixed_once,
    assert_undo_keeps_what_was_written_since,
    fix,
    problems,
)
from tests.engine.repair_helpers import run
from tests.formats import goose_db, opencode_db
from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.health.fixes.stores import RowFix, diff
from thinkfix.engine.health.run import check_file
from thinkfix.engine.ledger import restore as restore_mod
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.report.checks import Check
from thinkfix.formats import registry

T0 = opencode_db.T0
RUNNING = {
    "type": "tool",
    "callID": "call_9",
    "tool": "bash",
    "state": {"status": "running", "input": {"command": "ls"}, "time": {"start": T0 + 1500}},
}
DONE = {
    "type": "tool",
    "callID": "call_8",
    "tool": "read",
    "state": {
        "status": "completed",
        "input": {"filePath": "a.ts"},
        "output": "ok",
        "title": "a.ts",
        "metadata": {},
        "time": {"start": T0 + 1200, "end": T0 + 1300},
    },
}
MESSAGES: list[opencode_db.Message] = [
    (
        "msg_9a1f4e510001aA1bB2cC3dD4eE",
        "user",
        {},
        [
            ("prt_9a1f4e510002aA1bB2cC3dD4eE", {"type": "text", "text": "list the files"}),
        ],
    ),
    (
        "msg_9a1f4e510003aA1bB2cC3dD4eE",
        "assistant",
        {"modelID": "claude-sonnet-4-5"},
        [
            ("prt_9a1f4e510004aA1bB2cC3dD4eE", DONE),
            ("prt_9a1f4e510005aA1bB2cC3dD4eE", RUNNING),
        ],
    ),
]
PART = "prt_9a1f4e510005aA1bB2cC3dD4eE"


def _data(path: Path, part: str) -> str:
    with closing(sqlite3.connect(path)) as db:
        (data,) = db.execute("SELECT data FROM part WHERE id = ?", (part,)).fetchone()
    return str(data)


@pytest.mark.parametrize("name", ["opencode.db", "kilo/kilo.db"])  # Kilo CLI: OpenCode's store
def test_store_fix_sets_the_running_part_to_opencodes_aborted_error(
    tmp_path: Path, name: str
) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    db = opencode_db.build(tmp_path / name, MESSAGES)
    before = _data(db, PART)
    assert problems(db, "opencode") == ["call-without-result"]
    result = fix(db, tmp_path / "a")
    (file,) = result.files
    assert file.format == ("kilo" if "kilo" in name else "opencode")
    assert file.status is FileStatus.REPAIRED and [f.problem for f in file.fixes] == [
        "call-without-result"
    ]
    data = _data(db, PART)
    assert json.loads(data) == {
        **RUNNING,
        "state": {
            "status": "error",
            "input": {"command": "ls"},
            "time": {"start": T0 + 1500, "end": T0 + 1500},
            "error": "Tool execution aborted",
        },
    }
    # every byte of the row before `state` kept, written as OpenCode writes it (compact)
    assert data.startswith(before.split('"state":')[0]) and ": " not in data
    assert problems(db, "opencode") == []
    assert_fixed_once(db, tmp_path / "b")


def test_store_fix_dry_run_changes_nothing(tmp_path: Path) -> None:
    db = opencode_db.build(tmp_path / "opencode.db", MESSAGES)
    assert_dry_run_writes_nothing(db, tmp_path / "a")


def test_store_fix_undo_puts_back_the_row_and_keeps_what_the_runtime_wrote_since(
    tmp_path: Path,
) -> None:
    db = opencode_db.build(tmp_path / "opencode.db", MESSAGES)
    expected = opencode_db.build(tmp_path / "expected.db", MESSAGES)
    # the runtime goes on: a new message after the repair
    rows = opencode_db.rows([("msg_9a1f4e510009aA1bB2cC3dD4eE", "user", {}, [])])
    assert_undo_keeps_what_was_written_since(db, expected, tmp_path / "a", rows)


GOOSE: goose_db.Session = (
    "20260601_1",
    "anthropic",
    "claude-sonnet-4-5",
    [
        ("user", [goose_db.text("Run the tests.")]),
        (
            "assistant",
            [
                goose_db.text("Running."),
                goose_db.call("call_1", "developer__shell", {"command": "pytest"}),
            ],
        ),
        ("user", [goose_db.result("call_gone", "ok"), goose_db.text("and?")]),
    ],
)


def _content(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return [str(c) for (c,) in db.execute("SELECT content_json FROM messages ORDER BY id")]


def test_goose_store_fix_drops_the_unanswered_request_as_goose_does(tmp_path: Path) -> None:
    """Goose's `fix_tool_calling` drops an unanswered request and an orphan response before
    every provider call; the fix does the same in the rows (`content_json`)."""
    db = goose_db.build(tmp_path / "sessions.db", [GOOSE])
    before = _content(db)
    found = check_file(str(db), registry.get("goose"), {Check.TOOL_PAIRS}).findings
    assert sorted(str(f.problem) for f in found) == ["call-without-result", "result-without-call"]
    result = fix(db, tmp_path / "a")
    assert [f.status for f in result.files] == [FileStatus.REPAIRED]
    after = _content(db)
    assert json.loads(after[1]) == [goose_db.text("Running.")]
    assert json.loads(after[2]) == [goose_db.text("and?")]
    assert after[0] == before[0]
    assert check_file(str(db), registry.get("goose"), {Check.TOOL_PAIRS}).findings == ()
    assert result.manifest_path is not None
    assert restore_mod.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert _content(db) == before


def test_store_fix_secrets_masks_a_part_row(tmp_path: Path) -> None:
    token = "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ12"
    messages: list[opencode_db.Message] = [
        (
            "msg_9a1f4e510001aA1bB2cC3dD4eE",
            "user",
            {},
            [
                ("prt_9a1f4e510002aA1bB2cC3dD4eE", {"type": "text", "text": f"use {token} please"}),
            ],
        ),
    ]
    db = opencode_db.build(tmp_path / "opencode.db", messages)
    result = run([db], WriteMode.IN_PLACE, tmp_path / "a", fixes=frozenset({Fix.SECRETS}))
    assert [f.status for f in result.files] == [FileStatus.REPAIRED]
    data = json.loads(_data(db, "prt_9a1f4e510002aA1bB2cC3dD4eE"))
    assert token not in data["text"] and "[REDACTED:" in data["text"]
    assert result.manifest_path is not None
    assert restore_mod.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert token in _data(db, "prt_9a1f4e510002aA1bB2cC3dD4eE")


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def _changed(draw: st.DrawFn) -> tuple[Any, Any]:
    """A row's value and what a fix makes of it: values set, list items removed."""
    old = draw(_VALUES)

    def change(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: change(v) for k, v in value.items()}
        if isinstance(value, list):
            kept = [change(v) for v in value if draw(st.booleans()) or draw(st.booleans())]
            return kept
        return draw(_VALUES) if draw(st.integers(0, 3)) == 0 else value

    return old, change(old)


@settings(max_examples=80, deadline=None)
@given(_changed())
def test_a_rows_edits_make_exactly_the_fixed_value_and_keep_its_style(
    case: tuple[Any, Any],
) -> None:
    old, new = case
    raw = json.dumps({"v": old}, separators=(",", ":"))
    edits = diff({"v": old}, {"v": new})
    assert edits is not None
    row = RowFix("part", (("id", "p"),), "data", {"v": old}, tuple(edits))
    out = row.spliced(raw)
    if out is None:  # a splice the editor could not prove is refused, never guessed
        return
    assert json.loads(out) == {"v": new}
    # planned over another value (the runtime wrote the row since): left as it is
    assert RowFix("part", (("id", "p"),), "data", {"v": [old]}, tuple(edits)).spliced(raw) is None
