"""The undo manifest: what it records, and undo that restores exactly or refuses."""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

import pytest

from tests.engine.repair_helpers import FIXTURES, copy_fixtures, run, tree_bytes
from tests.formats.support import tree_content
from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.ledger import recordwise, restore
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.formats import registry
from thinkfix.io import filestate

CODEX = next((FIXTURES / "codex").glob("rollout-2026-*.jsonl"))  # the enveloped rollout


def _repaired(tmp_path: Path, source: Path = CODEX, **kw: object) -> tuple[Path, dict]:
    work = tmp_path / "s" / source.name
    work.parent.mkdir(exist_ok=True)
    work.write_bytes(source.read_bytes())
    result = run([work], WriteMode.IN_PLACE, tmp_path, **kw)
    assert result.manifest_path is not None
    return work, ledger_journal.load_manifest(result.manifest_path)


def test_manifest_records_hashes_locations_and_extracted_reasoning(tmp_path: Path) -> None:
    work, doc = _repaired(tmp_path)
    assert doc["schema_version"] == mf.SCHEMA_VERSION and doc["mode"] == "in-place"
    assert doc["tool"]["name"] == "thinkfix"
    (entry,) = doc["files"]
    original, new = CODEX.read_bytes(), work.read_bytes()
    assert entry["target"] == str(work) and entry["format"] == "codex"
    assert entry["before"]["sha256"] == filestate.sha256(original)
    assert entry["after"]["sha256"] == filestate.sha256(new)
    assert entry["before"]["backup"] and Path(entry["before"]["backup"]).read_bytes() == original
    # Every changed record: where its original bytes were, their hash, and the bytes.
    changed = [r for r in entry["records"] if not r["inserted"]]
    inserted = [r for r in entry["records"] if r["inserted"]]
    assert len(inserted) == 4 and changed  # two reasoning items, each with its event
    for r in changed:
        b, a = r["before"], r["after"]
        raw = original[b["offset"] : b["offset"] + b["length"]]
        assert raw.decode("utf-8") == b["text"] and filestate.sha256(raw) == b["sha256"]
        assert original.splitlines()[b["line"] - 1] == raw
        assert filestate.sha256(new[a["offset"] : a["offset"] + a["length"]]) == a["sha256"]
    # Every repaired message: where, what kind, and the reasoning that left the text.
    repairs = {r["line"]: r for r in entry["repairs"]}
    assert sorted(repairs) == [6, 11, 19]
    assert repairs[6]["kinds"] == ["block"] and repairs[6]["placement"]["kind"] == "record"
    assert repairs[6]["extracted"] and repairs[6]["extracted"][0].startswith("The user asks")
    assert repairs[19]["kinds"] == ["duplicate"] and repairs[19]["placement"]["kind"] == "none"


def test_manifest_undo_refuses_when_a_file_changed_and_restores_nothing(tmp_path: Path) -> None:
    src = copy_fixtures(tmp_path)
    result = run([src], WriteMode.IN_PLACE, tmp_path)
    repaired = tree_bytes(src)
    victim = min(src.rglob("*.jsonl"))
    # the runtime saved the session again since the repair, in its own spelling: every record
    # the repair wrote changed (a line put first is kept: tests/cli/test_undo_moved.py)
    victim.write_bytes(victim.read_bytes().replace(b'","', b'", "'))
    assert result.manifest_path is not None
    undone = restore.undo(result.manifest_path)
    assert undone.refused and undone.exit_code() is ExitCode.ERROR
    changed = [f for f in undone.files if f.status is restore.UndoStatus.CHANGED]
    assert [f.path for f in changed] == [str(victim)]
    assert "changed since the repair" in changed[0].message
    after = tree_bytes(src)
    assert {k: v for k, v in after.items() if k != str(victim.relative_to(src))} == {
        k: v for k, v in repaired.items() if k != str(victim.relative_to(src))
    }


def test_manifest_undo_skip_changed_restores_the_others(tmp_path: Path) -> None:
    src = copy_fixtures(tmp_path)
    original = tree_content(src)
    result = run([src], WriteMode.IN_PLACE, tmp_path)
    victim = min(src.rglob("*.jsonl"))
    victim.write_bytes(victim.read_bytes().replace(b'","', b'", "'))
    assert result.manifest_path is not None
    undone = restore.undo(result.manifest_path, skip_changed=True)
    assert not undone.refused and undone.exit_code() is ExitCode.ERROR
    now = tree_content(src)
    rel = str(victim.relative_to(src))
    assert {k: v for k, v in now.items() if k != rel} == {
        k: v for k, v in original.items() if k != rel
    }


def test_manifest_undo_twice_is_harmless(tmp_path: Path) -> None:
    work, _ = _repaired(tmp_path)
    path = str(tmp_path / "run" / mf.MANIFEST_NAME)
    assert restore.undo(path).exit_code() is ExitCode.CLEAN
    again = restore.undo(path)
    assert again.exit_code() is ExitCode.CLEAN
    assert {f.status for f in again.files} == {restore.UndoStatus.ALREADY}
    assert work.read_bytes() == CODEX.read_bytes()


def test_manifest_undo_dry_run_changes_nothing(tmp_path: Path) -> None:
    work, _ = _repaired(tmp_path)
    repaired = work.read_bytes()
    result = restore.undo(str(tmp_path / "run" / mf.MANIFEST_NAME), dry_run=True)
    assert [f.status for f in result.files] == [restore.UndoStatus.WOULD_RESTORE]
    assert work.read_bytes() == repaired


def test_manifest_undo_uses_record_bytes_when_backup_is_gone(tmp_path: Path) -> None:
    work, doc = _repaired(tmp_path)
    os.unlink(doc["files"][0]["before"]["backup"])
    assert restore.undo(str(tmp_path / "run" / mf.MANIFEST_NAME)).exit_code() is ExitCode.CLEAN
    assert work.read_bytes() == CODEX.read_bytes()


def test_manifest_undo_ignores_an_altered_backup_and_rebuilds(tmp_path: Path) -> None:
    source = FIXTURES / "claw-code" / "session-1775123456789.json"
    work, doc = _repaired(tmp_path, source)
    entry = next(e for e in doc["files"] if e["role"] == "session")
    Path(entry["before"]["backup"]).write_bytes(b"tampered")
    # The backup's hash is wrong, so the changed records rebuild the file instead.
    assert restore.undo(str(tmp_path / "run" / mf.MANIFEST_NAME)).exit_code() is ExitCode.CLEAN
    assert work.read_bytes() == source.read_bytes()


def test_manifest_undo_fails_cleanly_without_an_intact_copy(tmp_path: Path) -> None:
    packed = gzip.compress(CODEX.read_bytes(), mtime=0)
    source = tmp_path / (CODEX.name + ".gz")
    source.write_bytes(packed)
    work, doc = _repaired(tmp_path, source)
    (entry,) = doc["files"]
    assert "bytes" not in entry["before"] and not entry["content"]["rebuildable"]
    Path(entry["before"]["backup"]).write_bytes(b"tampered")
    repaired = work.read_bytes()
    result = restore.undo(str(tmp_path / "run" / mf.MANIFEST_NAME))
    assert result.exit_code() is ExitCode.ERROR
    assert result.files[0].status is restore.UndoStatus.FAILED
    assert "no intact copy" in result.files[0].message
    assert work.read_bytes() == repaired


def test_manifest_rebuild_drops_inserted_records_and_restores_originals(tmp_path: Path) -> None:
    work, doc = _repaired(tmp_path, backup=False)
    (entry,) = doc["files"]
    out = io.BytesIO()
    recordwise.rebuild(entry, str(work), out)  # record by record, from the file on disk
    assert out.getvalue() == CODEX.read_bytes()
    fmt = registry.get("codex")
    assert len(list(fmt.read(io.BytesIO(work.read_bytes())))) == entry["content"]["after_records"]


def test_manifest_journal_alone_can_undo_a_run_that_died(tmp_path: Path) -> None:
    work, doc = _repaired(tmp_path)
    path = tmp_path / "run" / mf.MANIFEST_NAME
    journal = Path(str(path) + mf.JOURNAL_SUFFIX)
    # Journaled as a run does it (sealed: undo follows no journal thinkfix did not write).
    ledger_journal.start_journal(
        str(journal), roots=doc["roots"], mode=doc["mode"], backup_dir=doc["backup_dir"]
    )
    ledger_journal.journal(str(journal), 0, doc["files"])
    path.unlink()  # the run died before writing its manifest
    loaded = ledger_journal.load_manifest(str(path))
    assert loaded["journal"] and loaded["files"] == doc["files"]
    assert restore.undo(str(path)).exit_code() is ExitCode.CLEAN
    assert work.read_bytes() == CODEX.read_bytes()


def test_manifest_out_run_undo_removes_created_copies(tmp_path: Path) -> None:
    result = run([FIXTURES / "pi"], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    created = tree_bytes(tmp_path / "out")
    assert created and result.manifest_path is not None
    doc = ledger_journal.load_manifest(result.manifest_path)
    assert all(e["before"] is None for e in doc["files"])
    restore.undo(result.manifest_path)
    assert tree_bytes(tmp_path / "out") == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json", "not JSON"),
        (b'{"schema_version": 99, "files": []}', "schema_version 99"),
        (b'{"hello": 1}', "not a thinkfix manifest"),
    ],
)
def test_manifest_load_rejects_foreign_documents(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    with pytest.raises(mf.ManifestError, match=message):
        ledger_journal.load_manifest(str(path))


def test_manifest_backup_path_mirrors_the_absolute_path(tmp_path: Path) -> None:
    assert mf.backup_path("/b", "/home/u/.claude/x.jsonl") == "/b/home/u/.claude/x.jsonl"


def test_manifest_default_state_dir_honours_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKFIX_STATE_DIR", "/s")
    assert mf.default_run_dir("r1") == "/s/runs/r1"
    monkeypatch.delenv("THINKFIX_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", "/x")
    assert mf.default_run_dir("r1") == "/x/thinkfix/runs/r1"
