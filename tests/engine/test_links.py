"""Issue 11 item 5: hard links never split silently, and a symlink's target outside the
paths named is not rewritten unless `--follow-links` says so (the link is always kept)."""

from __future__ import annotations

import os
from pathlib import Path

from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import FileStatus, RepairOptions, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.io.errors import ErrorKind

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"


def options(tmp: Path, **kw: object) -> RepairOptions:
    kw.setdefault("run_dir", str(tmp / "run"))
    return RepairOptions(mode=WriteMode.IN_PLACE, **kw)  # type: ignore[arg-type]


def test_hard_linked_session_is_refused_not_split(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    first = root / "a.jsonl"
    first.write_bytes(LEAKY.read_bytes())
    other = tmp_path / "elsewhere.jsonl"
    os.link(first, other)
    result = repair_paths([str(root)], options(tmp_path))
    assert first.read_bytes() == other.read_bytes() == LEAKY.read_bytes()
    assert os.stat(first).st_ino == os.stat(other).st_ino  # still one file with two names
    [f] = result.files
    assert f.status is FileStatus.SKIPPED
    [err] = result.all_errors
    assert err.kind == ErrorKind.LINKED.value and "2 hard links" in err.message
    assert result.exit_code() is ExitCode.ERROR


def test_clean_hard_linked_file_is_no_error(tmp_path: Path) -> None:
    """Only a file that would be rewritten is refused: reading a hard link is harmless."""
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(
        b'{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}\n'
    )
    os.link(clean, tmp_path / "twin.jsonl")
    result = repair_paths([str(clean)], options(tmp_path))
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors


def test_symlink_out_of_named_folder_refused_unless_follow_links(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    outside = tmp_path / "outside" / "real.jsonl"
    outside.parent.mkdir()
    outside.write_bytes(LEAKY.read_bytes())
    link = root / "link.jsonl"
    link.symlink_to(outside)
    result = repair_paths([str(root)], options(tmp_path))
    assert outside.read_bytes() == LEAKY.read_bytes()
    [err] = result.all_errors
    assert err.kind == ErrorKind.LINKED.value and "--follow-links" in err.message
    assert result.exit_code() is ExitCode.ERROR
    result = repair_paths(
        [str(root)], options(tmp_path, follow_links=True, run_dir=str(tmp_path / "run2"))
    )
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert outside.read_bytes() != LEAKY.read_bytes()
    assert link.is_symlink() and os.readlink(link) == str(outside)  # the link is kept


def test_symlink_inside_named_paths_is_repaired_through_and_kept(tmp_path: Path) -> None:
    root = tmp_path / "t"
    (root / "real").mkdir(parents=True)
    target = root / "real" / "a.jsonl"
    target.write_bytes(LEAKY.read_bytes())
    link = tmp_path / "named-link.jsonl"
    link.symlink_to(target)
    result = repair_paths([str(link)], options(tmp_path))  # named itself: its target is named
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert link.is_symlink() and target.read_bytes() != LEAKY.read_bytes()
