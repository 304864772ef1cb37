"""`thinkfix repair`, `thinkfix undo` and `thinkfix diff`: parse flags, call the engine, print.

Results (a unified diff, a diff report) go to stdout or a file; what happened to
each file, warnings and errors go to stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from thinkfix._version import __version__
from thinkfix.cli.options import (
    RedactCommand,
    echo_error,
    exit_zero_option,
    policy_options,
    pop_policy,
    quiet_option,
)
from thinkfix.cli.progress import progress_for
from thinkfix.engine import audit, config, fsio
from thinkfix.engine.manifest import ManifestError, UndoStatus, undo
from thinkfix.engine.redact import Redaction, redact_diff, redact_lines
from thinkfix.engine.repair import (
    ACTIVE_SECONDS,
    FileResult,
    FileStatus,
    RepairOptions,
    RepairResult,
    WriteMode,
    repair_paths,
)
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan import default_jobs
from thinkfix.formats import registry
from thinkfix.formats.base import (
    AnthropicMode,
    ApplyOptions,
    ClaudeCodeMode,
    CodexMode,
    PlacementKind,
)
from thinkfix.reporters.base import DEFAULT_OPTIONS, RenderOptions, plural
from thinkfix.reporters.controls import visible_controls
from thinkfix.reporters.diff import DiffFormat, get_renderer

F = TypeVar("F", bound=Callable[..., Any])

#: Options whose value may be left out (`--redact` means `--redact=secrets`).




def _selection_options(func: F) -> F:
    """What to read and what counts as a leak: the same knobs, names and config as `scan`."""
    options = [
        click.option("--format", "format", default=None, metavar="NAME",
                     type=click.Choice(["auto", *registry.names()]),
                     help="Read every file as this format instead of detecting it."),
        click.option("--select", multiple=True, metavar="KINDS",
                     help="Leak kinds to repair (comma-separated, or 'all'; default: every "
                          "kind that changes the text)."),
        click.option("--ignore", multiple=True, metavar="KINDS",
                     help="Leak kinds to leave alone (comma-separated)."),
        click.option("--include", multiple=True, metavar="GLOB",
                     help="File names to read in walked folders (default: *.jsonl, *.json)."),
        click.option("--exclude", multiple=True, metavar="GLOB",
                     help="Paths to leave out (gitignore-style; relative to the config file's "
                          "folder, else the working folder)."),
        click.option("--respect-gitignore/--no-respect-gitignore", default=None,
                     help="Skip what .gitignore / .thinkfixignore in walked folders ignore "
                          "(default: on)."),
        click.option("--unknown-format", type=click.Choice(["auto", "error", "skip"]),
                     default=None, help="A file no format claims: auto (default) is an error "
                                        "when named, a skip when found in a folder."),
        click.option("--parse-all/--no-parse-all", default=None,
                     help="Parse every line, so every bad line is reported (slower)."),
        click.option("--disable-model", "disable_models", multiple=True, metavar="GLOB",
                     help="Models whose messages are left alone."),
        click.option("--disable-path", "disable_paths", multiple=True, metavar="GLOB",
                     help="Files left alone."),
        click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, metavar="N",
                     help="Worker processes (default, or 0: all cores)."),
        click.option("--claude-code-mode", default=None,
                     type=click.Choice([m.value for m in ClaudeCodeMode]),
                     help="Where Claude Code reasoning goes: resumable (default) keeps it in "
                          "the manifest only; archive inserts an unsigned thinking block (the "
                          "session can no longer be resumed); annotate adds a top-level "
                          "`thinkfix` key."),
        click.option("--codex-mode", default=None,
                     type=click.Choice([m.value for m in CodexMode]),
                     help="Where Codex reasoning goes: auto (default) inserts a reasoning item "
                          "except on OpenAI-hosted models, which get a sidecar; insert always "
                          "inserts; sidecar never does."),
        click.option("--anthropic-mode", default=None,
                     type=click.Choice([m.value for m in AnthropicMode]),
                     help="Where reasoning in Anthropic Messages logs goes: auto (default) "
                          "puts an unsigned thinking block in responses and the manifest for "
                          "request histories; manifest: the manifest only."),
        click.option("--redact", default=None, type=click.Choice([r.value for r in Redaction]),
                     help="secrets (the default): mask likely credentials in the report and "
                          "diff; all: keep only lengths and hashes of session text; none: show "
                          "session text as stored."),
        click.option("--max-record-size", default=None, metavar="SIZE",
                     help="Records longer than this (default 64MB; 0: no limit) are reported "
                          "as too large and copied through untouched; a compressed file may "
                          "decompress to 16 times this at most."),
        click.option("--config", "config_file", default=None, metavar="FILE",
                     help="Read settings from FILE instead of looking for "
                          "pyproject.toml/thinkfix.toml."),
        click.option("--isolated", is_flag=True, help="Ignore configuration files."),
        click.option("--progress/--no-progress", default=None,
                     help="Show a progress bar on stderr (default: on a terminal, outside CI)."),
    ]
    for option in reversed(options):
        func = option(func)
    return policy_options(func)


def _split(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


_SETTING_FLAGS = ("format", "select", "ignore", "include", "exclude", "respect_gitignore",
                  "unknown_format", "parse_all", "disable_models", "disable_paths", "jobs",
                  "redact", "claude_code_mode", "codex_mode", "anthropic_mode",
                  "max_record_size")
_LIST_FLAGS = ("select", "ignore", "include", "exclude", "disable_models", "disable_paths")


def _options(mode: WriteMode, kwargs: dict[str, Any],
             **extra: Any) -> tuple[RepairOptions, Redaction]:
    """The engine's options and the redaction: flags over THINKFIX_* over the config file,
    resolved exactly as `thinkfix scan` resolves them (the flags are removed from `kwargs`)."""
    flags = {name: kwargs.pop(name) for name in _SETTING_FLAGS}
    for name in _LIST_FLAGS:
        flags[name] = _split(flags[name] or ())
    if flags["jobs"] == 0:
        flags["jobs"] = None
    config_file, isolated = kwargs.pop("config_file"), kwargs.pop("isolated")
    try:
        settings = config.resolve(flags, config=config_file, use_config=not isolated)
        policy = pop_policy(kwargs, config.policy(settings))
        scan_options = config.scan_options(settings, policy)
        redaction = config.redaction(settings)
    except (config.ConfigError, ValueError, TypeError) as exc:
        raise click.UsageError(str(exc)) from exc
    apply = ApplyOptions(claude_code_mode=settings.claude_code_mode,
                         codex_mode=settings.codex_mode, anthropic_mode=settings.anthropic_mode)
    return RepairOptions(mode=mode, scan=scan_options, apply=apply,
                         jobs=settings.jobs or default_jobs(), **extra), redaction


def _active_seconds() -> float:
    """The quiet time before an in-place rewrite: $THINKFIX_ACTIVE_SECONDS, else the default."""
    value = os.environ.get("THINKFIX_ACTIVE_SECONDS", "")
    try:
        return max(0.0, float(value)) if value.strip() else ACTIVE_SECONDS
    except ValueError as exc:
        raise click.UsageError(f"$THINKFIX_ACTIVE_SECONDS: not a number: {value!r}") from exc


def _color(stream: Any) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ


def _progress(flag: bool | None, quiet: bool) -> bool | None:
    """--quiet hides the progress bar unless --progress asks for it."""
    return False if quiet and flag is None else flag


def _run(paths: Sequence[str], options: RepairOptions, show_progress: bool | None) -> RepairResult:
    progress = progress_for(sys.stderr, show_progress, "Repairing" if options.mode.writes else "Checking")
    try:
        return repair_paths(paths, options, tool_version=__version__, progress=progress)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


def _describe(f: FileResult, mode: WriteMode) -> str | None:
    applied = sum(1 for c in f.changes if c.applied)
    what = plural(applied, "message")
    if f.status is FileStatus.REPAIRED:
        where = f" -> {f.output}" if mode is WriteMode.OUT else ""
        return f"repaired {f.path} ({what}){where}"
    if f.status is FileStatus.WOULD_CHANGE:
        return f"would repair {f.path} ({what})"
    if f.status in (FileStatus.SKIPPED, FileStatus.FAILED, FileStatus.ERROR):
        return None  # its errors say why
    return None


def _echo_result(result: RepairResult, quiet: bool) -> None:
    for f in result.files:
        line = _describe(f, result.mode)
        if line and not quiet:
            click.echo(line, err=True)
        for c in f.changes:
            if not c.applied:
                click.echo(f"warning: {f.path}:{c.site.line} {c.site.json_path}: not repaired: "
                           f"{c.placement.reason}", err=True)
    for e in result.all_errors:
        where = f"{e.path}:{e.line}" if e.line else e.path
        message = e.message if e.message.startswith(e.path) else f"{where}: {e.message}"
        echo_error(message)
    if quiet:
        return  # the lines above are the warnings and errors; the rest is the summary
    changed = result.changed_files
    messages = sum(1 for f in changed for c in f.changes if c.applied)
    verb = {WriteMode.OUT: "repaired", WriteMode.IN_PLACE: "repaired"}.get(result.mode,
                                                                          "would repair")
    refused = sum(1 for c in result.changes if c.placement.kind is PlacementKind.REFUSED)
    summary = (f"{verb} {plural(messages, 'message')} in {plural(len(changed), 'file')}"
               f" ({plural(len(result.files), 'file')} read")
    if refused:  # left as they were: a scan still reports them
        summary += f", {plural(refused, 'message')} refused"
    if result.all_errors:
        summary += f", {plural(len(result.all_errors), 'error')}"
    click.echo(summary + ").", err=True)
    if result.manifest_path:
        click.echo(f"undo with: thinkfix undo {result.manifest_path}", err=True)
    if result.backup_dir:
        click.echo(f"backups in: {result.backup_dir}", err=True)


def _write_report(path: str, report: audit.DiffReport, fmt: DiffFormat | None,
                  options: RenderOptions = DEFAULT_OPTIONS) -> None:
    renderer = get_renderer(fmt or DiffFormat.for_path(path))
    data = renderer.render_bytes(report, options)
    try:
        fsio.write_output(path, data)
    except fsio.WriteError as exc:
        raise click.ClickException(str(exc)) from exc


@click.command("repair", cls=RedactCommand)
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out_dir", default=None, metavar="DIR",
              help="Write repaired copies under DIR, mirroring the input tree; inputs untouched.")
@click.option("--in-place", is_flag=True,
              help="Replace the inputs (atomically, with a backup and an undo manifest).")
@click.option("--check", is_flag=True, help="Exit 1 if anything would change; write nothing.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Print a unified diff of the changed lines; write nothing.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--no-backup", is_flag=True,
              help="With --in-place: keep no backup copies (the manifest alone can undo).")
@click.option("--run-dir", default=None, metavar="DIR",
              help="Where the undo manifest and backups go (default: "
                   "$XDG_STATE_HOME/thinkfix/runs/<run>).")
@click.option("--manifest", "manifest_path", default=None, metavar="FILE",
              help="Write the undo manifest here instead.")
@click.option("--report", "report_path", default=None, metavar="FILE",
              help="Also write the diff report (format from the name: .html, .md, .json, .txt).")
@click.option("--report-format", default=None, type=click.Choice([f.value for f in DiffFormat]),
              help="The --report format, when the file name does not say.")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="Exit 1 when files were repaired (for pre-commit).")
@click.option("--follow-links", is_flag=True,
              help="With --in-place: also rewrite the targets of symlinks that lie outside "
                   "the paths named (refused by default; the link itself is always kept).")
@click.option("--include-active", is_flag=True,
              help="With --in-place: also repair files modified in the last few seconds "
                   "($THINKFIX_ACTIVE_SECONDS, default 5), which are left alone by default as "
                   "a live session may be writing them. A file held open for writing is "
                   "left alone all the same.")
@exit_zero_option("files were repaired or would change (--check, --exit-non-zero-on-fix)")
@quiet_option
@_selection_options
def repair_command(paths: tuple[str, ...], out_dir: str | None, in_place: bool, check: bool,
                   show_diff: bool, dry_run: bool, no_backup: bool, run_dir: str | None,
                   manifest_path: str | None, report_path: str | None,
                   report_format: str | None, exit_non_zero_on_fix: bool, include_active: bool,
                   follow_links: bool,
                   exit_zero: bool | None, quiet: bool, **kwargs: Any) -> None:
    """Repair leaked reasoning in session files: into --out DIR, or --in-place."""
    try:
        mode = WriteMode.from_flags(check=check, diff=show_diff, dry_run=dry_run,
                                    in_place=in_place, out=out_dir)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    if no_backup and mode is not WriteMode.IN_PLACE and mode.writes:
        raise click.UsageError("--no-backup only applies to --in-place")
    options, redaction = _options(mode, kwargs, out_dir=out_dir, backup=not no_backup,
                                  run_dir=run_dir, manifest_path=manifest_path,
                                  unified_diff=mode is WriteMode.DIFF,
                                  keep_texts=report_path is not None,
                                  active_seconds=0.0 if include_active else _active_seconds(),
                                  follow_links=follow_links)
    result = _run(paths, options, _progress(kwargs.pop("progress"), quiet))
    if mode is WriteMode.DIFF:
        patch = redact_lines("".join(f.unified_diff for f in result.files), redaction)
        # A patch piped to a file or `patch` stays byte-exact; on a terminal it is read, and
        # session text must not drive the terminal.
        sys.stdout.write(visible_controls(patch) if sys.stdout.isatty() else patch)
        sys.stdout.flush()
    if report_path is not None:
        report = redact_diff(audit.build(result), redaction)
        _write_report(report_path, report, DiffFormat(report_format) if report_format else None)
    _echo_result(result, quiet)
    code = result.exit_code(fail_on_change=exit_non_zero_on_fix or check)
    if exit_zero and code is ExitCode.FINDINGS:
        code = ExitCode.CLEAN  # errors still exit 2
    sys.exit(int(code))


@click.command("undo")
@click.argument("manifest", type=click.Path())
@click.option("--dry-run", is_flag=True, help="Check every file and say what would be restored.")
@click.option("--skip-changed", is_flag=True,
              help="Restore the files that are unchanged since the repair and leave the others "
                   "(by default one changed file stops the whole undo).")
@quiet_option
def undo_command(manifest: str, dry_run: bool, skip_changed: bool, quiet: bool) -> None:
    """Restore every file a repair wrote, byte for byte, from its MANIFEST."""
    try:
        result = undo(manifest, dry_run=dry_run, skip_changed=skip_changed)
    except ManifestError as exc:
        echo_error(str(exc))
        sys.exit(int(ExitCode.ERROR))
    except Exception as exc:  # noqa: BLE001 - never a traceback for a manifest we cannot follow
        echo_error(f"{manifest}: cannot undo: {type(exc).__name__}: {exc}")
        sys.exit(int(ExitCode.ERROR))
    words = {UndoStatus.RESTORED: "restored", UndoStatus.REMOVED: "removed",
             UndoStatus.ALREADY: "already as before the repair",
             UndoStatus.WOULD_RESTORE: "would restore"}
    if result.refused:
        changed = [f for f in result.files if f.status in (UndoStatus.CHANGED, UndoStatus.FAILED)]
        echo_error(f"refusing to undo: {plural(len(changed), 'file')} changed since the "
                   "repair; nothing was restored (--skip-changed restores the others):")
        for f in changed:
            click.echo(f"  {f.message}", err=True)
        sys.exit(int(ExitCode.ERROR))
    for f in result.files:
        if f.status in words:
            if not quiet:
                click.echo(f"{words[f.status]} {f.path}", err=True)
        else:
            echo_error(f.message)
    sys.exit(int(result.exit_code()))


@click.command("diff", cls=RedactCommand)
@click.argument("paths", nargs=-1, required=True)
@click.option("--output-format", "output_format", default=DiffFormat.TEXT.value,
              type=click.Choice([f.value for f in DiffFormat]), show_default=True,
              help="text (terminal), markdown, html (one self-contained file) or json.")
@click.option("-o", "--output", "output", default=None, metavar="FILE",
              help="Write the report to FILE instead of stdout.")
@click.option("--max-cards", default=None, type=click.IntRange(min=0), metavar="N",
              help="html: show at most N message cards (default 500); the page counts the "
                   "rest, and the json report lists them all.")
@exit_zero_option("something would change")
@quiet_option
@_selection_options
def diff_command(paths: tuple[str, ...], output_format: str, output: str | None,
                 max_cards: int | None, exit_zero: bool | None, quiet: bool,
                 **kwargs: Any) -> None:
    """Show, for an auditor, every message a repair would change: before, after, reasoning."""
    options, redaction = _options(WriteMode.DRY_RUN, kwargs)
    result = _run(paths, options, _progress(kwargs.pop("progress"), quiet))
    report = redact_diff(audit.build(result), redaction)
    fmt = DiffFormat(output_format)
    if output is not None:
        _write_report(output, report, fmt, RenderOptions(max_findings=max_cards))
        if not quiet:
            click.echo(f"wrote {output}", err=True)
    else:
        renderer = get_renderer(fmt)
        color = fmt is DiffFormat.TEXT and _color(sys.stdout)
        sys.stdout.buffer.write(renderer.render_bytes(
            report, RenderOptions(color=color, max_findings=max_cards)))
        sys.stdout.flush()
    for e in report.errors:
        echo_error(f"{e.path}{f':{e.line}' if e.line else ''}: {e.message}")
    sys.exit(int(report.exit_code(exit_zero=bool(exit_zero))))


commands: list[click.Command] = [repair_command, undo_command, diff_command]
