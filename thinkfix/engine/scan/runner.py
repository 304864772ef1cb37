"""Scan session files for leaked reasoning: one file -> a mergeable `ScannedFile`, many -> a `Report`.

The unit of work is one file, so files run in any order, in any process, and
`build_report` (engine/scan/report.py) sorts everything: `--jobs 8` and `--jobs 1` give the
same report. This module runs them: `scan_file` one file (its records read by
engine/scan/one_file.py), `scan_files` many, in a process pool when that pays, `scan` a whole
walk. What is looked for is `ScanOptions` (engine/scan/options.py); a text's findings and
their fingerprints come from engine/scan/findings.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, BinaryIO

from thinkfix._version import __version__
from thinkfix.engine.inputs.files import Candidate, InputFile
from thinkfix.engine.inputs.walk import WalkStats, walk
from thinkfix.engine.parallel import pool as parallel
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.report import Report
from thinkfix.engine.scan import native
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.report import build_report, require_sessions, with_display_paths
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.scan.task import scan_file

#: Below this many bytes of input, the default `jobs` scans in-process. Measured (#26 item
#: 5, docs/performance.md, bench/jobs.py): a pool costs ~0.15 s of CPU to start and feed on a
#: 2-core VM, a one-process scan of 16 MB of the dense bench corpus ~0.4 s, so two idle cores
#: pay from about 10-16 MB (8 MB lost: 0.67x the one-process time; 16 and 32 MB won: 1.06x,
#: 1.12x); on 16 cores 8 MB lost or broke even at every N (0.90-1.04x), 16 MB won (1.12x by
#: default, up to 1.41x), 24 MB 1.73x, 64 MB 3.00x.
POOL_MIN_BYTES = 16 << 20


def default_jobs() -> int:
    """All cores this process may use."""
    return parallel.default_jobs()


def _task(options: ScanOptions, task: Any) -> Any:
    """A worker's unit: a whole file, or a piece of a large one (engine/scan/split.py)."""
    from thinkfix.engine.scan import split  # a pool's workers only: not a small scan's start-up

    if isinstance(task, split.Piece):
        return split.scan_piece_safely(task, options)
    return scan_file(task, options)


def scan_files(
    items: Sequence[Candidate | InputFile],
    options: ScanOptions = ScanOptions(),
    *,
    jobs: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> Iterator[ScannedFile]:
    """Scan files, in a process pool when `jobs` > 1, yielding results as they complete.

    With `jobs` left to its default, a small input (under `POOL_MIN_BYTES`) runs in this
    process: starting workers would cost more than it saves. The results are the same. In
    a pool, a file much larger than a worker's share is scanned in pieces (engine/scan/split.py),
    so one huge session does not leave the other cores idle; its pieces merge into the
    result one pass gives. A worker that dies leaves its files to this process.
    """
    total = sum(max(0, getattr(i, "size", 0)) for i in items)
    workers = jobs or default_jobs()
    if not jobs and total < POOL_MIN_BYTES:
        workers = 1
    progress.start(len(items), total)
    try:
        if workers > 1 and items:
            from thinkfix.engine.scan import split  # only a run that may use a pool pays for it

            tasks = split.plan(items, options, workers)
        else:
            tasks = []
        if len(tasks) <= 1:  # one process reads them all, in order
            native.expect(total)
            for item in items:
                result = scan_file(item, options)
                progress.advance(result.path, result.size)
                yield result
            return
        # Largest first, so one big file started last does not leave the other workers idle.
        tasks.sort(key=lambda t: -max(0, getattr(t, "size", 0)))
        merger = split.Merger(options)  # tasks > 1: split was imported above
        native.expect(total // workers)  # each (forked) worker's share
        outs = parallel.run_or_here(
            _task,
            tasks,
            options,
            min(workers, len(tasks)),
            key=split.key,
            result_key=split.result_key,
        )
        for out in outs:
            for result in merger.add(out):
                progress.advance(result.path, result.size)
                yield result
    finally:
        progress.finish()


def scan(
    paths: Iterable[str],
    options: ScanOptions = ScanOptions(),
    *,
    jobs: int | None = None,
    progress: Progress = NULL_PROGRESS,
    stdin: BinaryIO | None = None,
    walk_stats: WalkStats | None = None,
    dask: str | None = None,
) -> Report:
    """Walk `paths`, scan every session file found, and return the merged `Report`.

    `walk_stats`, when given, learns which exclude patterns matched anything. With `dask`
    (a scheduler address), the files are scanned on that Dask cluster instead of local
    processes; the report is the same."""
    paths = list(paths)
    items = list(walk(paths, options.inputs, stdin=stdin, stats=walk_stats))
    results = (
        scan_files(items, options, jobs=jobs, progress=progress)
        if not dask
        else _dask_runner(items, options, dask, progress)
    )
    report = build_report(results, __version__, checks=options.checks)
    return with_display_paths(require_sessions(report, paths, options))


def _dask_runner(
    items: Sequence[Candidate | InputFile], options: ScanOptions, address: str, progress: Progress
) -> Iterator[ScannedFile]:
    """Every item scanned as one task on the Dask cluster at `address`, yielded as they finish;
    the options travel once, scattered to every worker."""
    total = sum(max(0, getattr(i, "size", 0)) for i in items)
    sizes = [max(0, getattr(i, "size", 0)) for i in items]
    progress.start(len(items), total)
    try:
        from thinkfix.engine.parallel import dask  # only `--dask` pays for it

        for _, result in dask.run_tasks(scan_file, items, address, sizes, shared=options):
            if isinstance(result, BaseException):
                raise result
            progress.advance(result.path, result.size)
            yield result
    finally:
        progress.finish()
