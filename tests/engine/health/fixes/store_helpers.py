"""What the store-fix tests share: a store's dump, its tool-pairs problems, a fixing run."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from tests.engine.repair_helpers import run
from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.health.run import check_file
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.report.checks import Check
from thinkfix.formats import registry


def dump(path: Path) -> list[str]:
    """Every row and schema statement; sorted, as a trigger kept from firing is created again
    at the end of `sqlite_master` (the same trigger, a later place in the dump)."""
    with closing(sqlite3.connect(path)) as db:
        return sorted(db.iterdump())


def problems(path: Path, fmt: str) -> list[str]:
    """The `tool-pairs` problems the check finds in the store, by name."""
    found = check_file(str(path), registry.get(fmt), {Check.TOOL_PAIRS}).findings
    return [str(f.problem) for f in found]


def fix(db: Path, tmp: Path, mode: WriteMode = WriteMode.IN_PLACE, **kw: Any) -> Any:
    """`repair --fix tool-pairs` of one store, as the command runs it."""
    return run([db], mode, tmp, fixes=frozenset({Fix.TOOL_PAIRS}), **kw)


def assert_dry_run_writes_nothing(db: Path, tmp: Path) -> None:
    """A dry run says the store would change and leaves every row and statement as it was."""
    before = dump(db)
    result = fix(db, tmp, WriteMode.CHECK)
    assert [f.status for f in result.files] == [FileStatus.WOULD_CHANGE]
    assert dump(db) == before


def assert_fixed_once(db: Path, tmp: Path) -> None:
    """A second run over a fixed store finds nothing to do."""
    again = fix(db, tmp)
    assert [f.status for f in again.files] == [FileStatus.CLEAN]


def assert_undo_keeps_what_was_written_since(
    db: Path, expected: Path, tmp: Path, later: Iterable[tuple[str, Sequence[object]]]
) -> None:
    """Fix the store, let the runtime go on (the `later` rows, table and values, inserted in
    the fixed store and in `expected`, an untouched copy), undo: the store is `expected`."""
    result = fix(db, tmp)
    assert result.manifest_path is not None and dump(db) != dump(expected)
    rows = list(later)
    for store in (db, expected):
        with closing(sqlite3.connect(store)) as con:
            for table, values in rows:
                con.execute(
                    f"INSERT INTO {table} VALUES ({', '.join('?' for _ in values)})", values
                )
            con.commit()
    undone = restore.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.CLEAN, undone
    assert dump(db) == dump(expected)
