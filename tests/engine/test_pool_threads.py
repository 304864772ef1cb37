"""The process pool in a process with other threads: fork copies only the calling thread, so
a lock another thread held at that instant stays held in every forked worker for ever, and a
worker that takes it never returns (nor the run). A process with threads running (a library
caller's, a Dask client's loop, a job still on a thinkfix lane) starts its workers with
forkserver; one whose only other threads are thinkfix's idle lanes still forks (cheap).

Before: `pool.start_method()` was fork whatever ran beside it, and the first test hung.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.engine.repair_helpers import copy_fixtures, run, tree_bytes
from tests.processes import run_python
from thinkfix.engine.parallel import pool
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.io.filestate import HASHING

pytestmark = pytest.mark.skipif(
    sys.platform == "darwin" or sys.platform == "win32", reason="fork is not used there"
)

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
    assert done.stdout.split("\n")[:2] == ["forkserver", str([t * 2 for t in range(8)])]


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


def test_fork_only_where_no_other_thread_runs() -> None:
    assert pool.start_method() == "fork"
    with _thread_running():
        assert pool.start_method() == "forkserver"
    assert pool.start_method() == "fork"


def test_a_job_still_on_a_lane_is_a_thread_running_an_idle_lane_is_not() -> None:
    release, done = threading.Event(), queue.SimpleQueue()  # type: ignore[var-annotated]
    assert HASHING.submit(lambda _: release.wait(30), None, done)
    try:
        assert HASHING.threads() == 1 and not HASHING.idle()
        assert pool.start_method() == "forkserver"
    finally:
        release.set()
    assert done.get(timeout=30) is None
    assert HASHING.idle()
    assert pool.start_method() == "fork"  # its thread waits on its queue: nothing held


@pytest.mark.parametrize("jobs", [2, 3])
def test_a_scan_beside_a_running_thread_reports_what_one_process_does(jobs: int) -> None:
    alone = scan(["fixtures"], ScanOptions(), jobs=1).to_dict()
    with _thread_running():
        assert pool.start_method() == "forkserver"
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
