"""Ctrl-C during `thinkfix repair` (#26 item 4 review, left open by journal5).

A real SIGINT reaches the process mid-run (the script below sends it when the chosen file
starts), as a user's Ctrl-C does. The run must say how many files it had replaced and the
command that takes them back, exit 130 (the shell's status for SIGINT), and with
`--jobs N` stop handing out work: the workers stop at their next file boundary instead of
finishing the run's chunks, every replaced file journaled so undo restores it.
"""

from __future__ import annotations

import re
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.commands import invoke
from tests.engine.repair_helpers import temp_files, tree_bytes
from tests.processes import run_python, run_thinkfix
from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.repair import one_file as repair_one

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"

pytestmark = pytest.mark.usefixtures("isolated_cli")

# `thinkfix ARGS` with SIGINT sent to the main process as the AT-th file starts (counted in
# LOG across processes). The process that sends it waits there: the main one until the
# signal's KeyboardInterrupt lands; a pool worker, like every worker after it, until the
# main process has told the pool to stop (`pool._stop`), as a slow file would.
SCRIPT = r"""
import os, signal, sys, time
from thinkfix.cli import main
from thinkfix.engine.parallel import pool
from thinkfix.engine.repair import one_file

log, at, flag, *argv = sys.argv[1:]
parent, real = os.getpid(), one_file._repair_file

def stopped():
    stop = getattr(pool, "_stop", None)
    deadline = time.monotonic() + 30
    while stop is not None and not stop.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)

def counted(job):
    if os.path.exists(flag) and os.getpid() != parent:
        stopped()
    with open(log, "a") as out:
        out.write(job.candidate.path + "\n")
    with open(log) as seen:
        n = len(seen.read().splitlines())
    if n >= int(at):
        try:
            os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            os.kill(parent, signal.SIGINT)
            if os.getpid() == parent:
                time.sleep(30)  # the signal's handler raises here
            stopped()
    return real(job)

one_file._repair_file = counted
sys.argv = ["thinkfix", *argv]
main()
"""


_IN_PLACE = ("--in-place", "--isolated", "--include-active")  # the files were just written


def _corpus(tmp_path: Path, n: int) -> Path:
    root = tmp_path / "in"
    root.mkdir()
    for i in range(n):
        shutil.copy(LEAKY, root / f"s{i:02d}.jsonl")
    return root


def _interrupted_repair(tmp_path: Path, root: Path, at: int, jobs: int) -> tuple[str, list[str]]:
    log, flag = tmp_path / "started.log", tmp_path / "signalled"
    proc = run_python(
        SCRIPT,
        str(log),
        str(at),
        str(flag),
        "repair",
        *_IN_PLACE,
        "--no-progress",
        "--jobs",
        str(jobs),
        "--run-dir",
        str(tmp_path / "run"),
        str(root),
        check=False,
        timeout=120,
    )
    assert flag.exists(), proc.stderr
    assert proc.returncode == 128 + signal.SIGINT, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr, log.read_text().splitlines()


def _told(stderr: str) -> str:
    """The path of the one `thinkfix undo PATH` command `stderr` gives."""
    told = re.findall(r"thinkfix undo (\S+)", stderr)
    assert len(told) == 1, stderr
    return str(told[0])


def _undo_as_told(stderr: str) -> None:
    undone = run_thinkfix("undo", _told(stderr), timeout=120)
    assert undone.returncode == 0, undone.stderr


def test_repair_interrupted_says_what_it_replaced_and_how_to_undo(tmp_path: Path) -> None:
    """Failed before the fix: click's "Aborted!" and exit 1 (the findings status), nothing
    said about the two files already replaced or their undo."""
    root = _corpus(tmp_path, 6)
    before = tree_bytes(root)
    stderr, started = _interrupted_repair(tmp_path, root, at=3, jobs=1)
    assert len(started) == 3
    replaced = [name for name, data in tree_bytes(root).items() if data != before[name]]
    assert len(replaced) == 2  # the third file was interrupted as it started
    assert re.search(r"interrupted.*\b2 files\b", stderr), stderr
    assert "Aborted!" not in stderr
    _undo_as_told(stderr)
    assert tree_bytes(root) == before
    assert temp_files(root) == []


def test_repair_interrupted_with_jobs_stops_at_the_next_file(tmp_path: Path) -> None:
    """Failed before the fix: the pool's shutdown waited for every chunk already submitted
    (the whole run), so all 40 files were repaired after the Ctrl-C."""
    root = _corpus(tmp_path, 40)
    before = tree_bytes(root)
    stderr, started = _interrupted_repair(tmp_path, root, at=3, jobs=2)
    # The third file, and one the other worker may have had in hand: nothing after.
    assert len(started) <= 3 + 1, started
    replaced = [name for name, data in tree_bytes(root).items() if data != before[name]]
    assert 0 < len(replaced) <= len(started)
    assert re.search(rf"interrupted.*\b{len(replaced)} files?\b", stderr), stderr
    _undo_as_told(stderr)
    assert tree_bytes(root) == before
    assert temp_files(root) == []


def _interrupt_the_third_file(monkeypatch: pytest.MonkeyPatch) -> None:
    real, seen = repair_one._repair_file, [0]

    def interrupted(job: Any) -> Any:
        seen[0] += 1
        if seen[0] == 3:
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(repair_one, "_repair_file", interrupted)


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError])
def test_repair_interrupted_whose_manifest_fails_says_so_and_undoes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: type[BaseException]
) -> None:
    """A second Ctrl-C as the run ends, or a manifest that cannot be written: said, and undo
    follows the journal kept from the same path. Failed before the fix: nothing was said."""
    root = _corpus(tmp_path, 6)
    before = tree_bytes(root)
    _interrupt_the_third_file(monkeypatch)

    def write_manifest(*args: Any) -> None:
        raise failure("disk full")

    monkeypatch.setattr(ledger_journal, "write_manifest", write_manifest)
    run_dir = tmp_path / "run"
    result = invoke("repair", *_IN_PLACE, "--jobs", "1", "--run-dir", str(run_dir), str(root))
    assert result.exit_code == 128 + signal.SIGINT, result.output
    assert re.search(r"error: .*manifest.*(not finished|could not be written)", result.stderr)
    assert not (run_dir / mf.MANIFEST_NAME).exists()
    assert (run_dir / (mf.MANIFEST_NAME + mf.JOURNAL_SUFFIX)).is_dir()
    if failure is OSError:
        assert re.search(r"interrupted: 2 files already replaced", result.stderr)
    undone = invoke("undo", _told(result.stderr))
    assert undone.exit_code == 0, undone.output
    assert tree_bytes(root) == before


def test_repair_interrupted_before_any_write_says_nothing_to_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path, 2)
    before = tree_bytes(root)
    monkeypatch.setattr(repair_one, "_repair_file", _raise_interrupt)
    run_dir = tmp_path / "run"
    result = invoke("repair", *_IN_PLACE, "--jobs", "1", "--run-dir", str(run_dir), str(root))
    assert result.exit_code == 128 + signal.SIGINT, result.output
    assert "interrupted: no file was replaced" in result.stderr
    assert "thinkfix undo" not in result.stderr
    assert tree_bytes(root) == before
    assert not (run_dir / (mf.MANIFEST_NAME + mf.JOURNAL_SUFFIX)).exists()


def _raise_interrupt(job: Any) -> Any:
    raise KeyboardInterrupt
