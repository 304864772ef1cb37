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
from thinkfix.engine.inputs.files import DISABLED, Candidate, InputFile, WalkStats, resolve, walk
from thinkfix.engine.parallel import pool as parallel
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.report import InputError, Report
from thinkfix.engine.scan.one_file import ScannedFile, _FileScan
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.report import build_report, require_sessions, with_display_paths
from thinkfix.formats.base import set_record_limit
from thinkfix.io.errors import ErrorKind


def scan_file(item: Candidate | InputFile, options: ScanOptions = ScanOptions()) -> ScannedFile:
    """Detect (if needed) and scan one file. Never raises for a bad file: errors are values,
    and an unexpected exception (a bug met on this file) is an error for this file alone."""
    set_record_limit(options.max_record_size)
    try:
        return _scan_file(item, options)
    except Exception as exc:  # noqa: BLE001 - one odd file must not end a run over thousands
        path = getattr(item, "path", "?")
        return ScannedFile(
            path,
            None,
            max(0, getattr(item, "size", 0) or 0),
            errors=(
                InputError(
                    path,
                    None,
                    ErrorKind.INTERNAL,
                    f"cannot scan: internal error ({type(exc).__name__}: {exc})",
                ),
            ),
        )


def _scan_file(item: Candidate | InputFile, options: ScanOptions) -> ScannedFile:
    file = resolve(item, options.inputs)
    if file.error is not None:
        return ScannedFile(file.path, file.format, file.size, errors=(file.error,))
    if file.skipped is not None:
        return ScannedFile(file.path, file.format, file.size, skipped=file.skipped)
    if options.path_disabled(file.path):
        return ScannedFile(file.path, file.format, file.size, skipped=DISABLED)
    scan = _FileScan(file, file.session_format(), options)
    try:
        with file.open() as fp:
            scan.run(fp)
    except (OSError, EOFError, ValueError) as exc:
        scan.errors.append(
            InputError(
                file.path,
                None,
                ErrorKind.UNREADABLE,
                f"read failed after {scan.records} records: {exc}",
            )
        )
    except Exception as exc:  # noqa: BLE001 - one odd file must not end a run over thousands
        scan.errors.append(
            InputError(
                file.path, None, ErrorKind.UNREADABLE, f"read failed: {type(exc).__name__}: {exc}"
            )
        )
    return scan.result()


#: Below this many bytes of input, the default `jobs` scans in-process.
POOL_MIN_BYTES = 8 << 20


def default_jobs() -> int:
    """All cores this process may use."""
    return parallel.default_jobs()


def _task(options: ScanOptions, task: Any) -> Any:
    """A worker's unit: a whole file, or a piece of a large one (engine/scan/split.py)."""
    split = _split()
    if isinstance(task, split.Piece):
        return split.scan_piece_safely(task, options)
    return scan_file(task, options)


def _split() -> Any:
    """engine.split, found at run time (it builds on this module, not the reverse)."""
    import importlib

    return importlib.import_module("thinkfix.engine.scan.split")


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
        split = _split() if workers > 1 and items else None
        tasks = split.plan(items, options, workers) if split is not None else []
        if split is None or len(tasks) <= 1:  # one process reads them all, in order
            for item in items:
                result = scan_file(item, options)
                progress.advance(result.path, result.size)
                yield result
            return
        # Largest first, so one big file started last does not leave the other workers idle.
        tasks.sort(key=lambda t: -max(0, getattr(t, "size", 0)))
        merger = split.Merger(options)
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
    report = build_report(results, __version__)
    return with_display_paths(require_sessions(report, paths, options))


def _dask_runner(
    items: Sequence[Candidate | InputFile], options: ScanOptions, address: str, progress: Progress
) -> Iterator[ScannedFile]:
    """engine.distributed's runner, found at run time (it imports this module, not the
    reverse, so the layers stay acyclic)."""
    import importlib

    runner = importlib.import_module("thinkfix.engine.parallel.dask").scan_files_dask
    results: Iterator[ScannedFile] = runner(items, options, address, progress)
    return results
