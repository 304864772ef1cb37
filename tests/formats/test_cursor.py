"""Cursor (the IDE): state.vscdb's cursorDiskKV, built in the shapes public readers document."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.engine.repair_helpers import run
from tests.formats import cursor_db
from tests.formats.cursor_db import COMPOSER, LEAK, assistant, js, user
from tests.processes import held
from thinkfix.engine.ledger import journal, restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry, sqlite_store
from thinkfix.formats.cursor import Cursor, is_store_name
from thinkfix.formats.repairs import PlacementKind

LEAKY_BUBBLE = f"bubbleId:{COMPOSER}:44a64021-7c2b-4e8d-8a5f-0e6d3b2a9c02"
VISIBLE = "Store prices as integer cents; the total is then exact."
REASONING = "The total is summed as floats; integer cents fix it."


def _store(tmp_path: Path, conversations: Any = cursor_db.LEAKY, **kw: Any) -> Path:
    return cursor_db.build(tmp_path / "state.vscdb", conversations, **kw)


def _one(tmp_path: Path, bubble: dict[str, Any], **kw: Any) -> Path:
    """A store whose one conversation is a question and `bubble`."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    return _store(tmp_path, {COMPOSER: [user("u-1", "Why?"), bubble]}, **kw)


def _placements(result: Any) -> list[PlacementKind]:
    return [c.placement.kind for f in result.files for c in f.changes]


def test_cursor_store_is_detected_by_its_table_and_vscode_state_is_not(tmp_path: Path) -> None:
    db = _store(tmp_path)
    assert registry.detect_or_raise(db.read_bytes()[:65536], str(db)).id == "cursor"
    vscode = tmp_path / "Code" / "state.vscdb"
    vscode.parent.mkdir()
    with closing(sqlite3.connect(vscode)) as conn:
        conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        conn.commit()
    assert registry.detect(vscode.read_bytes()[:65536], str(vscode)) is None


def test_cursor_store_name_claims_only_cursor_folders() -> None:
    assert is_store_name("/home/ana/.config/Cursor/User/globalStorage/state.vscdb")
    assert is_store_name("/home/ana/.cursor-server/data/User/globalStorage/state.vscdb")
    assert not is_store_name("/home/ana/.config/Code/User/globalStorage/state.vscdb")
    assert not is_store_name("/home/ana/.config/Cursor/User/globalStorage/state.vscdb.backup")


def test_cursor_scan_reads_every_assistant_bubble_in_conversation_order(tmp_path: Path) -> None:
    # headers list the bubbles out of key order; an inline (older) composer; an orphan bubble
    late = assistant("0000-first-key", "<think>second</think>Two.")
    early = assistant("ffff-last-key", "<think>first</think>One.")
    inline = cursor_db.composer("aaaa-inline", [])
    inline["conversation"] = [
        {"type": 1, "bubbleId": "i-1", "text": "Old question"},
        {"type": 2, "bubbleId": "i-2", "text": "<think>old</think>Old answer."},
    ]
    orphan = assistant("o-1", "<think>orphan</think>Orphan.")
    db = _store(
        tmp_path,
        {COMPOSER: [user("u-1", "Go"), early, late]},
        extra=[
            ("composerData:aaaa-inline", js(inline)),
            ("bubbleId:no-composer:o-1", js(orphan)),
        ],
    )
    report = scan([str(db)], jobs=1)
    assert not report.errors
    assert report.summary.assistant_messages == 4
    assert [(f.session_id, f.message_id, f.json_path) for f in report.findings] == [
        (COMPOSER, "ffff-last-key", "bubble.text"),
        (COMPOSER, "0000-first-key", "bubble.text"),
        ("aaaa-inline", "i-2", "conversation[1].text"),
        ("no-composer", "o-1", "bubble.text"),
    ]


def test_cursor_user_bubbles_and_decoys_are_not_leaks(tmp_path: Path) -> None:
    db = _store(
        tmp_path,
        {
            COMPOSER: [
                user("u-1", "<think>is this a leak?</think> no: the user wrote it"),
                assistant("a-1", "Models emit <think> and </think> around their reasoning."),
                assistant("a-2", "Wrap it as `<think>plan</think>` in the prompt."),
                assistant("a-3", "if a < b > c: pass"),
                assistant(
                    "a-4",
                    "The answer.",
                    thinking={"text": "native <think>reasoning</think>", "signature": "EqQB"},
                ),
            ]
        },
    )
    report = scan([str(db)], jobs=1)
    assert not report.errors and not report.findings
    assert report.summary.assistant_messages == 4


def test_cursor_value_that_is_not_json_is_an_error_not_clean(tmp_path: Path) -> None:
    db = _store(tmp_path, extra=[(f"bubbleId:{COMPOSER}:broken", "{not json")])
    report = scan([str(db)], jobs=1)
    assert any("not JSON" in e.message for e in report.errors)
    assert report.exit_code() is not ExitCode.CLEAN


def test_cursor_repair_moves_reasoning_into_thinking_and_splices_only_that_row(
    tmp_path: Path,
) -> None:
    db = _store(tmp_path)
    before = dict(cursor_db.all_rows(db))
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert [f.status for f in result.files] == [FileStatus.REPAIRED]
    assert _placements(result) == [PlacementKind.FIELD]
    after = dict(cursor_db.all_rows(db))
    assert {k for k in after if after[k] != before[k]} == {LEAKY_BUBBLE}
    old = before[LEAKY_BUBBLE]
    # the stored text changes only where the text changed and the thinking went in
    expected = old.replace(js(LEAK), js(VISIBLE) + ',"thinking":' + js({"text": REASONING}))
    assert after[LEAKY_BUBBLE] == expected and isinstance(after[LEAKY_BUBBLE], str)
    assert not scan([str(db)], jobs=1).findings


def test_cursor_undo_restores_the_exact_values(tmp_path: Path) -> None:
    db = _store(tmp_path)
    before = cursor_db.all_rows(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None and cursor_db.all_rows(db) != before
    (entry,) = journal.load_manifest(result.manifest_path)["files"]
    assert entry["role"] == "database" and [r["table"] for r in entry["rows"]] == ["cursorDiskKV"]
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert cursor_db.all_rows(db) == before


def test_cursor_blob_values_stay_blobs(tmp_path: Path) -> None:
    db = _one(tmp_path, assistant("a-1", LEAK))
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE cursorDiskKV SET value = CAST(value AS BLOB)")
        conn.commit()
    before = cursor_db.all_rows(db)
    first = run([db], WriteMode.IN_PLACE, tmp_path)
    key = f"bubbleId:{COMPOSER}:a-1"
    value = dict(cursor_db.all_rows(db))[key]
    assert isinstance(value, bytes) and json.loads(value)["thinking"] == {"text": REASONING}
    result = run([db], WriteMode.IN_PLACE, tmp_path / "again")
    assert not result.files[0].changes
    assert first.manifest_path is not None
    assert restore.undo(first.manifest_path).exit_code() is ExitCode.CLEAN
    assert cursor_db.all_rows(db) == before


def test_cursor_reasoning_goes_after_unsigned_reasoning_already_there(tmp_path: Path) -> None:
    db = _one(
        tmp_path,
        assistant("a-1", LEAK, thinking={"text": "Native first.", "isLastThinkingChunk": True}),
    )
    run([db], WriteMode.IN_PLACE, tmp_path)
    bubble = cursor_db.value(db, f"bubbleId:{COMPOSER}:a-1")
    assert bubble["thinking"] == {
        "text": f"Native first.\n\n{REASONING}",
        "isLastThinkingChunk": True,
    }
    assert bubble["text"] == VISIBLE


def test_cursor_signed_thinking_is_never_touched(tmp_path: Path) -> None:
    signed = {"text": "Native.", "signature": "EqQBCkgIARABGAIiQL"}
    db = _one(tmp_path, assistant("a-1", LEAK, thinking=signed))
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert _placements(result) == [PlacementKind.MANIFEST]
    bubble = cursor_db.value(db, f"bubbleId:{COMPOSER}:a-1")
    assert bubble["thinking"] == signed and bubble["text"] == VISIBLE


def test_cursor_leak_equal_to_native_thinking_only_loses_its_tags(tmp_path: Path) -> None:
    db = _one(tmp_path, assistant("a-1", LEAK, thinking={"text": REASONING}))
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert _placements(result) == [PlacementKind.NONE]
    bubble = cursor_db.value(db, f"bubbleId:{COMPOSER}:a-1")
    assert bubble["thinking"] == {"text": REASONING} and bubble["text"] == VISIBLE


def test_cursor_rich_text_holding_the_same_text_follows_it(tmp_path: Path) -> None:
    db = _one(tmp_path, assistant("a-1", LEAK, richText=LEAK))
    run([db], WriteMode.IN_PLACE, tmp_path)
    bubble = cursor_db.value(db, f"bubbleId:{COMPOSER}:a-1")
    assert bubble["text"] == bubble["richText"] == VISIBLE


def test_cursor_lexical_rich_text_is_refused_and_left_alone(tmp_path: Path) -> None:
    rich = js({"root": {"children": [{"children": [{"text": LEAK, "type": "text"}]}]}})
    db = _one(tmp_path, assistant("a-1", LEAK, richText=rich))
    before = cursor_db.all_rows(db)
    result = run([db], WriteMode.IN_PLACE, tmp_path)
    assert _placements(result) == [PlacementKind.REFUSED]
    assert cursor_db.all_rows(db) == before
    assert scan([str(db)], jobs=1).findings


def test_cursor_all_reasoning_bubble_is_refused_unless_it_shows_a_tool_call(
    tmp_path: Path,
) -> None:
    only = "<think>Nothing but reasoning.</think>"
    db = _one(tmp_path / "a", assistant("a-1", only))
    before = cursor_db.all_rows(db)
    assert _placements(run([db], WriteMode.IN_PLACE, tmp_path / "a")) == [PlacementKind.REFUSED]
    assert cursor_db.all_rows(db) == before
    tool = {"name": "read_file", "rawArgs": js({"target_file": "a.py"}), "status": "completed"}
    db = _one(tmp_path / "b", assistant("a-1", only, toolFormerData=tool))
    assert _placements(run([db], WriteMode.IN_PLACE, tmp_path / "b")) == [PlacementKind.FIELD]
    bubble = cursor_db.value(db, f"bubbleId:{COMPOSER}:a-1")
    assert bubble["text"] == "" and bubble["thinking"] == {"text": "Nothing but reasoning."}


def test_cursor_inline_conversation_is_repaired_in_its_composer(tmp_path: Path) -> None:
    inline = cursor_db.composer("aaaa-inline", [])
    inline["conversation"] = [
        {"type": 1, "bubbleId": "i-1", "text": "Old question"},
        {"type": 2, "bubbleId": "i-2", "text": LEAK},
    ]
    db = _store(tmp_path, {}, extra=[("composerData:aaaa-inline", js(inline))])
    run([db], WriteMode.IN_PLACE, tmp_path)
    bubble = cursor_db.value(db, "composerData:aaaa-inline")["conversation"][1]
    assert bubble == {
        "type": 2,
        "bubbleId": "i-2",
        "text": VISIBLE,
        "thinking": {"text": REASONING},
    }


def test_cursor_out_and_dry_run_leave_the_store_untouched(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    db = _store(tmp_path / "store", wal=True)
    before = cursor_db.all_rows(db)
    names = sorted(p.name for p in db.parent.iterdir())
    dry = run([db], WriteMode.DRY_RUN, tmp_path)
    assert [f.status for f in dry.files] == [FileStatus.WOULD_CHANGE]
    out = tmp_path / "out"
    result = run([db], WriteMode.OUT, tmp_path, out_dir=str(out))
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert cursor_db.all_rows(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == names
    copy = out / "state.vscdb"
    assert cursor_db.value(copy, LEAKY_BUBBLE)["thinking"] == {"text": REASONING}
    assert not scan([str(copy)], jobs=1).findings


_HOLDER = r"""
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA locking_mode = EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
print("ready", flush=True)
sys.stdin.read()
"""


@contextmanager
def _held(path: Path) -> Iterator[None]:
    """While the block runs, another process holds the store exclusively, as a writer does."""
    with held(_HOLDER, str(path)):
        yield


def test_cursor_store_held_by_cursor_is_in_use_not_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each read waits up to LOCK_WAIT for a lock to go (a commit's lasts milliseconds); this
    # holder keeps its lock to the end, so those waits (about ten) only cost time, as in goose's.
    monkeypatch.setattr(sqlite_store, "LOCK_WAIT", 0.0)
    folder = tmp_path / "Cursor" / "User" / "globalStorage"
    folder.mkdir(parents=True)
    db = cursor_db.build(folder / "state.vscdb", cursor_db.LEAKY)
    before = cursor_db.all_rows(db)
    with _held(db):
        report = scan([str(db)], jobs=1)
        assert [e.message for e in report.errors] and all(
            "in use" in e.message for e in report.errors
        )
        result = run([db], WriteMode.IN_PLACE, tmp_path)
        assert [f.status for f in result.files] == [FileStatus.SKIPPED]
    assert cursor_db.all_rows(db) == before


@pytest.mark.parametrize("wal", [False, True])
def test_cursor_scan_leaves_the_folder_as_it_was(tmp_path: Path, wal: bool) -> None:
    db = _store(tmp_path, wal=wal)
    stamp = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    assert scan([str(db)], jobs=1).findings
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == stamp


def test_cursor_show_turns_follow_the_conversation(tmp_path: Path) -> None:
    db = _store(tmp_path)
    fmt = Cursor()
    with db.open("rb") as fp:
        turns = [t for r in fmt.read(fp) for t in fmt.turns(r)]
    assert [t.role.value for t in turns] == ["user", "assistant", "assistant", "tool", "assistant"]
    assert turns[2].parts[0].name == "edit_file" and turns[3].parts[0].call_id == "toolu_01"


def test_cursor_folder_scan_takes_the_store_and_not_its_backup(tmp_path: Path) -> None:
    folder = tmp_path / "Cursor" / "User" / "globalStorage"
    folder.mkdir(parents=True)
    db = cursor_db.build(folder / "state.vscdb", cursor_db.LEAKY)
    (folder / "state.vscdb.backup").write_bytes(db.read_bytes())
    report = scan([str(tmp_path)], jobs=1)
    assert not report.errors
    assert {Path(f.path).name for f in report.findings} == {"state.vscdb"}
