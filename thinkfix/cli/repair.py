"""`thinkfix repair`: repair leaked reasoning into --out DIR or --in-place (or preview it).

Results (a unified diff, a diff report) go to stdout or a file; what happened to
each file, warnings and errors go to stderr.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from thinkfix.cli.options import dask_option, echo_error, exit_zero_option, quiet_option
from thinkfix.cli.repairing import (
    changes_done,
    engine_options,
    fix_option,
    refused_line,
    repaired_line,
    run,
    selection_options,
    write_report,
)
from thinkfix.cli.settings import SettingsCommand
from thinkfix.cli.skipped import echo_skipped
from thinkfix.engine.commands import repair as repair_run
from thinkfix.engine.controls import visible_controls, visible_name
from thinkfix.engine.repair.model import FileResult, FileStatus, RepairResult, WriteMode
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.settings.redact import redact_lines
from thinkfix.formats.repairs import PlacementKind
from thinkfix.reporters.base import plural
from thinkfix.reporters.diff.base import DiffFormat, fix_count


def _describe(f: FileResult, mode: WriteMode) -> str | None:
    applied = sum(1 for c in f.changes if c.applied)
    if f.status is FileStatus.REPAIRED:
        return repaired_line(
            f.path, applied, len(f.fixes), (f.output or "") if mode is WriteMode.OUT else None
        )
    if f.status is FileStatus.WOULD_CHANGE:
        return f"would repair {visible_name(f.path)} ({changes_done(applied, len(f.fixes))})"
    return None  # skipped, failed, in error: its errors say why; clean or copied: nothing


def _print_patch(result: RepairResult, redaction: Redaction) -> None:
    """The unified diff: byte-exact when piped to a file or `patch`; on a terminal, where it
    is read, session text must not drive the terminal."""
    patch = redact_lines("".join(f.unified_diff for f in result.files), redaction)
    sys.stdout.write(visible_controls(patch) if sys.stdout.isatty() else patch)
    sys.stdout.flush()


def _echo_result(result: RepairResult, quiet: bool) -> None:
    for f in result.files:
        line = _describe(f, result.mode)
        if line and not quiet:
            click.echo(line, err=True)
        for c in f.changes:
            if not c.applied:
                click.echo(
                    refused_line(f.path, c.site.line, c.site.json_path, c.placement.reason),
                    err=True,
                )
    for e in result.all_errors:
        where = f"{e.path}:{e.line}" if e.line else e.path
        message = e.message if e.message.startswith(e.path) else f"{where}: {e.message}"
        echo_error(message)
    if quiet:
        return  # the lines above are the warnings and errors; the rest is the summary
    changed = result.changed_files
    messages = sum(1 for f in changed for c in f.changes if c.applied)
    verb = {WriteMode.OUT: "repaired", WriteMode.IN_PLACE: "repaired"}.get(
        result.mode, "would repair"
    )
    refused = sum(1 for c in result.changes if c.placement.kind is PlacementKind.REFUSED)
    fixes = sum(len(f.fixes) for f in changed)
    summary = (
        f"{verb} {plural(messages, 'message')}"
        + (f" and {fix_count(fixes)}" if fixes else "")
        + f" in {plural(len(changed), 'file')}"
        f" ({plural(len(result.files), 'file')} read"
    )
    if refused:  # left as they were: a scan still reports them
        summary += f", {plural(refused, 'message')} refused"
    if result.all_errors:
        summary += f", {plural(len(result.all_errors), 'error')}"
    click.echo(summary + ").", err=True)
    echo_skipped(result.skipped)
    if result.manifest_path:
        click.echo(f"undo with: thinkfix undo {visible_name(result.manifest_path)}", err=True)
    if result.backup_dir:
        click.echo(f"backups in: {visible_name(result.backup_dir)}", err=True)


def _report_spec(spec: str, report_format: str | None) -> tuple[str, DiffFormat | None]:
    """`--report FORMAT=PATH` (scan's form) or `--report PATH`; a prefix that names no
    format is part of the path (`a=b.html`)."""
    name, sep, path = spec.partition("=")
    if sep and path and name in {f.value for f in DiffFormat}:
        if report_format is not None and report_format != name:
            raise click.UsageError(f"--report {spec} and --report-format {report_format} differ")
        return path, DiffFormat(name)
    return spec, DiffFormat(report_format) if report_format else None


@click.command("repair", cls=SettingsCommand)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--out",
    "out_dir",
    default=None,
    metavar="DIR|URL",
    help="Write repaired copies under DIR, mirroring the input tree; inputs untouched. "
    "An fsspec URL (s3://bucket/out, file://…) writes there, never over an existing "
    "object (pip install 'thinkfix[remote]').",
)
@click.option(
    "--in-place",
    is_flag=True,
    help="Replace the inputs (atomically, with a backup and an undo manifest).",
)
@click.option("--check", is_flag=True, help="Exit 1 if anything would change; write nothing.")
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print a unified diff of the changed lines; write nothing.",
)
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option(
    "--no-backup",
    is_flag=True,
    help="With --in-place: keep no backup copies (the manifest alone can undo).",
)
@click.option(
    "--run-dir",
    default=None,
    metavar="DIR",
    help="Where the undo manifest and backups go (default: $XDG_STATE_HOME/thinkfix/runs/<run>).",
)
@click.option(
    "--manifest",
    "manifest_path",
    default=None,
    metavar="FILE",
    help="Write the undo manifest here instead.",
)
@click.option(
    "--report",
    "report_path",
    default=None,
    metavar="FILE",
    help="Also write the diff report: FORMAT=PATH as scan's --report takes it (html, "
    "markdown, json, text), or PATH alone, the format from its name (.html, .md, .json, .txt).",
)
@click.option(
    "--report-format",
    default=None,
    type=click.Choice([f.value for f in DiffFormat]),
    help="The --report format, when the file name does not say.",
)
@fix_option
@click.option(
    "--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when files were repaired (for pre-commit)."
)
@click.option(
    "--follow-links",
    is_flag=True,
    help="Also read, and with --in-place or --out rewrite (or copy), the targets of "
    "symlinks found in a folder that lie outside the paths named (refused by default; "
    "the link itself is always kept).",
)
@click.option(
    "--include-active",
    is_flag=True,
    help="With --in-place: also repair files modified in the last few seconds "
    "($THINKFIX_ACTIVE_SECONDS, default 5), which are left alone by default as "
    "a live session may be writing them. A file held open for writing is "
    "left alone all the same.",
)
@dask_option(
    help="Repair the files on the Dask distributed cluster at ADDRESS (e.g. "
    "tcp://scheduler:8786); its workers must see the same paths or URLs. Not with "
    "--in-place; outputs are written only where nothing is. Needs pip install "
    "'thinkfix[dask]'. The report and the files are the same as a local run's.",
)
@exit_zero_option(
    "leaks remain after the run (refused, or not written) or files were repaired "
    "(--exit-non-zero-on-fix)",
    "ignore_changes",
)
@quiet_option
@selection_options
def repair_command(
    paths: tuple[str, ...],
    report_format: str | None,
    ignore_changes: bool | None,
    quiet: bool,
    **kwargs: Any,
) -> None:
    """Repair leaked reasoning in session files: into --out DIR, or --in-place."""
    request = repair_run.Request.take(kwargs)  # the rest of kwargs are the settings
    try:
        mode = request.mode()
        fields = request.option_fields(mode)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    options, redaction, progress = engine_options(mode, kwargs, **fields)
    result = run(paths, options, progress, quiet)
    if mode is WriteMode.DIFF:
        _print_patch(result, redaction)
    if request.report_path is not None:
        path, fmt = _report_spec(request.report_path, report_format)
        write_report(path, repair_run.diff_report(result, redaction), fmt)
    _echo_result(result, quiet)
    sys.exit(int(request.exit_code(result, ignore_changes)))


commands: list[click.Command] = [repair_command]
