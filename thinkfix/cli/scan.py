"""`thinkfix scan`: find leaked reasoning, report it, and exit 0 (clean), 1 (leaks) or 2 (error).

Results go to stdout (or `-o FILE`, and any `--report FORMAT=PATH`); notes and
the progress bar go to stderr. Settings come from the config file, then
`THINKFIX_*`, then these flags (see `engine.config`); the run itself is
`engine.commands.scan.run`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from thinkfix.cli.clicktext import file_path
from thinkfix.cli.options import (
    Failure,
    dask_option,
    exit_zero_option,
    format_option,
    policy_options,
    quiet_option,
    wants_color,
)
from thinkfix.cli.progress import progress_for, unless_quiet
from thinkfix.cli.settings import (
    SettingOption,
    SettingsCommand,
    config_options,
    resolve_settings,
    setting,
    shared_settings,
)
from thinkfix.cli.skipped import echo_skipped
from thinkfix.engine.commands import scan as scan_run
from thinkfix.engine.controls import visible_name
from thinkfix.engine.scan.options import ALL_KINDS
from thinkfix.engine.settings import config, values
from thinkfix.reporters.base import OutputFormat, RenderOptions
from thinkfix.reporters.registry import get_reporter

_KINDS_HELP = ", ".join(sorted(ALL_KINDS))
#: Outputs that carry counts by day (the others do not pay for reading each message's time).
_BY_DAY = frozenset({OutputFormat.JSON, OutputFormat.OPENMETRICS, OutputFormat.HTML})


def _reporter_format(name: str) -> OutputFormat:
    try:
        return get_reporter(name).format
    except ValueError as exc:
        raise Failure(str(exc)) from None


#: Outputs of one line per finding, with nowhere to put `--statistics`' tables.
_LINES_ONLY = frozenset({OutputFormat.CONCISE, OutputFormat.GITHUB})


def _report_specs(specs: Sequence[str]) -> list[tuple[OutputFormat, str]]:
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise Failure(f"--report takes FORMAT=PATH, not {spec!r}")
        out.append((_reporter_format(name.strip()), path))
    return out


def _output_format(settings: values.Settings) -> OutputFormat:
    # Inside GitHub Actions, annotations on the diff are what a reviewer sees.
    github = os.environ.get("GITHUB_ACTIONS") == "true"
    return _reporter_format(settings.output_format or ("github" if github else "text"))


def _notes(run: scan_run.ScanRun, settings: values.Settings, quiet: bool) -> None:
    """What a person should know about the reading: on stderr, one line each."""
    if run.incremental is not None and not quiet:
        i = run.incremental
        click.echo(
            f"thinkfix: incremental: {i.full} read whole, {i.appended} appended, "
            f"{i.unchanged} unchanged; {i.bytes_read:,} bytes of sessions read",
            err=True,
        )
    if run.incremental is not None and run.incremental.note is not None:
        click.echo(f"thinkfix: note: {run.incremental.note}", err=True)
    for pattern in run.unmatched_excludes:
        # A typo, or quotes a shell or CI runner kept (`'archive/**'`): say so.
        click.echo(
            f"thinkfix: warning: exclude pattern {pattern!r} matched nothing "
            f"(patterns are relative to {settings.pattern_anchor})",
            err=True,
        )


def _closing_notes(run: scan_run.ScanRun) -> None:
    """What a person should know that is not a result: skipped files, a baseline written."""
    echo_skipped(run.report.skipped)
    if run.wrote_baseline is not None:
        path, count = run.wrote_baseline
        entries = "entry" if count == 1 else "entries"
        click.echo(f"thinkfix: wrote {count} baseline {entries} to {visible_name(path)}", err=True)


def _with_discovered(paths: tuple[str, ...], discover: bool) -> tuple[str, ...]:
    """The named paths plus, with --discover, the session folders found here."""
    if discover:
        from thinkfix.engine.inputs.discover import discover as find

        found = find()
        if not found and not paths:
            raise Failure("--discover found no session folders (see `thinkfix where --all`)")
        paths = paths + tuple(p for p in found if p not in paths)
    if not paths:
        raise Failure("name at least one PATH, or use --discover")
    return paths


def _terminal_width() -> int:
    import shutil  # only for a terminal; it costs a pipe's run ~2 ms of start-up

    return shutil.get_terminal_size().columns


def _render(
    run: scan_run.ScanRun,
    settings: values.Settings,
    output_format: OutputFormat,
    extra_reports: list[tuple[OutputFormat, str]],
    show_baselined: bool,
    quiet: bool,
) -> None:
    to_terminal = settings.output is None and sys.stdout.isatty()
    main = RenderOptions(
        statistics=settings.statistics,
        show_baselined=show_baselined,
        color=wants_color(settings.color, sys.stdout)
        if settings.output is None
        else bool(settings.color),
        width=_terminal_width() if to_terminal else None,
        summary=not quiet,
    )
    data = get_reporter(output_format).render_bytes(run.report, main)
    for fmt, path in extra_reports:
        scan_run.write(
            path,
            get_reporter(fmt).render_bytes(
                run.report, RenderOptions(statistics=settings.statistics)
            ),
        )
    if settings.output is not None:
        scan_run.write(settings.output, data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


@click.command("scan", cls=SettingsCommand)
@click.argument("paths", nargs=-1, required=False, metavar="PATH...")
@click.option(
    "--discover",
    is_flag=True,
    help="Also scan the session folders of every runtime found on this machine "
    "(see `thinkfix where`).",
)
@click.option(
    "--incremental",
    is_flag=True,
    help="Read only what changed since the last incremental run (state in "
    "$XDG_STATE_HOME/thinkfix/scan-state.json unless --state says where).",
)
@click.option(
    "--state",
    "state_file",
    default=None,
    metavar="FILE",
    type=file_path(),
    help="The incremental state file (implies --incremental).",
)
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Only messages written on or after DATE (YYYY-MM-DD, UTC, or an ISO "
    "date-time); a message without a time of its own takes its file's.",
)
@click.option(
    "--until",
    default=None,
    metavar="DATE",
    help="Only messages written up to the end of DATE (or before an ISO date-time).",
)
@format_option
@setting(
    "--output-format",
    default=None,
    type=click.Choice([f.value for f in OutputFormat]),
    help="How to show results (default: text; github inside GitHub Actions).",
)
@setting(
    "-o", "--output", default=None, metavar="FILE", help="Write the results here instead of stdout."
)
@setting(
    "--report",
    multiple=True,
    metavar="FORMAT=PATH",
    help="Also write the results as FORMAT to PATH (repeatable).",
)
@setting(
    "--statistics/--no-statistics",
    default=None,
    help="Add counts per leak kind, format, model and file.",
)
@exit_zero_option("leaks are found", cls=SettingOption)
@shared_settings(
    "select",
    "ignore",
    "jobs",
    "include",
    "exclude",
    "respect_gitignore",
    "unknown_format",
    select=f"Leak kinds to report (comma-separated, or 'all'; default: every kind that "
    f"changes the text). Kinds: {_KINDS_HELP}.",
    ignore="Leak kinds not to report.",
)
@setting(
    "--check",
    multiple=True,
    metavar="CHECKS",
    help="Also run session health checks (comma-separated, or 'all'): signature, "
    "tool-pairs, lines, secrets, size. Report only; each is a finding in every output "
    "format, the baseline and the exit code (docs/health.md).",
)
@setting(
    "--allow-no-sessions/--no-allow-no-sessions",
    default=None,
    help="Exit 0 when the paths hold no session file (a pre-commit hook on a commit "
    "that touches none); by default a run that read nothing exits 2.",
)
@shared_settings("parse_all")
@setting(
    "--baseline",
    default=None,
    metavar="FILE",
    help="Leaks recorded in FILE do not fail the run; stale entries are reported.",
)
@setting(
    "--write-baseline",
    default=None,
    metavar="FILE",
    help="Record every leak found in FILE (then they do not fail this run).",
)
@config_options
@setting("--color/--no-color", default=None, help="Color the text output.")
@shared_settings(
    "progress",
    "redact",
    redact="secrets (the default): mask likely credentials in leaked text; all: show "
    "only lengths and hashes; none: show text as stored.",
)
@setting(
    "--max-findings",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Findings reported per message at most (default 1000; 0: no cap); past it "
    "the rest of the message is not examined and an error says so.",
)
@shared_settings(
    "max_record_size",
    "disable_models",
    "disable_paths",
    max_record_size="Records longer than this (default 64MB; 0: no limit) are reported as "
    "too large and not parsed.",
)
@click.option(
    "--show-settings",
    is_flag=True,
    help="Print the resolved settings and where each came from (default, config "
    "file, $THINKFIX_*, flag), then exit.",
)
@click.option(
    "--follow-links",
    is_flag=True,
    help="Also read the targets of symlinks found in a folder that lie outside the "
    "paths named (by default each is an error: a checkout's link must not put a file "
    "of yours into the report).",
)
@click.option(
    "--show-baselined",
    is_flag=True,
    help="List findings the baseline covers in text, concise and github output "
    "(machine formats always carry them, marked).",
)
@dask_option(
    help="Scan the files on the Dask distributed cluster at ADDRESS (e.g. "
    "tcp://scheduler:8786); its workers must see the same paths. Needs "
    "pip install 'thinkfix[dask]'. The report is the same as a local run's.",
)
@quiet_option
@policy_options
def scan_command(
    paths: tuple[str, ...],
    discover: bool,
    incremental: bool,
    state_file: str | None,
    since: str | None,
    until: str | None,
    quiet: bool,
    show_baselined: bool,
    show_settings: bool,
    dask_address: str | None,
    follow_links: bool,
    **kwargs: Any,
) -> None:
    """Find reasoning that leaked into the visible text of stored agent sessions.

    PATH may be a session file, a folder (walked), or - for stdin. Exits 0 when
    clean (or every leak is in the baseline), 1 when leaks are found, 2 on an
    error: a file that cannot be read is never reported as clean.
    """
    if not show_settings:  # the settings do not depend on the paths
        paths = _with_discovered(paths, discover)
    try:
        settings, sources = resolve_settings(kwargs)
        if show_settings:
            click.echo(config.describe(settings, sources), nl=False)
            return
        options = config.scan_options(settings)
    except (values.ConfigError, ValueError, TypeError) as exc:
        raise Failure(str(exc)) from None
    if follow_links:  # a flag only: a checkout's config may not turn the refusal off
        options = options._replace(inputs=options.inputs._replace(follow_links=True))
    output_format = _output_format(settings)
    if settings.statistics and output_format in _LINES_ONLY:
        raise Failure(  # honoured or refused, never ignored (#27 item 7)
            f"--statistics adds count tables to the text and markdown reports; the "
            f"{output_format.value} output is one line per finding and has none (the json "
            "report always holds every count)"
        )
    extra_reports = _report_specs(settings.report)
    window = scan_run.Window(
        since, until, by_day=bool({output_format, *(fmt for fmt, _ in extra_reports)} & _BY_DAY)
    )
    try:
        run = scan_run.run(
            paths,
            settings,
            options,
            window=window,
            incremental=incremental,
            state_file=state_file,
            progress=progress_for(sys.stderr, unless_quiet(settings.progress, quiet)),
            dask=dask_address,
            stdin=sys.stdin.buffer if "-" in paths else None,
        )
        _notes(run, settings, quiet)
        _render(run, settings, output_format, extra_reports, show_baselined, quiet)
    except scan_run.RunError as exc:
        raise Failure(str(exc)) from None
    if not quiet:
        _closing_notes(run)
    sys.exit(int(run.report.exit_code(exit_zero=settings.exit_zero)))


commands: list[click.Command] = [scan_command]
