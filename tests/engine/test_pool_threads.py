"""The process pool in a process with other threads: fork copies only the calling thread, so
a lock another thread held at that instant stays held in every forked worker for ever, and a
worker that takes it never returns (nor the run). A process with threads running (a library
caller's, a Dask client's loop, a job still on a thinkfix lane) starts its workers with
spawn; one whose only other threads are thinkfix's idle lanes still forks (cheap).

Before: `pool.start_method()` was fork whatever ran beside it, and the first test hung.
"""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.engine.repair_helpers import FIXTURES, copy_fixtures, run, tree_bytes
from tests.processes import run_python
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.ledger import restore
from thinkfix.engine.parallel import pool
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan

pytestmark = pytest.mark.skipif(
    sys.platform == "darwin" or sys.platform == "win32", reason="fork is not used there"
)

SESSION = "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"  # a Claude Code session that leaks
#: A module the workers import: its lock is the one another thread holds at the fork.
HOLDER = """
import threading
LOCK = threading.Lock()
def work(shared, task):
    with LOCK:
        return task * 2
"""
#: A caller's thread holds `holder.LOCK` while the pool starts; the workers take it per task.
SCRIPT = """
import sys, threading, time
sys.path.insert(0, sys.argv[1])
import holder
from thinkfix.engine.parallel import pool
taken, done = threading.Event(), threading.Event()
def hold():
    with holder.LOCK:
        taken.set()
        done.wait(30)  # until the pool is over, or long enough that a fork copies it held
t = threading.Thread(target=hold)
t.start()
taken.wait()
print(pool.start_method())
print(sorted(pool.run(holder.work, list(range(8)), None, 2, chunk=1)))
done.set()
t.join()
"""


def test_a_lock_another_thread_holds_at_the_start_does_not_hang_the_workers(
    tmp_path: Path,
) -> None:
    (tmp_path / "holder.py").write_text(HOLDER)
    done = run_python(SCRIPT, str(tmp_path), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["spawn", str([t * 2 for t in range(8)])]


@contextmanager
def _thread_running() -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


#: The method chosen in a fresh process: alone, beside a thread, with a job on a lane and
#: with that lane idle again (the suite's own process may have threads of its own).
CHOICES = """
import os, queue, threading, time
from thinkfix.engine.parallel import pool
from thinkfix.io.filestate import HASHING
print(pool.start_method())
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
print(pool.start_method())
stop.set()
thread.join()
# A joined thread's task may stay in /proc/self/task a moment longer (Python 3.10 here):
# the pool spawns meanwhile, which is safe, only slower to start.
deadline = time.monotonic() + 30
while len(os.listdir("/proc/self/task")) > 1 and time.monotonic() < deadline:
    time.sleep(0.01)
print(pool.start_method())
release, done = threading.Event(), queue.SimpleQueue()
assert HASHING.submit(lambda _: release.wait(30), None, done)
print(HASHING.threads(), HASHING.idle(), pool.start_method())
release.set()
assert done.get(timeout=30) is None
print(HASHING.threads(), HASHING.idle(), pool.start_method())
"""


def test_fork_only_where_no_other_thread_runs_or_a_lane_job_is_pending() -> None:
    done = run_python(CHOICES, timeout=120)
    assert done.stdout.split("\n")[:5] == [
        "fork",
        "spawn",  # beside a running thread
        "fork",
        "1 False spawn",  # a job still on the hashing lane
        "1 True fork",  # its thread waits on its queue: nothing held
    ]


@pytest.mark.parametrize("jobs", [2, 3])
def test_a_scan_beside_a_running_thread_reports_what_one_process_does(jobs: int) -> None:
    alone = scan(["fixtures"], ScanOptions(), jobs=1).to_dict()
    with _thread_running():
        assert pool.start_method() == "spawn"
        beside = scan(["fixtures"], ScanOptions(), jobs=jobs).to_dict()
    assert beside == alone


def test_a_repair_beside_a_running_thread_writes_what_one_process_does(tmp_path: Path) -> None:
    root = copy_fixtures(tmp_path)
    one = run([root], WriteMode.OUT, tmp_path / "a", out_dir=str(tmp_path / "one"), jobs=1)
    with _thread_running():
        two = run([root], WriteMode.OUT, tmp_path / "b", out_dir=str(tmp_path / "two"), jobs=2)
    assert tree_bytes(tmp_path / "two") == tree_bytes(tmp_path / "one")
    assert len(two.changes) == len(one.changes) > 0
    assert [e.path for e in two.all_errors] == [e.path for e in one.all_errors]


def test_an_in_place_repair_beside_a_running_thread_is_undone_exactly(tmp_path: Path) -> None:
    """The workers seal the undo journal with the key of the state folder the caller set
    (THINKFIX_STATE_DIR here): a forkserver started earlier kept an older environment, and
    undo refused the journal as sealed with another key."""
    root = tmp_path / "in"  # session files undo gives back byte for byte (a store, row by row)
    root.mkdir()
    for i in range(8):
        shutil.copy(FIXTURES / "claude-code" / SESSION, root / f"s{i}.jsonl")
    before = tree_bytes(root)
    with _thread_running():
        result = run([root], WriteMode.IN_PLACE, tmp_path, jobs=2)
    assert [c for c in result.changes if c.applied]
    assert tree_bytes(root) != before
    manifest = tmp_path / "run" / mf.MANIFEST_NAME
    assert restore.undo(str(manifest)).exit_code() is ExitCode.CLEAN
    assert tree_bytes(root) == before
