"""`thinkfix scan`: find leaked reasoning, report it, and exit 0 (clean), 1 (leaks) or 2 (error).

Results go to stdout (or `-o FILE`, and any `--report FORMAT=PATH`); notes and
the progress bar go to stderr. Settings come from the config file, then
`THINKFIX_*`, then these flags (see `engine.config`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from collections.abc import Sequence
from typing import IO, Any, BinaryIO

import click

from thinkfix.cli.options import (
    POLICY_KEYS,
    RedactCommand,
    echo_error,
    policy_options,
    pop_policy,
    quiet_option,
)
from thinkfix.cli.progress import progress_for
from thinkfix.engine import baseline as baselines
from thinkfix.engine import config, fsio
from thinkfix.engine.distributed import DaskUnavailable
from thinkfix.engine.inputs import WalkStats
from thinkfix.engine.paths import with_display_paths
from thinkfix.engine.progress import Progress
from thinkfix.engine.redact import Redaction
from thinkfix.engine.report import ExitCode, Report
from thinkfix.engine.scan import ALL_KINDS, ScanOptions, name_some, scan
from thinkfix.formats import registry
from thinkfix.reporters import OutputFormat, RenderOptions, get_reporter
from thinkfix.reporters.base import plural

#: Options whose value may be left out (`--redact` means `--redact=secrets`).
_KINDS_HELP = ", ".join(sorted(ALL_KINDS))


class UsageFailure(click.ClickException):
    """A bad setting, baseline or output path: exit 2, as DESIGN.md's contract says."""

    exit_code = int(ExitCode.ERROR)

    def show(self, file: IO[Any] | None = None) -> None:
        echo_error(self.format_message())




def _split(values: Sequence[str]) -> tuple[str, ...]:
    """Repeatable options also take comma-separated lists."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _report_specs(specs: Sequence[str]) -> list[tuple[OutputFormat, str]]:
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise UsageFailure(f"--report takes FORMAT=PATH, not {spec!r}")
        try:
            out.append((get_reporter(name.strip()).format, path))
        except ValueError as exc:
            raise UsageFailure(str(exc)) from None
    return out


def _output_format(settings: config.Settings) -> OutputFormat:
    name = settings.output_format
    if name is None:
        # Inside GitHub Actions, annotations on the diff are what a reviewer sees.
        name = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    try:
        return get_reporter(name).format
    except ValueError as exc:
        raise UsageFailure(str(exc)) from None


def _color(setting: bool | None, stream: IO[Any]) -> bool:
    if setting is not None:
        return setting
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def _write(path: str, data: bytes) -> None:
    try:
        fsio.write_output(path, data)
    except fsio.WriteError as exc:
        raise UsageFailure(f"cannot write {exc}") from None


def _notes(report: Report, wrote_baseline: tuple[str, int] | None) -> None:
    """What a person should know that is not a result: on stderr, one line each."""
    if report.skipped:
        by_reason: dict[str, list[str]] = {}
        for s in report.skipped:
            by_reason.setdefault(s.reason, []).append(s.path)
        parts = [f"{reason}: {name_some(files)}" for reason, files in sorted(by_reason.items())]
        click.echo(f"thinkfix: skipped {plural(len(report.skipped), 'file')} "
                   f"({'; '.join(parts)})", err=True)
    if wrote_baseline is not None:
        path, count = wrote_baseline
        entries = "entry" if count == 1 else "entries"
        click.echo(f"thinkfix: wrote {count} baseline {entries} to {path}", err=True)


def _flags(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The settings the user gave as flags (unset ones are None or empty)."""
    flags = {name: kwargs.pop(name) for name in list(kwargs) if name in _SETTING_FLAGS}
    for name in ("select", "ignore", "include", "exclude", "disable_paths", "disable_models"):
        flags[name] = _split(flags.get(name) or ())
    flags["report"] = tuple(flags.get("report") or ())
    if flags.get("jobs") == 0:
        flags["jobs"] = None
    return flags


_SETTING_FLAGS = {
    "format", "output_format", "output", "report", "statistics", "exit_zero", "select", "ignore",
    "jobs", "include", "exclude", "respect_gitignore", "unknown_format", "allow_no_sessions",
    "parse_all", "baseline",
    "write_baseline", "color", "progress", "redact", "disable_paths", "disable_models",
    "max_findings", "max_record_size",
}


def _with_discovered(paths: tuple[str, ...], discover: bool) -> tuple[str, ...]:
    """The named paths plus, with --discover, the session folders found here."""
    if discover:
        from thinkfix.engine.discover import discover as find

        found = find()
        if not found and not paths:
            raise UsageFailure("--discover found no session folders (see `thinkfix where --all`)")
        paths = paths + tuple(p for p in found if p not in paths)
    if not paths:
        raise UsageFailure("name at least one PATH, or use --discover")
    return paths


def _scan_incremental(paths: tuple[str, ...], options: ScanOptions, state_file: str | None,
                      progress: Progress, stdin: BinaryIO | None, quiet: bool,
                      jobs: int | None) -> Report:
    """The scan, reading only what changed since the state was saved; a note on stderr says
    how much that was."""
    from thinkfix.engine import incremental

    path = state_file or incremental.default_state_path()
    try:
        report, stats = incremental.scan_incremental(paths, options, path, jobs=jobs,
                                                     progress=progress, stdin=stdin)
    except incremental.StateError as exc:
        raise UsageFailure(str(exc)) from None
    if not quiet:
        click.echo(f"thinkfix: incremental: {stats.full} read whole, {stats.appended} appended, "
                   f"{stats.unchanged} unchanged; {stats.bytes_read:,} bytes of sessions read",
                   err=True)
    return with_display_paths(report)


def _trend_options(options: ScanOptions, since: str | None, until: str | None,
                   formats: set[OutputFormat]) -> ScanOptions:
    """Counts by day where the output carries them (json, openmetrics, html), and the time window:
    a scan that shows neither does not pay for reading each message's time."""
    from thinkfix.engine.trend import parse_bound

    try:
        start = parse_bound(since) if since else None
        end = parse_bound(until, end=True) if until else None
    except ValueError as exc:
        raise UsageFailure(f"--since/--until: {exc}") from None
    by_day = bool(formats & {OutputFormat.JSON, OutputFormat.OPENMETRICS, OutputFormat.HTML})
    return dataclasses.replace(options, by_day=by_day, since=start, until=end)


@click.command("scan", cls=RedactCommand)
@click.argument("paths", nargs=-1, required=False, metavar="PATH...")
@click.option("--discover", is_flag=True,
              help="Also scan the session folders of every runtime found on this machine "
                   "(see `thinkfix where`).")
@click.option("--incremental", is_flag=True,
              help="Read only what changed since the last incremental run (state in "
                   "$XDG_STATE_HOME/thinkfix/scan-state.json unless --state says where).")
@click.option("--state", "state_file", default=None, metavar="FILE",
              help="The incremental state file (implies --incremental).")
@click.option("--since", default=None, metavar="DATE",
              help="Only messages written on or after DATE (YYYY-MM-DD, UTC, or an ISO "
                   "date-time); a message without a time of its own takes its file's.")
@click.option("--until", default=None, metavar="DATE",
              help="Only messages written up to the end of DATE (or before an ISO date-time).")
@click.option("--format", "format", default=None, metavar="NAME",
              type=click.Choice(["auto", *registry.names()]),
              help="Read every file as this format instead of detecting it per file.")
@click.option("--output-format", default=None, type=click.Choice([f.value for f in OutputFormat]),
              help="How to show results (default: text; github inside GitHub Actions).")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write the results here instead of stdout.")
@click.option("--report", multiple=True, metavar="FORMAT=PATH",
              help="Also write the results as FORMAT to PATH (repeatable).")
@click.option("--statistics/--no-statistics", default=None,
              help="Add counts per leak kind, format, model and file.")
@click.option("--exit-zero/--no-exit-zero", default=None,
              help="Exit 0 even when leaks are found (errors still exit 2).")
@click.option("--select", multiple=True, metavar="KINDS",
              help=f"Leak kinds to report (comma-separated, or 'all'; default: every kind that "
                   f"changes the text). Kinds: {_KINDS_HELP}.")
@click.option("--ignore", multiple=True, metavar="KINDS", help="Leak kinds not to report.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, metavar="N",
              help="Worker processes (default, or 0: all cores).")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Files to read in walked folders (replaces the default *.jsonl, *.json; "
                   "compressed and OpenClaw .reset/.deleted copies match too).")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Paths to leave out (gitignore-style; relative to the config file's folder, "
                   "else the working folder).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None,
              help="Skip what .gitignore / .thinkfixignore in walked folders ignore "
                   "(default: on).")
@click.option("--unknown-format", type=click.Choice(["auto", "error", "skip"]), default=None,
              help="A file no format claims: auto (default) is an error when named, a skip "
                   "when found in a folder.")
@click.option("--allow-no-sessions/--no-allow-no-sessions", default=None,
              help="Exit 0 when the paths hold no session file (a pre-commit hook on a commit "
                   "that touches none); by default a run that read nothing exits 2.")
@click.option("--parse-all/--no-parse-all", default=None,
              help="Parse every line, so every bad line is reported (slower; by default lines "
                   "that cannot hold assistant text are counted, not parsed).")
@click.option("--baseline", default=None, metavar="FILE",
              help="Leaks recorded in FILE do not fail the run; stale entries are reported.")
@click.option("--write-baseline", default=None, metavar="FILE",
              help="Record every leak found in FILE (then they do not fail this run).")
@click.option("--config", "config_file", default=None, metavar="FILE",
              help="Read settings from FILE instead of looking for pyproject.toml/thinkfix.toml.")
@click.option("--isolated", is_flag=True, help="Ignore configuration files.")
@click.option("--color/--no-color", default=None, help="Color the text output.")
@click.option("--progress/--no-progress", default=None,
              help="Show a progress bar on stderr (default: on a terminal, outside CI).")
@click.option("--redact", default=None, type=click.Choice([r.value for r in Redaction]),
              help="secrets (the default): mask likely credentials in leaked text; all: show "
                   "only lengths and hashes; none: show text as stored.")
@click.option("--max-findings", type=click.IntRange(min=0), default=None, metavar="N",
              help="Findings reported per message at most (default 1000; 0: no cap); past it "
                   "the rest of the message is not examined and an error says so.")
@click.option("--max-record-size", default=None, metavar="SIZE",
              help="Records longer than this (default 64MB; 0: no limit) are reported as too "
                   "large and not parsed.")
@click.option("--disable-model", "disable_models", multiple=True, metavar="GLOB",
              help="Models whose messages are not checked (their prompts use <think> on "
                   "purpose).")
@click.option("--disable-path", "disable_paths", multiple=True, metavar="GLOB",
              help="Files not checked at all.")
@click.option("--show-settings", is_flag=True,
              help="Print the resolved settings and where each came from (default, config "
                   "file, $THINKFIX_*, flag), then exit.")
@click.option("--show-baselined", is_flag=True,
              help="List findings the baseline covers in text, concise and github output "
                   "(machine formats always carry them, marked).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Scan the files on the Dask distributed cluster at ADDRESS (e.g. "
                   "tcp://scheduler:8786); its workers must see the same paths. Needs "
                   "pip install 'thinkfix[dask]'. The report is the same as a local run's.")
@quiet_option
@policy_options
def scan_command(paths: tuple[str, ...], discover: bool, incremental: bool,
                 state_file: str | None, since: str | None, until: str | None,
                 config_file: str | None, isolated: bool, quiet: bool,
                 show_baselined: bool, show_settings: bool, dask_address: str | None,
                 **kwargs: Any) -> None:
    """Find reasoning that leaked into the visible text of stored agent sessions.

    PATH may be a session file, a folder (walked), or - for stdin. Exits 0 when
    clean (or every leak is in the baseline), 1 when leaks are found, 2 on an
    error: a file that cannot be read is never reported as clean.
    """
    if not show_settings:  # the settings do not depend on the paths
        paths = _with_discovered(paths, discover)
    try:
        flags = _flags(kwargs)
        if show_settings:  # the policy flags are settings too, and show where they came from
            flags.update({key: kwargs.get(key) for key in POLICY_KEYS})
        settings, sources = config.resolve_with_sources(flags, config=config_file,
                                                        use_config=not isolated)
        if show_settings:
            click.echo(config.describe(settings, sources), nl=False)
            return
        policy = pop_policy(kwargs, config.policy(settings))
        options = config.scan_options(settings, policy)
    except (config.ConfigError, ValueError, TypeError) as exc:
        raise UsageFailure(str(exc)) from None
    output_format = _output_format(settings)
    extra_reports = _report_specs(settings.report)
    options = _trend_options(options, since, until,
                             {output_format, *(fmt for fmt, _ in extra_reports)})
    baseline = None
    if settings.baseline and not settings.write_baseline:
        try:
            baseline = baselines.load(settings.baseline)
        except baselines.BaselineError as exc:
            raise UsageFailure(str(exc)) from None

    progress = progress_for(sys.stderr, False if quiet and settings.progress is None
                            else settings.progress)
    stdin = sys.stdin.buffer if "-" in paths else None
    if state_file or incremental:
        report = _scan_incremental(paths, options, state_file, progress, stdin, quiet,
                                   settings.jobs)
    else:
        walked = WalkStats()
        try:
            report = scan(paths, options, jobs=settings.jobs, progress=progress, stdin=stdin,
                          walk_stats=walked, dask=dask_address)
        except DaskUnavailable as exc:  # --dask without the extra installed
            raise UsageFailure(str(exc)) from None
        for pattern in walked.unmatched(settings.exclude):
            # A typo, or quotes a shell or CI runner kept (`'archive/**'`): say so.
            click.echo(f"thinkfix: warning: exclude pattern {pattern!r} matched nothing "
                       f"(patterns are relative to {settings.pattern_anchor})", err=True)

    wrote = None
    if settings.write_baseline:
        root = os.path.dirname(os.path.abspath(settings.write_baseline))
        baseline = baselines.from_findings(report.findings, root)
        _write(settings.write_baseline, baselines.dumps(baseline))
        wrote = (settings.write_baseline, len(baseline.entries))
    if baseline is not None:
        report = baselines.apply(report, baseline)
    # Snippets were masked (or replaced, --redact all) by the engine before being cut.

    to_terminal = settings.output is None and sys.stdout.isatty()
    main = RenderOptions(
        statistics=settings.statistics, show_baselined=show_baselined,
        color=_color(settings.color, sys.stdout) if settings.output is None
        else bool(settings.color),
        width=shutil.get_terminal_size().columns if to_terminal else None)
    data = get_reporter(output_format).render_bytes(report, main)
    for fmt, path in extra_reports:
        _write(path, get_reporter(fmt).render_bytes(
            report, RenderOptions(statistics=settings.statistics)))
    if settings.output is not None:
        _write(settings.output, data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    if not quiet:
        _notes(report, wrote)
    sys.exit(int(report.exit_code(exit_zero=settings.exit_zero)))


commands: list[click.Command] = [scan_command]
