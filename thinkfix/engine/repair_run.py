"""`thinkfix repair` and `thinkfix diff`'s library side: resolved settings in, a result out.

The same `Settings` that drive a scan say what counts as a leak here (so a repaired tree
scans clean under the same configuration) and where each format puts the reasoning; the
command layer adds only its own write mode and flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thinkfix._version import __version__
from thinkfix.engine import audit, config
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.redact import Redaction, redact_diff
from thinkfix.engine.repair import RepairOptions, RepairResult, WriteMode, repair_paths
from thinkfix.engine.scan import default_jobs
from thinkfix.formats.base import ApplyOptions


def options(
    settings: config.Settings, mode: WriteMode, **extra: Any
) -> tuple[RepairOptions, Redaction]:
    """The engine's options for `mode` and the redaction of what is shown; `extra` are
    `RepairOptions` fields the command sets itself. Raises `config.ConfigError`."""
    apply = ApplyOptions(
        claude_code_mode=settings.claude_code_mode,
        codex_mode=settings.codex_mode,
        anthropic_mode=settings.anthropic_mode,
    )
    repair = RepairOptions(
        mode=mode,
        scan=config.scan_options(settings),
        apply=apply,
        jobs=settings.jobs or default_jobs(),
        **extra,
    )
    return repair, config.redaction(settings)


class ClusterError(RuntimeError):
    """`--dask` without the extra installed, or with no scheduler at the address (exit 2)."""


def run(
    paths: Sequence[str], options: RepairOptions, progress: Progress = NULL_PROGRESS
) -> RepairResult:
    """Repair (or preview) every session file under `paths`; a path the mode cannot use
    raises `ValueError`, a cluster that cannot be used `ClusterError`."""
    if not options.dask:
        return repair_paths(paths, options, tool_version=__version__, progress=progress)
    from thinkfix.engine.distributed import DaskUnavailable

    try:
        return repair_paths(paths, options, tool_version=__version__, progress=progress)
    except DaskUnavailable as exc:
        raise ClusterError(str(exc)) from None


def diff_report(result: RepairResult, redaction: Redaction) -> audit.DiffReport:
    """The audit of what `result` changed (or would), with session text redacted."""
    return redact_diff(audit.build(result), redaction)
