"""Scan and repair past one machine: the same per-file work, run on a Dask distributed cluster.

The engine's unit of work is one file and its result a mergeable value: scan hands
`run_tasks` its `scan_file` and `build_report` sorts everything, so a cluster returns the
report a single process would (DESIGN.md "Speed and scale"); repair merges its per-file
results by index the same way. This module knows neither: it runs the function it is given. Files are listed here and read and written by the workers, so the workers
must see the same paths (a shared filesystem, or fsspec URLs). `distributed` is an optional
extra (`pip install 'thinkfix[dask]'`), imported only when `--dask` is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

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
    fn: Callable[..., R],
    tasks: Sequence[T],
    address: str,
    sizes: Sequence[int] = (),
    shared: object = None,
) -> Iterator[tuple[int, R | BaseException]]:
    """`fn(task)` for every task, each a task on the cluster at `address`, yielding (the
    task's index, its result or the exception that ended it) as they finish: callers merge
    by index, so the order they finish in never shows. Largest first (`sizes`), so one big
    file started last does not leave the other workers idle. `shared`, when given, is sent
    once to every worker and passed as `fn(task, shared)`. `fn` must be importable by the
    workers (a module-level function of an installed package)."""
    client, as_completed = _client(address)
    try:
        order = sorted(range(len(tasks)), key=lambda i: -sizes[i] if sizes else 0)
        ordered = [tasks[i] for i in order]
        if shared is None:
            futures = client.map(fn, ordered, pure=False)
        else:
            handle = client.scatter(shared, broadcast=True)
            futures = client.map(fn, ordered, [handle] * len(ordered), pure=False)
        index = {f.key: i for f, i in zip(futures, order, strict=True)}
        for future in as_completed(futures):
            try:
                outcome: R | BaseException = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost task, reported by the caller
                outcome = exc
            yield index[future.key], outcome
    finally:
        client.close()
