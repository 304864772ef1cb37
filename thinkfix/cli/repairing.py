"""What `thinkfix repair` and `thinkfix diff` share: the reading options (the same knobs,
names and config as `scan`), settings into the engine's options, a run with its progress bar,
and a diff report written to a file."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

import click

from thinkfix.cli.options import echo_error, format_option, policy_options
from thinkfix.cli.progress import progress_for, unless_quiet
from thinkfix.cli.settings import (
    CONFIG_OPTIONS,
    resolve_settings,
    setting,
    shared_settings,
    stacked,
)
from thinkfix.engine.commands import repair as repair_run
from thinkfix.engine.controls import visible_name
from thinkfix.engine.health.fixes.model import Fix, parse_fixes
from thinkfix.engine.repair import source
from thinkfix.engine.repair.driver import RunFailed, RunInterrupted
from thinkfix.engine.repair.model import RepairOptions, RepairResult, Stopped, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.settings import values
from thinkfix.formats.repairs import AnthropicMode, ClaudeCodeMode, CodexMode
from thinkfix.reporters.base import DEFAULT_OPTIONS, RenderOptions, plural
from thinkfix.reporters.diff import get_renderer
from thinkfix.reporters.diff.base import DiffFormat, fix_count

if TYPE_CHECKING:  # the audit loads where a report is built (`repair_run.diff_report`)
    from thinkfix.engine.repair import audit

F = TypeVar("F", bound=Callable[..., Any])

#: The exit status of a run stopped by Ctrl-C: the shell's for SIGINT (128 + 2). A number, not
#: `signal.SIGINT`: the signal module (its enum of every signal) is a dry run's start-up else.
INTERRUPTED = 130


#: Each format's placement flag: (flag, its modes, what the modes mean).
_PLACEMENT_MODES: tuple[tuple[str, type[Enum], str], ...] = (
    (
        "--claude-code-mode",
        ClaudeCodeMode,
        (
            "Where Claude Code reasoning goes: resumable (default) keeps it in the manifest only; "
            "archive inserts an unsigned thinking block (the session can no longer be resumed); "
            "annotate adds a top-level `thinkfix` key."
        ),
    ),
    (
        "--codex-mode",
        CodexMode,
        (
            "Where Codex reasoning goes: auto (default) inserts a reasoning item except on "
            "OpenAI-hosted models, which get a sidecar; insert always inserts; sidecar never does."
        ),
    ),
    (
        "--anthropic-mode",
        AnthropicMode,
        (
            "Where reasoning in Anthropic Messages logs goes: auto (default) puts an unsigned "
            "thinking block in responses and the manifest for request histories; manifest: the "
            "manifest only."
        ),
    ),
)


def mode_option(flag: str, modes: type[Enum], words: str) -> Callable[[F], F]:
    return setting(flag, default=None, type=click.Choice([m.value for m in modes]), help=words)


def _fixes(ctx: click.Context, param: click.Parameter, value: str | None) -> frozenset[Fix]:
    try:
        return parse_fixes(value or "")
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


fix_option = click.option(
    "--fix",
    "fix",
    default=None,
    metavar="NAME,...",
    callback=_fixes,
    help="Also fix what these health checks find: lines (salvage glued, split and "
    "NUL-padded records, cut a truncated tail), tool-pairs (the runtime's own "
    "'interrupted' result for a call left without one), signature (drop thinking blocks "
    "the API refuses, the reasoning kept in the manifest), secrets (mask likely "
    "credentials in the stored text). Comma-separated; undone by undo like any repair.",
)


def selection_options(func: F) -> F:
    """What to read and what counts as a leak: the same knobs, names and config as `scan`."""
    return stacked(
        policy_options,
        format_option,
        shared_settings(
            "select",
            "ignore",
            "include",
            "exclude",
            "respect_gitignore",
            "unknown_format",
            "parse_all",
            "disable_models",
            "disable_paths",
            "jobs",
            select="Leak kinds to repair (comma-separated, or 'all'; default: every kind that "
            "changes the text).",
            ignore="Leak kinds to leave alone (comma-separated).",
        ),
        *(mode_option(flag, modes, words) for flag, modes, words in _PLACEMENT_MODES),
        shared_settings(
            "redact",
            "max_record_size",
            redact="secrets (the default): mask likely credentials in the report and diff; "
            "all: keep only lengths and hashes of session text; none: show session text as "
            "stored.",
            max_record_size="Records longer than this (default 64MB; 0: no limit) are "
            "reported as too large and copied through untouched; a compressed file may "
            "decompress to 16 times this at most.",
        ),
        *CONFIG_OPTIONS,
        shared_settings("progress"),
    )(func)


def engine_options(
    mode: WriteMode, kwargs: dict[str, Any], **extra: Any
) -> tuple[RepairOptions, Redaction, bool | None]:
    """The engine's options, the redaction and the progress setting: flags over THINKFIX_*
    over the config file, resolved exactly as `thinkfix scan` resolves them (the settings
    are taken out of `kwargs`)."""
    try:
        settings, _ = resolve_settings(kwargs)
        return (*repair_run.options(settings, mode, **extra), settings.progress)
    except (values.ConfigError, ValueError, TypeError) as exc:
        raise click.UsageError(str(exc)) from exc


def run(
    paths: Sequence[str], options: RepairOptions, flag: bool | None, quiet: bool
) -> RepairResult:
    """The repair with a bar on stderr (--quiet hides it unless --progress asks for it)."""
    verb = "Repairing" if options.mode.writes else "Checking"
    progress = progress_for(sys.stderr, unless_quiet(flag, quiet), verb)
    source.TUNE_ALLOCATOR = True  # this process is thinkfix's own (`source.keep_freed`)
    try:
        return repair_run.run(paths, options, progress)
    except RunInterrupted as stop:
        stopped(stop.stopped, options.mode, quiet, "interrupted")
        sys.exit(INTERRUPTED)
    except RunFailed as stop:
        stopped(stop.stopped, options.mode, quiet, "stopped by the internal error below")
        failure = stop.error
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    except repair_run.ClusterError as exc:  # --dask: no extra installed, no scheduler there
        echo_error(str(exc))
        sys.exit(int(ExitCode.ERROR))
    # The command group's last line of defence says it, as every crash (traceback, exit 2);
    # raised outside the handler, the error keeps its own cause and context.
    raise failure


def stopped(stop: Stopped, mode: WriteMode, quiet: bool, why: str) -> None:
    """A run stopped early: the lines a finished run gives each file it had repaired, then
    what it had replaced and how to take it back, out loud (the files stay replaced)."""
    for f in stop.files:
        if not quiet:
            click.echo(repaired_line(f.path, f.messages, f.fixes, f.output), err=True)
        for line, json_path, reason in f.refused:
            click.echo(refused_line(f.path, line, json_path, reason), err=True)
    for e in stop.errors:
        echo_error(e.message if e.message.startswith(e.path) else f"{e.path}: {e.message}")
    verb = "replaced" if mode is WriteMode.IN_PLACE else "written"
    if stop.written is None:
        what = "files may have been " + verb
    elif stop.written:
        what = f"{plural(stop.written, 'file')} already {verb}"
    else:
        what = f"no file was {verb}"
    undo = f"; undo with: thinkfix undo {stop.manifest_path}" if stop.manifest_path else ""
    click.echo(visible_name(f"{why}: {what}{undo}"), err=True)


def changes_done(messages: int, fixes: int) -> str:
    """`3 messages`, `1 message, 2 fixes` (`--fix`)."""
    return plural(messages, "message") + (f", {fix_count(fixes)}" if fixes else "")


def repaired_line(path: str, messages: int, fixes: int, output: str | None) -> str:
    """What a run says of a file it repaired (and where it wrote it, --out)."""
    where = f" -> {visible_name(output)}" if output is not None else ""
    return f"repaired {visible_name(path)} ({changes_done(messages, fixes)}){where}"


def refused_line(path: str, line: int, json_path: str, reason: str | None) -> str:
    """The warning for a message a run left as it was."""
    return visible_name(f"warning: {path}:{line} {json_path}: not repaired: {reason}")


def write_report(
    path: str,
    report: audit.DiffReport,
    fmt: DiffFormat | None,
    options: RenderOptions = DEFAULT_OPTIONS,
) -> None:
    from thinkfix.io import filestate, safewrite  # --report only (start-up, #26 item 3)

    renderer = get_renderer(fmt or DiffFormat.for_path(path))
    data = renderer.render_bytes(report, options)
    try:
        safewrite.write_output(path, data)
    except filestate.WriteError as exc:
        raise click.ClickException(str(exc)) from exc
