"""A store its runtime names that SQLite cannot read (review10): cut short, its pages
overwritten, or not a database past its magic bytes. Found in a walked folder, it was "not a
known session format" and skipped: beside any readable session the run exited 0, its
messages never read. Claimed by its name, as a locked store is, it is now an error for that
file (exit 2) and the other files still scan."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from tests.commands import invoke
from tests.engine.conftest import claude_line
from tests.formats import goose_db, opencode_db
from tests.formats.support import FIXTURES

pytestmark = pytest.mark.usefixtures("isolated_cli")


def _copy(fixture: Path) -> Callable[[Path], None]:
    return lambda target: shutil.copyfile(fixture, target)


#: How to make each runtime's leaking store, and where the runtime keeps it (the name
#: claims it).
STORES: dict[str, tuple[Callable[[Path], object], str]] = {
    "crush": (_copy(FIXTURES / "crush/shop/.crush/crush.db"), ".crush/crush.db"),
    "zed": (_copy(FIXTURES / "zed/threads.db"), "zed/threads/threads.db"),
    "cursor": (_copy(FIXTURES / "cursor/state.vscdb"), "Cursor/User/globalStorage/state.vscdb"),
    "opencode": (
        lambda target: opencode_db.build(target, opencode_db.LEAKY),
        "opencode/opencode.db",
    ),
    "goose": (lambda target: goose_db.build(target), "goose/sessions/sessions.db"),
}


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _overwritten(data: bytes) -> bytes:
    # the header (and the magic bytes) kept, every later page garbled
    return data[:100] + b"\xa5" * (len(data) - 100)


def _header_only(data: bytes) -> bytes:
    return data[:100]


@pytest.mark.parametrize("damage", [_cut, _overwritten, _header_only])
@pytest.mark.parametrize("store", sorted(STORES))
def test_a_damaged_store_found_in_a_folder_is_an_error_not_a_skip(
    tmp_path: Path, store: str, damage: Callable[[bytes], bytes]
) -> None:
    make, where = STORES[store]
    target = tmp_path / where
    target.parent.mkdir(parents=True)
    make(target)
    target.write_bytes(damage(target.read_bytes()))
    (tmp_path / "clean.jsonl").write_bytes(claude_line("All done.", uuid="u1"))

    result = invoke("scan", str(tmp_path), "--output-format", "json", "--no-respect-gitignore")

    report = json.loads(result.stdout)
    assert result.exit_code == 2, result.output
    (error,) = report["errors"]
    assert error["path"].endswith(where)
    assert error["kind"] == "unreadable"
    assert "malformed" in error["message"] or "not a database" in error["message"]
    assert report["summary"]["files"] == 2  # the clean session was still read


@pytest.mark.parametrize("store", sorted(STORES))
def test_an_intact_store_and_a_foreign_database_are_as_before(tmp_path: Path, store: str) -> None:
    """The claim by name is for a store SQLite cannot read: an intact store is read as its
    format, and a readable database without the runtime's tables (another program's file of
    that name) outside the runtime's folder is still no session, skipped (in the runtime's
    folder it is an error: tests/engine/test_places.py)."""
    make, where = STORES[store]
    target = tmp_path / "a" / where
    target.parent.mkdir(parents=True)
    make(target)
    other = tmp_path / "b" / Path(where).name
    other.parent.mkdir(parents=True)
    with closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE t (x)")
        db.commit()

    result = invoke("scan", str(tmp_path), "--output-format", "json", "--no-respect-gitignore")

    report = json.loads(result.stdout)
    assert result.exit_code == 1, result.output
    assert report["errors"] == []
    assert {f["path"] for f in report["findings"]} == {f"a/{where}"}
    assert "not a known session format" in result.stderr
