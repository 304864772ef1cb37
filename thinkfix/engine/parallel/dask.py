"""Scan and repair past one machine: the same per-file work, run on a Dask distributed cluster.

The engine's unit of work is one file (`scan_file`) and its result a mergeable value, and
`build_report` sorts everything, so a cluster returns the report a single process would
(DESIGN.md "Speed and scale"); repair merges its per-file results by index the same way
(`run_tasks`). Files are listed here and read and written by the workers, so the workers
must see the same paths (a shared filesystem, or fsspec URLs). `distributed` is an optional
extra (`pip install 'thinkfix[dask]'`), imported only when `--dask` is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from thinkfix.engine.inputs.files import Candidate, InputFile
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.scan.one_file import ScannedFile
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan_file

T = TypeVar("T")
R = TypeVar("R")


class DaskUnavailable(RuntimeError):
    """`--dask` without the optional dependency, or with a scheduler that cannot be reached:
    say what to install or what failed."""


def _client(address: str) -> tuple[Any, Any]:
    """A client of the cluster at `address`, and distributed's `as_completed`."""
    try:
        from distributed import (  # type: ignore[import-untyped,unused-ignore]
            Client,
            as_completed,
        )
    except ImportError:
        raise DaskUnavailable(
            "--dask needs Dask distributed: pip install 'thinkfix[dask]'"
        ) from None
    try:
        client = Client(address)  # type: ignore[no-untyped-call]
    # TimeoutError is an OSError; TypeError: a tls:// address without a security configuration
    except (OSError, ValueError, TypeError) as exc:
        raise DaskUnavailable(
            f"--dask {address}: cannot reach the scheduler ({exc or type(exc).__name__})"
        ) from None
    return client, as_completed


def run_tasks(
    fn: Callable[[T], R], tasks: Sequence[T], address: str, sizes: Sequence[int] = ()
) -> Iterator[tuple[int, R | BaseException]]:
    """`fn(task)` for every task, each a task on the cluster at `address`, yielding (the
    task's index, its result or the exception that ended it) as they finish: callers merge
    by index, so the order they finish in never shows. Largest first (`sizes`), so one big
    file started last does not leave the other workers idle. `fn` must be importable by
    the workers (a module-level function of an installed package)."""
    client, as_completed = _client(address)
    try:
        order = sorted(range(len(tasks)), key=lambda i: -sizes[i] if sizes else 0)
        futures = client.map(fn, [tasks[i] for i in order], pure=False)
        index = {f.key: i for f, i in zip(futures, order, strict=True)}
        for future in as_completed(futures):
            try:
                outcome: R | BaseException = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost task, reported by the caller
                outcome = exc
            yield index[future.key], outcome
    finally:
        client.close()


def scan_files_dask(
    items: Sequence[Candidate | InputFile],
    options: ScanOptions,
    address: str,
    progress: Progress = NULL_PROGRESS,
) -> Iterator[ScannedFile]:
    """Scan every item as one task on the cluster at `address`, yielding results as they
    finish (largest files submitted first, so one big file started last does not leave the
    other workers idle). The options travel once, scattered to every worker."""
    client, as_completed = _client(address)
    total = sum(max(0, getattr(i, "size", 0)) for i in items)
    order = sorted(items, key=lambda i: -max(0, getattr(i, "size", 0)))
    progress.start(len(items), total)
    try:
        shared = client.scatter(options, broadcast=True)
        futures = client.map(scan_file, order, options=shared, pure=False)
        for future in as_completed(futures):
            result: ScannedFile = future.result()
            progress.advance(result.path, result.size)
            yield result
    finally:
        progress.finish()
        client.close()
