"""A store's text value that is not UTF-8 is an error that quotes none of the session.

sqlite3's own decoding fails with "Could not decode to UTF-8 column 'parts' with text '…'",
the value's first bytes quoted. That message was every command's error for the store, and
`--redact` never saw it: a token in the row, and its reasoning, reached the scan's report,
repair's and diff's output unmasked. Stores now decode their text themselves
(`io.storedtext.stored_text`): the error names the byte, not the text.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.commands import invoke
from thinkfix.formats.sqlite_store import connect
from thinkfix.io.storedtext import NotText

pytestmark = pytest.mark.usefixtures("isolated_cli")

CRUSH = Path(__file__).resolve().parents[2] / "fixtures" / "crush" / "shop" / ".crush" / "crush.db"
TOKEN = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
QUOTED = "The total is summed in floats"  # the damaged answer's reasoning, in the row


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """Crush's store with one assistant row's parts holding a token and a byte that is not
    UTF-8 (a disk error, a writer's bug)."""
    root = tmp_path / "shop"
    (root / ".crush").mkdir(parents=True)
    db = root / ".crush" / "crush.db"
    shutil.copy(CRUSH, db)
    with closing(sqlite3.connect(db)) as conn:
        conn.text_factory = bytes
        (parts,) = conn.execute("SELECT parts FROM messages WHERE id LIKE '1c7e%'").fetchone()
        assert QUOTED.encode() in parts
        parts = parts.replace(QUOTED.encode(), QUOTED.encode() + f" {TOKEN} \xff".encode("latin-1"))
        conn.execute("UPDATE messages SET parts = CAST(? AS TEXT) WHERE id LIKE '1c7e%'", (parts,))
        conn.commit()
    return root


@pytest.mark.parametrize(
    "args",
    [
        ("scan",),
        ("scan", "--output-format", "json"),
        ("scan", "--output-format", "sarif"),
        ("repair", "--dry-run"),
        ("repair", "--diff"),
        ("diff",),
        ("diff", "--output-format", "json"),
    ],
    ids=" ".join,
)
def test_no_byte_of_the_value_is_shown(damaged: Path, args: tuple[str, ...]) -> None:
    result = invoke(*args, str(damaged))
    shown = result.stdout + result.stderr
    assert result.exit_code == 2, shown
    assert "not UTF-8" in shown
    assert TOKEN not in shown and QUOTED not in shown


def test_the_stores_text_is_read_as_sqlite3_reads_it(tmp_path: Path) -> None:
    """The decoding is sqlite3's where the text is UTF-8 (lone surrogates are not: refused
    by both), so a sound store reads the same."""
    path = str(tmp_path / "t.db")
    values = ["", "plain", "naïve ◁think▷ 日本語 🎉", "a\x00b"]
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE t (x TEXT)")
        db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])
        db.execute("INSERT INTO t VALUES (CAST(X'EDA080' AS TEXT))")
        db.commit()
        plain = db.execute("SELECT x FROM t WHERE rowid <= 4").fetchall()
        with pytest.raises(sqlite3.OperationalError):
            db.execute("SELECT x FROM t WHERE rowid = 5").fetchall()
    with closing(connect(path, mode="ro")) as db:
        assert db.execute("SELECT x FROM t WHERE rowid <= 4").fetchall() == plain
        with pytest.raises(NotText, match="not UTF-8"):
            db.execute("SELECT x FROM t WHERE rowid = 5").fetchall()
