"""`thinkfix watch`: follow session files live, print each new leak, export counters.

The counters go to Prometheus over HTTP (`--metrics-port`, on 127.0.0.1 unless
`--metrics-host` says otherwise) and/or to an OpenMetrics text file replaced atomically
after every change (`--textfile`, for node_exporter's textfile collector). The serving
is `engine.watch_run`'s; it needs the `thinkfix[watch]` extra (prometheus_client, watchdog),
imported only when a watch starts, so other commands never load them.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from thinkfix.cli.options import Failure, color_option, quiet_option, wants_color
from thinkfix.cli.settings import SettingsCommand, config_options, resolve_settings
from thinkfix.engine.report import LeakFinding


def _live_line(console: Any, f: LeakFinding) -> None:
    """One line per leak: where, what kind, which model, and the start of the leaked text."""
    from rich.text import Text

    from thinkfix.reporters.base import label
    from thinkfix.reporters.controls import visible_strings

    f = visible_strings(f)  # session text never drives the terminal
    snippet = " ".join(f.snippet.split())
    line = Text.assemble(
        (f"{f.path}:{f.line}", "bold"),
        " ",
        (f.kind, "red"),
        " ",
        (label(f.model), "cyan"),
        f" {f.leaked_chars} chars: ",
        (snippet, "dim"),
    )
    if getattr(console.file, "isatty", lambda: False)():  # a person: one line, cut to fit
        console.print(line, no_wrap=True, overflow="ellipsis", soft_wrap=False)
    else:  # a log, a pipe: every character, never wrapped or cut (rich cut at 80 columns)
        console.print(line, soft_wrap=True)


@click.command("watch", cls=SettingsCommand)
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option(
    "--discover",
    is_flag=True,
    help="Also watch the session folders of every runtime found on this machine.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    metavar="PORT",
    help="Serve Prometheus metrics on this port (path /metrics).",
)
@click.option(
    "--metrics-host",
    default="127.0.0.1",
    show_default=True,
    metavar="ADDR",
    help="The address the metrics server binds to.",
)
@click.option(
    "--textfile",
    default=None,
    metavar="PATH",
    type=click.Path(dir_okay=False),
    help="Write the counters as OpenMetrics text to PATH (replaced atomically), for "
    "node_exporter's textfile collector.",
)
@click.option(
    "--state",
    "state_file",
    default=None,
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Where to remember files and counters across restarts (default: "
    "$XDG_STATE_HOME/thinkfix/watch-state.json).",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=1.0,
    show_default=True,
    help="Seconds between passes when polling (with filesystem events: the longest "
    "wait between passes is ten times this).",
)
@click.option("--poll", is_flag=True, help="Poll instead of using filesystem events.")
@config_options
@color_option
@quiet_option
def watch_command(
    paths: tuple[str, ...],
    discover: bool,
    metrics_port: int | None,
    metrics_host: str,
    textfile: str | None,
    state_file: str | None,
    interval: float,
    poll: bool,
    quiet: bool,
    color_setting: bool | None,
    **kwargs: Any,
) -> None:
    """Follow session files as agents write them: print each new leak as it lands, and export
    counters (thinkfix_assistant_messages_total, thinkfix_leaking_messages_total,
    thinkfix_findings_total{kind}, by format and model) over HTTP and/or to a text file.

    Stops cleanly on Ctrl-C or SIGTERM, saving its state, so a restart counts every record
    once.
    """
    from rich.console import Console

    from thinkfix.engine.commands import watch as watch_run
    from thinkfix.engine.settings import config, values

    console = Console(
        highlight=False,
        color_system="auto" if wants_color(color_setting, sys.stdout) else None,
        force_terminal=True if color_setting else None,
    )
    serving = watch_run.Serving(metrics_port, metrics_host, textfile, interval, poll)
    try:
        paths = watch_run.watched_paths(paths, discover)
        settings, _ = resolve_settings(kwargs)
        serve = watch_run.Serve.watching(
            paths,
            config.scan_options(settings),
            state_file,
            serving,
            on_finding=lambda f: _live_line(console, f),
        )
        started = serve.start()
        if started.note is not None:
            click.echo(f"thinkfix: note: {started.note}", err=True)
        if not quiet and started.metrics_url:
            click.echo(f"thinkfix: metrics on {started.metrics_url}", err=True)
        if not quiet:
            click.echo(
                f"thinkfix: watching {len(paths)} path(s) "
                f"({'filesystem events' if started.events else 'polling'}); so far "
                f"{started.messages} assistant messages, {started.leaking} leaking",
                err=True,
            )
        sys.stdout.flush()
        serve.loop(after_findings=sys.stdout.flush)
    except (values.ConfigError, ValueError, TypeError) as exc:
        raise Failure(str(exc)) from None
    if not quiet:
        click.echo("thinkfix: watch stopped; state saved to " + serve.watcher.state_path, err=True)


commands: list[click.Command] = [watch_command]
