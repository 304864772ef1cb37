"""Scan past one machine: the same per-file work, run on a Dask distributed cluster.

The engine's unit of work is one file (`scan_file`) and its result a mergeable value, and
`build_report` sorts everything, so a cluster returns the report a single process would
(DESIGN.md "Speed and scale"). Files are listed here and read by the workers, so the
workers must see the same paths (a shared filesystem). `distributed` is an optional
extra (`pip install 'thinkfix[dask]'`), imported only when `--dask` is given.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from thinkfix.engine.inputs import Candidate, InputFile
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.scan import ScannedFile, ScanOptions, scan_file


class DaskUnavailable(RuntimeError):
    """`--dask` without the optional dependency: say what to install."""


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
    return Client(address), as_completed  # type: ignore[no-untyped-call]


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
