"""Crush's store (`.crush/crush.db`): read, repaired into its reasoning part, undone (#24 item 1).

Stores are built from Crush's own migrations (tests/formats/crush_db.py); the fixture
fixtures/crush/shop/.crush/crush.db is one of them.
"""

from __future__ import annotations

import fcntl
import json
import sqlite3
from contextlib import AbstractContextManager, closing, nullcontext
from pathlib import Path
from typing import Any

import pytest

from tests.engine.repair_helpers import run
from tests.formats import crush_db, opencode_db
from tests.formats.crush_db import finish, reasoning, text, tool_call
from tests.formats.support import FIXTURES
from thinkfix.engine.inputs.discover import discover
from thinkfix.engine.ledger import journal, restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.crush import UPDATED_AT_TRIGGER, Crush, go_json

FIXTURE = FIXTURES / "crush" / "shop" / ".crush" / "crush.db"
LEAKING = {crush_db.LEAKY_ID, crush_db.ORPHAN_ID}


def _store(tmp_path: Path, messages: list[crush_db.Message] = crush_db.LEAKY) -> Path:
    folder = tmp_path / ".crush"
    folder.mkdir(parents=True, exist_ok=True)
    return crush_db.build(folder / "crush.db", messages)


def _rows(path: Path, table: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as db:
        return list(db.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid"))


def _parts(path: Path, message: str) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(path)) as db:
        (raw,) = db.execute("SELECT parts FROM messages WHERE id = ?", (message,)).fetchone()
    parts: list[dict[str, Any]] = json.loads(raw)
    return parts


def _dump(path: Path) -> list[str]:
    """Every row and schema statement; sorted, as a trigger made again is listed last."""
    with closing(sqlite3.connect(path)) as db:
        return sorted(db.iterdump())


def _folder(path: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(path.iterdir())}


# --- the schema and the shapes are Crush's ---------------------------------------------------


def test_crush_own_trigger_is_the_migrations_text() -> None:
    """`own_triggers` is copied from Crush's first migration, word for word."""
    initial = (crush_db.MIGRATIONS / "20250424200609_initial.sql").read_text()
    assert UPDATED_AT_TRIGGER in initial
    assert crush_db.trigger_statement("update_messages_updated_at") == UPDATED_AT_TRIGGER


@pytest.mark.parametrize(
    "value,go",
    [
        # json.Marshal(ReasoningContent{Thinking: "a < b && c > d"}) (Go 1.24)
        (
            reasoning("a < b && c > d")["data"],
            (
                '{"thinking":"a \\u003c b \\u0026\\u0026 c \\u003e d","signature":"",'
                '"thought_signature":"","tool_id":"","responses_data":null}'
            ),
        ),
        # json.Marshal(TextContent{Text: "é\u2028\n\t\"x\""})
        ({"text": 'é\u2028\n\t"x"'}, '{"text":"é\\u2028\\n\\t\\"x\\""}'),
    ],
)
def test_crush_parts_are_written_as_go_marshals_them(value: Any, go: str) -> None:
    assert go_json(value) == go


def test_crush_fixture_is_the_builders_store(tmp_path: Path) -> None:
    """The checked-in store is what crush_db.fixture makes (so its shapes are tested ones)."""
    built = crush_db.fixture(tmp_path / "crush.db")
    for table in ("messages", "files", "read_files"):
        assert _rows(FIXTURE, table) == _rows(built, table)
    with closing(sqlite3.connect(FIXTURE)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


# --- scan -------------------------------------------------------------------------------------


def test_crush_store_is_detected_by_its_tables_not_its_name(tmp_path: Path) -> None:
    store = _store(tmp_path)
    renamed = tmp_path / "sessions.sqlite"
    renamed.write_bytes(store.read_bytes())
    for path in (store, renamed):
        assert registry.detect_file(str(path)).id == "crush"
    assert Crush().detect(store.read_bytes()[:100]) == 0.0  # a head alone proves nothing


def test_crush_scan_finds_the_leaks_and_not_the_decoys() -> None:
    """Two leaks (a block before a tool call, an orphan close); `<think>` in the user's
    text, in a tool's output, in inline code and a fenced block is no leak."""
    report = scan([str(FIXTURE)], jobs=1)
    assert not report.errors
    assert report.summary.assistant_messages == 4
    assert {f.message_id for f in report.findings} == LEAKING
    assert sorted(f.kind.value for f in report.findings) == ["block", "orphan_close"]
    assert {f.model for f in report.findings} == {"MiniMax-M2"}


@pytest.mark.parametrize("state", ["closed", "running"])
def test_crush_scan_reads_rows_only_in_the_wal_and_leaves_the_folder(
    tmp_path: Path, state: str
) -> None:
    """Crush keeps the store in WAL mode: while it runs its newest messages live only in
    `crush.db-wal`. A scan reads them and leaves every file of the folder as it was."""
    held: AbstractContextManager[None] = nullcontext()
    if state == "closed":
        store = _store(tmp_path)
    else:
        store = _store(tmp_path, crush_db.LEAKY[:1])
        later = crush_db.rows(crush_db.LEAKY[1:], "a2b3c4d5-0000-4000-8000-000000000001")
        held = opencode_db.holding(store, later)
    with held:
        before = _folder(store.parent)
        assert ("crush.db-wal" in before) is (state == "running")
        report = scan([str(store)], jobs=1)
        assert _folder(store.parent) == before
    assert not report.errors and {f.message_id for f in report.findings} == LEAKING


# --- repair and undo --------------------------------------------------------------------------


def test_crush_repair_moves_the_reasoning_into_a_reasoning_part(tmp_path: Path) -> None:
    """In place: the reasoning goes into a reasoning part before the text, shaped as Crush
    writes one (unsigned); the text keeps only what was shown. Crush's triggers fire on
    none of it: `updated_at` and the sessions' `message_count` stay, every trigger is there."""
    store = _store(tmp_path)
    sessions, triggers = _rows(store, "sessions"), _triggers(store)
    before = {r[1]: r for r in _rows(store, "messages")}
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert [f.status for f in result.files] == [FileStatus.REPAIRED]
    assert _parts(store, crush_db.LEAKY_ID) == [
        reasoning("The total is summed in floats; 0.1 + 0.2 drifts. Read cart.go first."),
        text("The total is summed as floats. Let me read cart.go."),
        tool_call(crush_db.CALL, "view", {"file_path": "/home/ana/src/shop/cart.go"}),
        finish("tool_use", crush_db.T0 + 12),
    ]
    assert [p["type"] for p in _parts(store, crush_db.ORPHAN_ID)] == [
        "reasoning",
        "text",
        "finish",
    ]
    after = {r[1]: r for r in _rows(store, "messages")}
    changed = {k for k in before if after[k] != before[k]}
    assert changed == LEAKING
    for key in changed:  # only `parts` moved: not updated_at (index 8), not the rowid
        assert [i for i, (a, b) in enumerate(zip(before[key], after[key])) if a != b] == [4]
    assert _rows(store, "sessions") == sessions and _triggers(store) == triggers
    assert not scan([str(store)], jobs=1).findings


def _triggers(path: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(path)) as db:
        return sorted(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))


def test_crush_undo_gives_back_every_row_and_the_schema(tmp_path: Path) -> None:
    store = _store(tmp_path)
    before = _dump(store)
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None and _dump(store) != before
    (entry,) = journal.load_manifest(result.manifest_path)["files"]
    assert entry["role"] == "database" and entry["format"] == "crush"
    assert [r["table"] for r in entry["rows"]] == ["messages", "messages"]
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert _dump(store) == before


def test_crush_repair_to_out_leaves_the_store_alone(tmp_path: Path) -> None:
    store = _store(tmp_path)
    before = _folder(store.parent)
    result = run([store], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    (copy,) = (tmp_path / "out").rglob("crush.db")
    assert result.exit_code() is ExitCode.CLEAN and _folder(store.parent) == before
    assert not scan([str(copy)], jobs=1).findings
    assert {f.message_id for f in scan([str(store)], jobs=1).findings} == LEAKING


def _leak(parts: list[dict[str, Any]]) -> list[crush_db.Message]:
    return [("m-1", "user", [text("go"), finish("stop", 0)]), ("m-2", "assistant", parts)]


def test_crush_reasoning_joins_an_unsigned_reasoning_part(tmp_path: Path) -> None:
    """Crush shows and replays a message's first reasoning part only: unsigned, it takes the
    extracted reasoning after its own."""
    store = _store(tmp_path, _leak([reasoning("Native."), text("<think>Inline.</think>Done.")]))
    assert run([store], WriteMode.IN_PLACE, tmp_path).exit_code() is ExitCode.CLEAN
    assert _parts(store, "m-2") == [reasoning("Native.\n\nInline."), text("Done.")]


def test_crush_a_signed_reasoning_part_is_never_changed(tmp_path: Path) -> None:
    """A signature covers its thinking: the reasoning goes into a new part before the text,
    and the signed one (the one Crush replays) stays as it was."""
    signed = reasoning("Native.", signature="EqQBsig")
    store = _store(tmp_path, _leak([signed, text("<think>Inline.</think>Done.")]))
    assert run([store], WriteMode.IN_PLACE, tmp_path).exit_code() is ExitCode.CLEAN
    assert _parts(store, "m-2") == [signed, reasoning("Inline."), text("Done.")]


def test_crush_a_text_left_empty_goes_only_when_the_message_shows_something_else(
    tmp_path: Path,
) -> None:
    call = tool_call("c1", "ls", {"path": "."})
    store = _store(tmp_path, _leak([text("<think>Look first.</think>"), call]))
    assert run([store], WriteMode.IN_PLACE, tmp_path).exit_code() is ExitCode.CLEAN
    assert _parts(store, "m-2") == [reasoning("Look first."), call]
    alone = _store(tmp_path / "b", _leak([text("<think>Only this.</think>"), finish("end_turn")]))
    before = _dump(alone)
    result = run([alone], WriteMode.IN_PLACE, tmp_path / "b")
    assert [c.placement.kind.value for c in result.changes] == ["refused"]
    assert _dump(alone) == before


def test_crush_store_held_by_a_crush_server_is_in_use(tmp_path: Path) -> None:
    """Crush's server holds an exclusive flock on `crush.lock` beside the store
    (internal/db/datadirlock.go) and writes messages from memory: left alone, in use."""
    store = _store(tmp_path)
    before = _dump(store)
    with open(store.parent / "crush.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = run([store], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert file.status is FileStatus.SKIPPED and "crush.lock" in file.errors[0].message
    assert _dump(store) == before
    assert run([store], WriteMode.IN_PLACE, tmp_path).exit_code() is ExitCode.CLEAN


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TRIGGER audit AFTER UPDATE OF parts ON messages BEGIN SELECT 1; END",
        UPDATED_AT_TRIGGER.replace("IF NOT EXISTS update_messages_updated_at", "audit"),
    ],
)
def test_crush_a_trigger_that_is_not_crushs_refuses_the_store(tmp_path: Path, sql: str) -> None:
    """Only Crush's own trigger, under its own name and text, is kept from firing: a trigger
    of anyone else on what the repair writes refuses the store, unchanged."""
    store = _store(tmp_path)
    with closing(sqlite3.connect(store)) as db:
        db.execute(sql)
        db.commit()
    before = _dump(store)
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert file.status is FileStatus.FAILED and "audit ON messages" in file.errors[0].message
    assert _dump(store) == before


# --- where its stores are ---------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["CRUSH_GLOBAL_DATA", "XDG_DATA_HOME", None])
def test_crush_locations_are_the_projects_crush_lists(tmp_path: Path, variable: str | None) -> None:
    """projects.json beside Crush's global config (internal/projects/projects.go) lists every
    project and its data folder; a relative one is the project's."""
    home = tmp_path / "home"
    data = {
        "CRUSH_GLOBAL_DATA": tmp_path / "g",
        "XDG_DATA_HOME": tmp_path / "x" / "crush",
        None: home / ".local" / "share" / "crush",
    }[variable]
    data.mkdir(parents=True)
    projects = [
        {
            "path": "/src/shop",
            "data_dir": "/src/shop/.crush",
            "last_accessed": "2026-01-01T00:00:00Z",
        },
        {"path": "/src/blog", "data_dir": ".crush", "last_accessed": "2026-01-02T00:00:00Z"},
    ]
    (data / "projects.json").write_text(json.dumps({"projects": projects}, indent=2))
    env = {}
    if variable == "CRUSH_GLOBAL_DATA":
        env[variable] = str(data)
    elif variable == "XDG_DATA_HOME":
        env[variable] = str(data.parent)
    assert Crush().default_locations(env, home) == [
        Path("/src/shop/.crush/crush.db"),
        Path("/src/blog/.crush/crush.db"),
    ]


def test_crush_store_is_discovered_from_projects_json(tmp_path: Path) -> None:
    """`--discover` and `where` reach a project's store through Crush's list, which also
    passes over the `.crush/.gitignore` (`*`) Crush writes beside it."""
    store = _store(tmp_path / "src" / "shop")
    (store.parent / ".gitignore").write_text("*\n")
    listed = {"projects": [{"path": str(store.parent.parent), "data_dir": str(store.parent)}]}
    data = tmp_path / ".local" / "share" / "crush"
    data.mkdir(parents=True)
    (data / "projects.json").write_text(json.dumps(listed))
    assert discover(env={"PWD": str(tmp_path)}, home=tmp_path) == [str(store)]
