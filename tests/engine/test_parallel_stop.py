"""engine/parallel/pool.py stopped early (#26 item 4 review: pool workers finished their
chunks after SIGINT): the pool starts no task after its parent stops reading, each worker
stopping at its next task's boundary, and workers leave Ctrl-C to the parent."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from thinkfix.engine.parallel import pool as parallel

TASKS, CHUNK = 40, 20  # two chunks, one a worker


def _started(log: str, task: int) -> int:
    """Note the task; a task of the second chunk waits (as a slow file would) until the
    parent has said stop, or 30 s where no stop flag exists (the pool before the fix)."""
    with open(log, "a") as out:
        out.write(f"{task}\n")
    if task >= CHUNK:
        deadline = time.monotonic() + 30
        stop = getattr(parallel, "_stop", None)  # None: the pool before the fix
        while stop is not None and not stop.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
    return task


def _ignores_sigint(log: str, task: int) -> int:
    os.kill(os.getpid(), signal.SIGINT)  # a terminal's Ctrl-C reaches every worker too
    time.sleep(0.05)  # a handler that raises would raise here
    return task


def _first_chunk_then(stop: Callable[[], None], log: Path) -> None:
    for task in parallel.run(_started, list(range(TASKS)), str(log), 2, chunk=CHUNK):
        if task < CHUNK:
            stop()


def _interrupt() -> None:
    raise KeyboardInterrupt


def test_a_pool_interrupted_starts_no_task_after_it(tmp_path: Path) -> None:
    """Failed before the fix: the pool's shutdown waited for the second chunk, all 40 tasks."""
    log = tmp_path / "started"
    with pytest.raises(KeyboardInterrupt):
        _first_chunk_then(_interrupt, log)
    started = [int(x) for x in log.read_text().split()]
    assert sorted(t for t in started if t < CHUNK) == list(range(CHUNK))
    # the one in hand (if the second worker had started by then), then none
    assert [t for t in started if t >= CHUNK] in ([], [CHUNK])


def test_a_pool_whose_reader_goes_away_starts_no_task_after_it(tmp_path: Path) -> None:
    """The caller stops reading (the generator is closed): the same."""
    log = tmp_path / "started"
    results = parallel.run(_started, list(range(TASKS)), str(log), 2, chunk=CHUNK)
    assert next(results) < CHUNK
    results.close()
    started = [int(x) for x in log.read_text().split()]
    assert [t for t in started if t >= CHUNK] in ([], [CHUNK])


def test_pool_workers_leave_ctrl_c_to_the_parent() -> None:
    """A SIGINT to a worker does not stop its task: the parent decides (`_stop`)."""
    assert sorted(parallel.run(_ignores_sigint, list(range(4)), "", 2, chunk=1)) == [0, 1, 2, 3]
