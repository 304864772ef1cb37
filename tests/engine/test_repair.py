"""Repair of every fixture format: leaks gone, nothing else changed, ids kept, undo exact."""

from __future__ import annotations

import difflib
import gzip
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from tests.engine.repair_helpers import (
    FIXTURES,
    REFUSED,
    all_ids,
    copy_fixtures,
    copy_unit,
    findings,
    fixture_files,
    leaking_lines,
    options,
    records,
    run,
    session_unit,
    temp_files,
    tree_bytes,
)
from tests.formats.support import content, fixture_totals, is_store, leaking_fixtures, store_content
from thinkfix.engine.ledger import journal, restore
from thinkfix.engine.repair import diff as repair_diff
from thinkfix.engine.repair import plan as repair_plan
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.repair.source import Source
from thinkfix.engine.repair.write import SIDECAR_SUFFIX
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.repairs import ApplyOptions, PlacementKind

#: The fixtures with known leaks (the clean ones must stay clean; a test below checks that).
FILES = leaking_fixtures()
FORMATS = {registry.detect_file(str(p)).id for p in FILES}


def _id(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def test_repair_fixtures_cover_every_format() -> None:
    assert set(registry.names()) <= FORMATS


@pytest.mark.parametrize("source", FILES, ids=_id)
def test_repair_fixture_removes_leaks_and_changes_nothing_else(
    tmp_path: Path, source: Path
) -> None:
    fmt = registry.detect_file(str(source)).id
    before_scan = scan([str(source)], ScanOptions(), jobs=1)
    assert before_scan.findings, "every leaking fixture has known leaks"
    unit = session_unit(source)
    result = run([unit], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    (file,) = [f for f in result.files if Path(f.path) == source]
    assert file.status is FileStatus.REPAIRED and not file.errors
    out = tmp_path / "out" / (source.name if unit == source else source.relative_to(unit))
    # Findings gone, as the scan engine sees them, except in the messages the repair
    # refused (all reasoning: an empty text would break the session), which still leak.
    refused = {
        (source.name, c.site.line)
        for c in file.changes
        if c.placement.kind is PlacementKind.REFUSED
    }
    assert leaking_lines([out]) == refused
    # Every id, link and signature survives.
    assert not all_ids(source, fmt) - all_ids(out, fmt)
    # Records are only added (codex reasoning items), never removed; a changed record is one
    # that leaked (or a codex event copy holding the same leaked text); all others are
    # byte-identical.
    old_records = records(source, fmt)
    old = [r.raw + r.eol for r in old_records]
    new = [r.raw + r.eol for r in records(out, fmt)]
    # the lines each record spans (one for a JSONL line; an Aider reply spans several)
    spans = [range(r.line, r.line + max(1, (r.raw + r.eol).count(b"\n"))) for r in old_records]
    leaked_lines = {f.line for f in before_scan.findings}
    snippets = [orjson.dumps(f.snippet)[1:-1] for f in before_scan.findings if f.snippet]
    inserted = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old, new, autojunk=False
    ).get_opcodes():
        assert tag != "delete", f"records {i1}..{i2} were removed"
        if tag == "insert":
            inserted += j2 - j1
        if tag == "replace":
            assert j2 - j1 >= i2 - i1
            inserted += (j2 - j1) - (i2 - i1)
            for i in range(i1, i2):
                assert not leaked_lines.isdisjoint(spans[i]) or any(
                    s in old[i] for s in snippets
                ), f"line {i + 1} changed but did not leak"
    placed_records = sum(1 for c in file.changes if c.placement.kind is PlacementKind.RECORD)
    assert inserted == file.records_inserted
    # an enveloped Codex rollout gets the agent_reasoning event beside each reasoning item
    # (a legacy rollout, bare items and no events, gets the item alone)
    events = sum(
        1
        for c in file.changes
        if c.placement.kind is PlacementKind.RECORD and "agent_reasoning" in c.placement.where
    )
    assert inserted == placed_records + events
    assert len(new) == len(old) + inserted
    if is_store(source):  # rows change, never the schema (a store has no newline style)
        assert store_content(out)["schema"] == store_content(source)["schema"]
        return
    # Only the trailing-newline style and compression of the original are kept.
    assert out.read_bytes().endswith(b"\n") == source.read_bytes().endswith(b"\n")


@pytest.mark.parametrize("source", FILES, ids=_id)
def test_repair_in_place_then_undo_restores_original_bytes(tmp_path: Path, source: Path) -> None:
    """The bytes come back; a database store's every row and its schema (`content`)."""
    work = copy_unit(source, tmp_path)
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    assert result.exit_code() is ExitCode.CLEAN
    assert content(work) != content(source)
    assert result.manifest_path is not None
    undone = restore.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.CLEAN, undone
    assert content(work) == content(source)
    assert not work.with_name(work.name + SIDECAR_SUFFIX).exists()
    assert temp_files(tmp_path) == []


def test_repair_clean_fixtures_stay_byte_identical(tmp_path: Path) -> None:
    clean = [p for p in fixture_files() if p not in FILES]
    assert clean, "each runtime added with #16 ships a clean session"
    result = run([FIXTURES], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    for path in clean:  # a store's --out copy is made by SQLite: its rows are the same
        assert content(tmp_path / "out" / path.relative_to(FIXTURES)) == content(path)
    assert not [f for f in result.files if Path(f.path) in clean and f.changes]


def test_repair_whole_tree_scans_clean_but_for_refusals_and_second_repair_changes_nothing(
    tmp_path: Path,
) -> None:
    first = run([FIXTURES], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "repaired"))
    assert first.exit_code() is ExitCode.CLEAN
    assert sum(1 for c in first.changes if c.applied) == fixture_totals().leaking - len(REFUSED)
    assert {
        (Path(f.path).name, c.site.line) for f in first.files for c in f.changes if not c.applied
    } == REFUSED
    # "Repair then scan": the refused messages still leak, and a scan says so.
    assert leaking_lines([tmp_path / "repaired"]) == REFUSED
    snapshot = tree_bytes(tmp_path / "repaired")
    second = run([tmp_path / "repaired"], WriteMode.IN_PLACE, tmp_path / "second")
    assert all(f.status is FileStatus.CLEAN for f in second.files)
    assert all(not c.applied for c in second.changes) and second.manifest_path is None
    assert len(second.changes) == len(REFUSED)
    assert tree_bytes(tmp_path / "repaired") == snapshot
    check = run([tmp_path / "repaired"], WriteMode.CHECK, tmp_path)
    assert check.exit_code() is ExitCode.CLEAN


def test_repair_out_mirrors_input_tree_and_leaves_inputs_alone(tmp_path: Path) -> None:
    src = copy_fixtures(tmp_path)
    before = tree_bytes(src)
    run([src], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    assert tree_bytes(src) == before
    mirrored = {p for p in tree_bytes(tmp_path / "out") if not p.endswith(SIDECAR_SUFFIX)}
    assert mirrored == set(before)


def test_repair_read_only_modes_write_nothing(tmp_path: Path) -> None:
    src = copy_fixtures(tmp_path)
    before = tree_bytes(tmp_path)
    for mode in (WriteMode.CHECK, WriteMode.DIFF, WriteMode.DRY_RUN):
        result = run([src], mode, tmp_path, unified_diff=mode is WriteMode.DIFF)
        leaking = {str(p.relative_to(FIXTURES)) for p in FILES}
        assert all(
            f.status
            is (
                FileStatus.WOULD_CHANGE
                if str(Path(f.path).relative_to(src)) in leaking
                else FileStatus.CLEAN
            )
            for f in result.files
        )
        assert result.manifest_path is None
    assert tree_bytes(tmp_path) == before
    assert run([src], WriteMode.CHECK, tmp_path).exit_code() is ExitCode.FINDINGS
    assert run([src], WriteMode.DRY_RUN, tmp_path).exit_code() is ExitCode.CLEAN


def test_repair_diff_mode_gives_unified_diff_of_changed_lines(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.name.startswith("rollout-2026"))  # enveloped
    result = run([source], WriteMode.DIFF, tmp_path, unified_diff=True)
    text = result.files[0].unified_diff
    name = str(source).lstrip("/")
    assert text.startswith(f"--- a/{name}\n+++ b/{name}\n")
    removed = [
        line for line in text.splitlines() if line.startswith("-") and not line.startswith("---")
    ]
    added = [
        line for line in text.splitlines() if line.startswith("+") and not line.startswith("+++")
    ]
    # 3 leaking messages; their event copies; 2 inserted reasoning items, each with its
    # agent_reasoning event.
    assert len(added) == len(removed) + 4
    assert all("<think>" in line or "</think>" in line for line in removed)
    assert not any("<think>" in line for line in added)


def test_repair_claude_code_resumable_keeps_reasoning_only_in_manifest(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.name.startswith("2e8b4f60"))
    work = copy_unit(source, tmp_path)
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    # No thinking block was added: Claude Code would replay it unsigned and fail.
    assert work.read_bytes().count(b'"thinking"') == source.read_bytes().count(b'"thinking"')
    assert result.manifest_path is not None
    doc = journal.load_manifest(result.manifest_path)
    (entry,) = doc["files"]
    placed = [r for r in entry["repairs"] if r["placement"]["kind"] == "manifest"]
    assert placed and all(r["extracted"] for r in placed)
    text = work.read_text("utf-8")
    for r in placed:
        for segment in r["extracted"]:
            assert segment not in text  # the manifest is the only place it lives now


def test_repair_claude_code_archive_mode_adds_unsigned_thinking_block(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.name.startswith("2e8b4f60"))
    result = run(
        [source],
        WriteMode.OUT,
        tmp_path,
        out_dir=str(tmp_path / "out"),
        apply=ApplyOptions(claude_code_mode="archive"),
    )
    out = tmp_path / "out" / source.name
    added = [c for c in result.files[0].changes if c.placement.kind is PlacementKind.BLOCK]
    assert added
    blocks = [
        b
        for r in records(out, "claude-code")
        if r.obj and r.obj.get("type") == "assistant"
        for b in r.obj["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "thinking"
    ]
    unsigned = [b for b in blocks if "signature" not in b]
    assert len(unsigned) == sum(len(c.extracted) for c in added)
    assert all(b.get("signature") != "" for b in blocks)  # never an empty signature


def test_repair_claw_code_legacy_writes_sidecar_and_undo_removes_it(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.name == "session-1775123456789.json")
    work = copy_unit(source, tmp_path)
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    sidecar = tmp_path / (source.name + SIDECAR_SUFFIX)
    doc = orjson.loads(sidecar.read_bytes())
    assert doc["schema_version"] == 1 and doc["source"] == source.name
    assert doc["reasoning"][0]["reasoning"] == [
        "The workspace is under rust/. I should list rust/crates."
    ]
    assert not work.read_bytes().endswith(b"\n")  # legacy files have no trailing newline
    assert result.manifest_path is not None
    restore.undo(result.manifest_path)
    assert not sidecar.exists() and work.read_bytes() == source.read_bytes()


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_repair_compressed_file_stays_compressed_and_undo_without_backup(
    tmp_path: Path, suffix: str
) -> None:
    source = next(p for p in FILES if p.parent.name == "pi")
    raw = source.read_bytes()
    packed = (
        gzip.compress(raw, mtime=1)
        if suffix == ".gz"
        else zstandard.ZstdCompressor(level=7).compress(raw)
    )
    work = tmp_path / (source.name + suffix)
    work.write_bytes(packed)
    result = run([work], WriteMode.IN_PLACE, tmp_path, backup=False)
    assert result.files[0].status is FileStatus.REPAIRED
    data = work.read_bytes()
    assert data[:2] == b"\x1f\x8b" if suffix == ".gz" else data[:4] == b"\x28\xb5\x2f\xfd"
    assert findings([work]) == 0
    assert result.manifest_path is not None and result.backup_dir is None
    restore.undo(result.manifest_path)
    assert work.read_bytes() == packed  # the original compressed bytes, not a recompression


def test_repair_in_place_without_backup_undo_rebuilds_from_records(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.name.startswith("rollout-2026"))  # enveloped
    work = tmp_path / source.name
    work.write_bytes(source.read_bytes())
    result = run([work], WriteMode.IN_PLACE, tmp_path, backup=False)
    assert result.manifest_path is not None
    entry = journal.load_manifest(result.manifest_path)["files"][0]
    assert entry["before"]["backup"] is None and "bytes" not in entry["before"]
    assert entry["content"]["rebuildable"]
    assert not (tmp_path / "run" / "backup").exists()
    restore.undo(result.manifest_path)
    assert work.read_bytes() == source.read_bytes()


def test_repair_symlink_replaces_target_and_keeps_link(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.parent.name == "pi")
    real = tmp_path / "store" / source.name
    real.parent.mkdir()
    real.write_bytes(source.read_bytes())
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    result = run([link], WriteMode.IN_PLACE, tmp_path)
    assert result.files[0].status is FileStatus.REPAIRED
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert findings([real]) == 0
    assert result.manifest_path is not None
    restore.undo(result.manifest_path)
    assert link.is_symlink() and real.read_bytes() == source.read_bytes()


def test_repair_keeps_permission_bits(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.parent.name == "pi")
    work = tmp_path / source.name
    work.write_bytes(source.read_bytes())
    os.chmod(work, 0o640)
    run([work], WriteMode.IN_PLACE, tmp_path)
    assert os.stat(work).st_mode & 0o7777 == 0o640
    run([work], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"))
    assert os.stat(tmp_path / "out" / source.name).st_mode & 0o7777 == 0o640


def test_repair_bad_line_is_copied_through_and_reported(tmp_path: Path) -> None:
    source = next(p for p in FILES if p.parent.name == "pi")
    lines = source.read_bytes().splitlines(keepends=True)
    broken = b'{"type":"message","message":{"role":"assistant","content":"<think>x\n'
    work = tmp_path / source.name
    work.write_bytes(b"".join(lines[:3]) + broken + b"".join(lines[3:]))
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert file.status is FileStatus.REPAIRED
    assert [(e.line, e.kind) for e in file.errors] == [(4, "bad_line")]
    assert result.exit_code() is ExitCode.ERROR  # a file not fully read is never clean
    assert work.read_bytes().splitlines(keepends=True)[3] == broken


def test_repair_jobs_give_the_same_result_as_one_process(tmp_path: Path) -> None:
    one = run([FIXTURES], WriteMode.OUT, tmp_path / "a", out_dir=str(tmp_path / "one"))
    many = run([FIXTURES], WriteMode.OUT, tmp_path / "b", out_dir=str(tmp_path / "many"), jobs=4)
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "many")
    assert [(f.path, f.status, len(f.changes)) for f in one.files] == [
        (f.path, f.status, len(f.changes)) for f in many.files
    ]


def test_repair_hands_the_pool_its_largest_files_first_and_keeps_job_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big session handed out last leaves the other workers idle while one repairs it: the
    pool gets the files largest first (before: in the order given), the results stay in it."""
    from thinkfix.engine.parallel import pool

    sizes: list[int] = []
    real = pool.run

    def spy(fn: Any, tasks: Any, shared: Any, workers: int, **kw: Any) -> Any:
        sizes.extend(os.path.getsize(job.candidate.path) for _, job in tasks)
        return real(fn, tasks, shared, workers, **kw)

    monkeypatch.setattr(pool, "run", spy)
    one = run([FIXTURES], WriteMode.DRY_RUN, tmp_path / "a")
    many = run([FIXTURES], WriteMode.DRY_RUN, tmp_path / "b", jobs=2)
    assert len(sizes) > 2 and sizes == sorted(sizes, reverse=True)
    assert [(f.path, f.status, len(f.changes)) for f in many.files] == [
        (f.path, f.status, len(f.changes)) for f in one.files
    ]


def test_repair_kinds_filter_repairs_only_selected_kinds(tmp_path: Path) -> None:
    scan_options = ScanOptions(kinds=frozenset({"orphan_close"}))
    result = run([FIXTURES], WriteMode.DRY_RUN, tmp_path, scan=scan_options)
    kinds = {k for c in result.changes for k in c.kinds}
    assert "orphan_close" in kinds
    assert all("orphan_close" in c.kinds for c in result.changes)


def test_repair_refuses_writing_out_into_an_input(tmp_path: Path) -> None:
    src = copy_fixtures(tmp_path)
    with pytest.raises(ValueError, match="--out"):
        repair_paths([str(src)], options(WriteMode.OUT, tmp_path, out_dir=str(src)))
    with pytest.raises(ValueError, match="--out"):
        repair_paths([str(src / "pi")], options(WriteMode.OUT, tmp_path, out_dir=str(src)))
    with pytest.raises(ValueError, match="stdin"):
        repair_paths(["-"], options(WriteMode.IN_PLACE, tmp_path))


@pytest.mark.parametrize("source", FILES, ids=_id)
def test_repair_diff_hunks_from_the_plan_match_a_line_diff(source: Path) -> None:
    fmt = registry.detect_file(str(source))
    opened = Source.open(str(source))
    try:
        plan = repair_plan.plan_file(str(source), fmt, opened, options(WriteMode.DIFF, FIXTURES))
        old, new = repair_diff._lines(plan.content), repair_diff._lines(plan.new_content)
        ours = [(g[0][1], g[-1][2], g[0][3], g[-1][4]) for g in repair_diff._hunks(plan, old, new)]
    finally:
        opened.close()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    assert ours == [(g[0][1], g[-1][2], g[0][3], g[-1][4]) for g in matcher.get_grouped_opcodes(0)]


def test_repair_diff_lines_split_only_at_newlines() -> None:
    assert repair_diff._lines("a\u2028b\nc".encode()) == ["a\u2028b\n", "c"]
