"""`thinkfix scan`'s library side, one entry point: resolved settings in, a finished report out.

The command layer parses flags, resolves `Settings` and picks reporters; everything between
(the time window, the baseline read or written, an incremental or a plain walk, redaction
through `ScanOptions`) happens here, so `cli/scan.py` stays a thin shell and a library caller
gets the same run as the command.
"""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, BinaryIO

from thinkfix.engine.inputs.walk import WalkStats
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.report import Report
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.report import with_display_paths
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.settings import config, values

if TYPE_CHECKING:  # annotations only: a scan that is not incremental loads no telemetry
    from typing import NamedTuple

    from thinkfix.engine.telemetry.incremental import Stats
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple


class RunError(ValueError):
    """A setting, baseline, state file or output path the run cannot use (exit 2)."""


# The run's values are NamedTuples, not frozen dataclasses: defining a dataclass costs ~1 ms
# of every start-up, and these are only built and read (#26 item 3).


class ScanRun(NamedTuple):
    """The finished report and what a person should hear about the run besides it."""

    report: Report
    wrote_baseline: tuple[str, int] | None = None  # (path, entries)
    unmatched_excludes: tuple[str, ...] = ()  # exclude patterns that matched nothing
    incremental: "Stats | None" = None  # what an incremental run read


class Window(NamedTuple):
    """`--since` / `--until` as typed, and whether the outputs carry counts by day."""

    since: str | None = None
    until: str | None = None
    by_day: bool = False


_ALL_TIME = Window()


def _dask_unavailable(exc: Exception) -> bool:
    """`--dask` without the extra; only `--dask` imports the module that raises it, so a run
    that did not import it pays nothing to ask (#26 item 3: start-up)."""
    module = sys.modules.get("thinkfix.engine.parallel.dask")
    return module is not None and isinstance(exc, module.DaskUnavailable)


def write(path: str, data: bytes) -> None:
    """Write an output file (a report, a baseline), or say why not as a `RunError`."""
    from thinkfix.io import filestate, safewrite  # only a run that writes a file pays for them

    try:
        safewrite.write_output(path, data)
    except filestate.WriteError as exc:
        raise RunError(f"cannot write {exc}") from None


def _windowed(options: ScanOptions, window: Window) -> ScanOptions:
    """Counts by day only where an output shows them, and the time window: a scan that shows
    neither does not pay for reading each message's time."""
    from thinkfix.engine.scan.trend import parse_bound

    try:
        start = parse_bound(window.since) if window.since else None
        end = parse_bound(window.until, end=True) if window.until else None
    except ValueError as exc:
        raise RunError(f"--since/--until: {exc}") from None
    return options._replace(by_day=window.by_day, since=start, until=end)


def _incremental(
    paths: Sequence[str],
    options: ScanOptions,
    state_file: str | None,
    jobs: int | None,
    progress: Progress,
    stdin: BinaryIO | None,
) -> "tuple[Report, Stats]":
    from thinkfix.engine.telemetry import incremental
    from thinkfix.engine.telemetry.state import StateError

    path = state_file or incremental.default_state_path()
    try:
        report, stats = incremental.scan_incremental(
            paths, options, path, jobs=jobs, progress=progress, stdin=stdin
        )
    except StateError as exc:
        raise RunError(str(exc)) from None
    return with_display_paths(report), stats


def run(
    paths: Sequence[str],
    settings: values.Settings,
    options: ScanOptions | None = None,
    *,
    window: Window = _ALL_TIME,
    incremental: bool = False,
    state_file: str | None = None,
    progress: Progress = NULL_PROGRESS,
    stdin: BinaryIO | None = None,
    dask: str | None = None,
) -> ScanRun:
    """Scan `paths` as `settings` say: the report with the baseline applied (or written).

    `options` are `config.scan_options(settings)` when not given (a caller that checked the
    settings early passes what it built)."""
    if options is None:
        try:
            options = config.scan_options(settings)
        except values.ConfigError as exc:
            raise RunError(str(exc)) from None
    options = _windowed(options, window)
    baseline = None
    if settings.baseline or settings.write_baseline:
        # The baseline module only for a run that reads or writes one (a start-up cost).
        from thinkfix.engine.telemetry import baseline as baselines
    if settings.baseline and not settings.write_baseline:
        try:
            baseline = baselines.load(settings.baseline)
        except baselines.BaselineError as exc:
            raise RunError(str(exc)) from None
    stats: Stats | None = None
    unmatched: tuple[str, ...] = ()
    if options.checks and (state_file or incremental):
        raise RunError(
            "--check reads every file whole, each run: it does not combine with "
            "--incremental or --state-file"
        )
    if state_file or incremental:
        report, stats = _incremental(paths, options, state_file, settings.jobs, progress, stdin)
    else:
        walked = WalkStats()
        try:
            report = scan(
                paths,
                options,
                jobs=settings.jobs,
                progress=progress,
                stdin=stdin,
                walk_stats=walked,
                dask=dask,
            )
        except Exception as exc:
            if _dask_unavailable(exc):  # --dask without the extra installed
                raise RunError(str(exc)) from None
            raise
        unmatched = tuple(walked.unmatched(settings.exclude))
    wrote = None
    if settings.write_baseline:
        root = os.path.dirname(os.path.abspath(settings.write_baseline))
        health = report.health.findings if report.health is not None else ()
        baseline = baselines.from_findings((*report.findings, *health), root)
        write(settings.write_baseline, baselines.dumps(baseline))
        wrote = (settings.write_baseline, len(baseline.entries))
    if baseline is not None:
        report = baselines.apply(report, baseline)
    # Snippets were masked (or replaced, --redact all) by the engine before being cut.
    return ScanRun(report, wrote, unmatched, stats)
