"""The SIGKILL harness: `repair --in-place` killed at random instants, then checked.

Each trial copies a mixed corpus (every fixture format, plain, `.gz` and `.zst`),
starts `thinkfix repair --in-place` (one or two jobs), SIGKILLs it (the main
process alone, or its whole process group) after a random delay, and checks:

- every file holds its original bytes or its fully repaired content, never a mix;
- the next run finishes the work and leaves no temporary file anywhere;
- undoing the next run, then the killed one (from its journal), gives back the
  original tree byte for byte.

CI runs a handful of kills; `THINKFIX_KILLS=300 pytest tests/engine/test_kill_harness.py`
runs hundreds (docs/reliability.md has the figures of the last long run).
"""

from __future__ import annotations

import gzip
import os
import random
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.engine.repair_helpers import copy_fixtures, temp_files
from tests.formats.support import is_store, store_content, store_of, tree_content
from tests.processes import start_thinkfix
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.io.compression import open_read

KILLS = int(os.environ.get("THINKFIX_KILLS", "4"))
SEED = int(os.environ.get("THINKFIX_KILL_SEED", "11"))


def corpus(dest: Path) -> Path:
    """Every fixture session, plus gzip and zstd copies of the JSONL ones."""
    root = copy_fixtures(dest)
    for p in sorted(root.rglob("*.jsonl")):
        data = p.read_bytes()
        p.with_name(p.name + ".gz").write_bytes(gzip.compress(data, mtime=0))
        p.with_name(p.name + ".zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    return root


def read_bytes(path: Path) -> bytes:
    with open_read(path) as fp:
        return fp.read()


def contents(root: Path) -> dict[str, Any]:
    """Each file's decompressed content (a repaired .gz may differ only in its header; a
    database store is its rows and schema, whatever SQLite did to its pages)."""
    return {
        str(p.relative_to(root)): store_content(p) if is_store(p) else read_bytes(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".thinkfix" not in p.name and store_of(p) is None
    }


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, Any], float]:
    """The pristine corpus, its contents before and after one full repair, and its run time."""
    base = tmp_path_factory.mktemp("kill-reference")
    pristine = corpus(base / "pristine")
    done = base / "done"
    shutil.copytree(pristine, done)
    started = time.monotonic()
    result = repair_paths(
        [str(done)], RepairOptions(mode=WriteMode.IN_PLACE, run_dir=str(base / "run"))
    )
    elapsed = time.monotonic() - started
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    return pristine, contents(pristine), contents(done), elapsed


def _trial(
    n: int, tmp: Path, reference: tuple[Path, dict[str, Any], dict[str, Any], float]
) -> None:
    pristine, before, after, elapsed = reference
    rng = random.Random(SEED * 100003 + n)
    work = tmp / f"trial-{n}"
    root = work / "fixtures"
    shutil.copytree(pristine, root)
    original = tree_content(root)
    jobs = rng.choice(["1", "2"])
    killed_run = work / "killed"
    env = dict(os.environ, THINKFIX_ACTIVE_SECONDS="0")  # same state folder: same undo key
    proc = start_thinkfix(
        "repair",
        "--in-place",
        "--isolated",
        "--jobs",
        jobs,
        "--run-dir",
        str(killed_run),
        "--no-progress",
        str(root),
        env=env,
        new_session=True,
    )
    # Python's start-up takes a good part of a run: aim past it, into the writes.
    time.sleep(rng.uniform(0.15, 0.45 + 3 * elapsed))
    whole_group = rng.random() < 0.5
    try:
        if whole_group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    time.sleep(0.3)  # workers of a killed parent die with it (lifeline)
    with_group = "group" if whole_group else "main"
    now = contents(root)
    for name, data in now.items():
        assert data in (before[name], after[name]), (
            f"trial {n} ({with_group}, jobs {jobs}): {name} is neither original nor repaired"
        )
    # The next run completes the repair and removes every temporary file.
    next_run = work / "next"
    result = repair_paths(
        [str(root)], RepairOptions(mode=WriteMode.IN_PLACE, run_dir=str(next_run))
    )
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert temp_files(root) == []
    assert contents(root) == after
    # Undo both runs, newest first: the original bytes, exactly.
    for run in (next_run, killed_run):
        manifest = run / mf.MANIFEST_NAME
        if manifest.exists() or (run / (mf.MANIFEST_NAME + mf.JOURNAL_SUFFIX)).is_dir():
            try:
                undone = restore.undo(str(manifest))
            except mf.ManifestError as exc:
                # Killed before the journal's sealed header: no file had been replaced yet
                # (the header comes first), which the tree comparison below proves.
                assert "no sealed run.header" in str(exc), exc
                continue
            assert undone.exit_code() is ExitCode.CLEAN, undone.files
    assert tree_content(root) == original, f"trial {n}: undo is not exact"
    assert temp_files(root) == []
    shutil.rmtree(work)


@pytest.mark.crash
@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX signals")
@pytest.mark.parametrize("n", range(KILLS))
def test_repair_killed_at_random_instant_is_whole_and_undoable(
    tmp_path: Path, reference: tuple[Path, dict[str, Any], dict[str, Any], float], n: int
) -> None:
    _trial(n, tmp_path, reference)
