"""The one process pool scan, incremental scan and repair share.

Work is a function of (shared, task): `shared` (the options, and what they compiled) reaches
each worker once, inherited through fork where that is safe and pickled to each worker
otherwise; tasks travel in chunks and results come back as chunks finish. Every worker
dies with the process that started it (`lifeline.die_with_parent`: a worker that outlived
a killed run would go on working for nobody), and a pool whose worker died raises
`BrokenProcessPool` instead of hanging (`_never_wait_for_a_dead_reader`), so the caller
can redo what is missing in its own process. Callers merge results in a fixed order, so
what the pool's order is never shows in a report.

Ctrl-C is the parent's to act on: workers ignore SIGINT (a terminal sends it to them too),
and a parent that stops early (an interrupt, any error) cancels the chunks not started and
sets a stop flag every worker reads before each task, so each stops at its next task's
boundary instead of finishing its chunk, or the run (the pool's shutdown used to wait for
every chunk already submitted).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Generator, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

_shared: Any = None  # what the work function gets besides its task, in a worker
_stop: Any = None  # the run's stop flag (a multiprocessing Event), set when its parent stops


def __getattr__(name: str) -> Any:
    """`BrokenProcessPool`, imported when a caller first needs it: multiprocessing is not
    worth loading for a run that starts no pool (a pre-commit hook's scan of one file)."""
    if name == "BrokenProcessPool":
        from concurrent.futures.process import BrokenProcessPool

        return BrokenProcessPool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_jobs() -> int:
    """All cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def start_method() -> str:
    """fork where it is cheap and safe (nothing but the tasks is pickled), else spawn (or the
    platform's default).

    Fork copies one thread: a lock another thread held at that instant (a library caller's
    thread, a Dask client's event loop, a job still on one of thinkfix's lanes) stays held in
    the child for ever, and a worker that needs it waits for ever, and the run with it
    (CPython 3.12 warns of this; 3.14 made forkserver the default). A process whose only other
    threads are thinkfix's idle lanes forks. Not forkserver: its server keeps the environment
    of its start, and a worker must see this process's (THINKFIX_STATE_DIR keys the undo
    journal a worker seals)."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and os.name == "posix" and sys.platform != "darwin":  # macOS system
        return "fork" if _alone() else "spawn"  # frameworks are not fork-safe
    return multiprocessing.get_start_method(allow_none=False)


def _alone() -> bool:
    """Is the calling thread this process's only one, but for thinkfix's idle lanes?"""
    import threading

    from thinkfix.io.filestate import HASHING, SYNCING

    lanes = (HASHING, SYNCING)
    if not all(lane.idle() for lane in lanes):
        return False
    python = threading.active_count() - sum(lane.threads() for lane in lanes)
    try:  # threads Python did not start (a C library's) are listed here, on Linux
        native = len(os.listdir("/proc/self/task")) - threading.active_count()
    except OSError:
        native = 0
    return python == 1 and native <= 0


def chunked(tasks: Sequence[T], workers: int, most: int = 32) -> list[Sequence[T]]:
    """The tasks in chunks, each a quarter of an even share of what is left (at most `most`):
    large first, to amortise a chunk's round trip, then smaller down to single tasks, so the
    workers run out of work together instead of one finishing a full-size chunk alone."""
    out: list[Sequence[T]] = []
    at, n = 0, len(tasks)
    while at < n:
        size = max(1, min(most, (n - at) // (workers * 4)))
        out.append(tasks[at : at + size])
        at += size
    return out


def _start(shared: Any, parent: int, stop: Any) -> None:
    """A worker's start: it dies with `parent`, leaves Ctrl-C to it (`stop` says when to
    stop), and keeps `shared` unless forked with it."""
    import signal

    from thinkfix.io.lifeline import die_with_parent

    global _shared, _stop
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _stop = stop
    if shared is not None:
        _shared = shared


def _call(fn: Callable[[Any, Any], Any], chunk: Sequence[Any]) -> list[Any]:
    """A chunk's results, up to the task before which the parent said stop (its results are
    not waited for then)."""
    out = []
    for task in chunk:
        if _stop is not None and _stop.is_set():
            break
        out.append(fn(_shared, task))
    return out


def run(
    fn: Callable[[S, T], R],
    tasks: Sequence[T],
    shared: S,
    workers: int,
    *,
    chunk: int | None = None,
) -> Generator[R, None, None]:
    """`fn(shared, task)` for every task in `workers` processes, yielding results as their
    chunks finish (tasks start in the order given: put the longest first).

    `fn` must be a module-level function (it is sent by name). Raises `BrokenProcessPool`
    when a worker dies; the results yielded before that are sound. Stopped early (Ctrl-C
    here, an error, the caller no longer reading), the pool starts no more tasks and
    returns once each worker has finished the task it was on."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    global _shared
    method = start_method()
    context = multiprocessing.get_context(method)
    chunks = (
        [tasks[i : i + chunk] for i in range(0, len(tasks), chunk)]
        if chunk
        else chunked(tasks, workers)
    )
    stop = context.Event()
    _shared = shared  # a forked worker inherits it (and whatever it compiled) from here
    try:
        with ProcessPoolExecutor(
            max_workers=max(1, min(workers, len(chunks))),
            mp_context=context,
            initializer=_start,
            initargs=(None if method == "fork" else shared, os.getpid(), stop),
        ) as pool:
            _never_wait_for_a_dead_reader(pool)
            pending: set[Future[list[R]]] = {pool.submit(_call, fn, c) for c in chunks}
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield from future.result()
            except BaseException:
                stop.set()  # before the cancel: a chunk a worker takes meanwhile stops too
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _shared = None


def run_or_here(
    fn: Callable[[S, T], R],
    tasks: Sequence[T],
    shared: S,
    workers: int,
    *,
    key: Callable[[T], Hashable],
    result_key: Callable[[R], Hashable],
    chunk: int | None = None,
) -> Iterator[R]:
    """`run`, and when a worker dies, every task whose result did not come back (`key` of the
    task equal to `result_key` of its result) is done in this process instead: each task's
    result once, in the order they finish."""
    from concurrent.futures.process import BrokenProcessPool

    done: set[Hashable] = set()
    try:
        with contextlib.closing(run(fn, tasks, shared, workers, chunk=chunk)) as results:
            for out in results:
                done.add(result_key(out))
                yield out
    except BrokenProcessPool:
        for task in tasks:  # a worker died: what did not come back is done here
            if key(task) not in done:
                yield fn(shared, task)


def _never_wait_for_a_dead_reader(pool: ProcessPoolExecutor) -> None:
    """Let a broken pool shut down although a killed worker never read its last task.

    Before Python 3.12 (CPython gh-94777) the pool's feeder thread stays blocked writing
    to the dead worker's pipe, and shutting the broken pool down waits for that thread
    for ever: `repair --jobs N` hung after a worker was killed. Not waiting for the call
    queue's feeder is CPython's own fix; every task is sent before results are read, so
    nothing the run needs is in that queue when the pool breaks.
    """
    queue = getattr(pool, "_call_queue", None)
    if queue is not None:
        queue.cancel_join_thread()
