"""`thinkfix repair` and `thinkfix diff`'s library side: resolved settings in, a result out.

The same `Settings` that drive a scan say what counts as a leak here (so a repaired tree
scans clean under the same configuration) and where each format puts the reasoning; the
command layer adds only its own write mode and flags.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from thinkfix._version import __version__
from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import ACTIVE_SECONDS, RepairOptions, RepairResult, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import default_jobs
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.settings import config, values
from thinkfix.engine.settings.redact import redact_diff
from thinkfix.formats.repairs import ApplyOptions

if TYPE_CHECKING:
    from thinkfix.engine.repair import audit


def write_mode(
    *,
    check: bool = False,
    diff: bool = False,
    dry_run: bool = False,
    in_place: bool = False,
    out: str | None = None,
    backup: bool = True,
    dask: str | None = None,
) -> WriteMode:
    """The mode the flags ask for, or `ValueError` for a combination no run can honour."""
    mode = WriteMode.from_flags(check=check, diff=diff, dry_run=dry_run, in_place=in_place, out=out)
    if not backup and mode is not WriteMode.IN_PLACE and mode.writes:
        raise ValueError("--no-backup only applies to --in-place")
    if dask and mode is WriteMode.IN_PLACE:
        raise ValueError(
            "--dask cannot repair --in-place: the workers cannot keep backups or the undo "
            "journal where this machine can reach them; write copies with --out"
        )
    return mode


def active_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """The quiet time before an in-place rewrite: $THINKFIX_ACTIVE_SECONDS, else the default;
    `ValueError` when it is not a number."""
    value = environ.get("THINKFIX_ACTIVE_SECONDS", "")
    try:
        return max(0.0, float(value)) if value.strip() else ACTIVE_SECONDS
    except ValueError:
        raise ValueError(f"$THINKFIX_ACTIVE_SECONDS: not a number: {value!r}") from None


def options(
    settings: values.Settings, mode: WriteMode, **extra: Any
) -> tuple[RepairOptions, Redaction]:
    """The engine's options for `mode` and the redaction of what is shown; `extra` are
    `RepairOptions` fields the command sets itself. Raises `values.ConfigError`."""
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


@dataclass(frozen=True)
class Request:
    """What `thinkfix repair`'s own flags ask for, named as the command names them; the
    reading settings (what counts as a leak, where reasoning goes) come apart, as `Settings`.
    """

    out_dir: str | None = None
    in_place: bool = False
    check: bool = False
    show_diff: bool = False
    dry_run: bool = False
    no_backup: bool = False
    run_dir: str | None = None
    manifest_path: str | None = None
    report_path: str | None = None
    exit_non_zero_on_fix: bool = False
    include_active: bool = False
    follow_links: bool = False
    dask_address: str | None = None
    fix: frozenset[Fix] = frozenset()  # --fix, parsed by the CLI

    @classmethod
    def take(cls, flags: dict[str, Any]) -> Request:
        """The request's flags, taken out of `flags` (what is left there are settings)."""
        return cls(**{f.name: flags.pop(f.name) for f in fields(cls)})

    def mode(self) -> WriteMode:
        """The write mode, or `ValueError` for a combination no run can honour."""
        return write_mode(
            check=self.check,
            diff=self.show_diff,
            dry_run=self.dry_run,
            in_place=self.in_place,
            out=self.out_dir,
            backup=not self.no_backup,
            dask=self.dask_address,
        )

    def option_fields(self, mode: WriteMode) -> dict[str, Any]:
        """The `RepairOptions` fields the flags set (for `options`); `ValueError` when
        $THINKFIX_ACTIVE_SECONDS is not a number."""
        return {
            "out_dir": self.out_dir,
            "backup": not self.no_backup,
            "run_dir": self.run_dir,
            "manifest_path": self.manifest_path,
            "unified_diff": mode is WriteMode.DIFF,
            "keep_texts": self.report_path is not None,  # the diff report quotes them
            "active_seconds": 0.0 if self.include_active else active_seconds(),
            "follow_links": self.follow_links,
            "dask": self.dask_address,
            "fixes": self.fix,
        }

    def exit_code(self, result: RepairResult, ignore_changes: bool | None) -> ExitCode:
        """1 when a leak remains in the sessions after the run (refused, in a file left as it
        was, or every one when nothing is written: ruff's rule after `--fix`), or when files
        were repaired and --exit-non-zero-on-fix asked to know; --exit-zero makes that 0.
        Errors exit 2 all the same."""
        code = result.exit_code(fail_on_change=self.exit_non_zero_on_fix or self.check)
        if code is ExitCode.CLEAN and result.remaining:
            code = ExitCode.FINDINGS
        if ignore_changes and code is ExitCode.FINDINGS:
            return ExitCode.CLEAN
        return code


class ClusterError(RuntimeError):
    """`--dask` without the extra installed, or with no scheduler at the address (exit 2)."""


def run(
    paths: Sequence[str], options: RepairOptions, progress: Progress = NULL_PROGRESS
) -> RepairResult:
    """Repair (or preview) every session file under `paths`; a path the mode cannot use
    raises `ValueError`, a cluster that cannot be used `ClusterError`."""
    if not options.dask:
        return repair_paths(paths, options, tool_version=__version__, progress=progress)
    from thinkfix.engine.parallel.dask import DaskUnavailable

    try:
        return repair_paths(paths, options, tool_version=__version__, progress=progress)
    except DaskUnavailable as exc:
        raise ClusterError(str(exc)) from None


def diff_report(result: RepairResult, redaction: Redaction) -> audit.DiffReport:
    """The audit of what `result` changed (or would), with session text redacted."""
    from thinkfix.engine.repair import audit  # --report, --diff only: 12-16 ms of start-up

    return redact_diff(audit.build(result), redaction)
