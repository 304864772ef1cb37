"""`thinkfix watch`: follow session files live, print each new leak, export counters.

The counters go to Prometheus over HTTP (`--metrics-port`, on 127.0.0.1 unless
`--metrics-host` says otherwise) and/or to an OpenMetrics text file replaced atomically
after every change (`--textfile`, for node_exporter's textfile collector). Needs the
`thinkfix[watch]` extra (prometheus_client, watchdog); they are imported here, inside the
command, so other commands never load them.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType, SimpleNamespace
from typing import Any

import click

from thinkfix.cli.options import (
    Failure,
    SettingsCommand,
    config_options,
    quiet_option,
    resolve_settings,
)
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
    console.print(line, no_wrap=True, overflow="ellipsis", soft_wrap=False)


def _prometheus() -> Any:
    """The parts of prometheus_client the command uses (the `watch` extra), or a clear error."""
    try:
        import prometheus_client
        from prometheus_client.core import CounterMetricFamily
        from prometheus_client.openmetrics.exposition import generate_latest
        from prometheus_client.registry import Collector
    except ImportError:
        raise Failure("watch needs the watch extra: pip install 'thinkfix[watch]'") from None
    return SimpleNamespace(
        client=prometheus_client,
        CounterMetricFamily=CounterMetricFamily,
        generate_latest=generate_latest,
        Collector=Collector,
    )


def _collector(watcher: Any, prom: Any) -> Any:
    CounterMetricFamily = prom.CounterMetricFamily

    class ThinkfixCollector(prom.Collector):  # type: ignore[misc]
        def collect(self) -> Any:
            totals = watcher.snapshot()
            messages = CounterMetricFamily(
                "thinkfix_assistant_messages",
                "Assistant messages seen, by format and model.",
                labels=["format", "model"],
            )
            leaking = CounterMetricFamily(
                "thinkfix_leaking_messages",
                "Assistant messages with leaked reasoning, by format and model.",
                labels=["format", "model"],
            )
            findings = CounterMetricFamily(
                "thinkfix_findings",
                "Leaks found, by leak kind, format and model.",
                labels=["kind", "format", "model"],
            )
            for (fmt, model), value in sorted(totals.messages.items()):
                messages.add_metric([fmt, model], value)
            for (fmt, model), value in sorted(totals.leaking.items()):
                leaking.add_metric([fmt, model], value)
            for (kind, fmt, model), value in sorted(totals.findings.items()):
                findings.add_metric([kind, fmt, model], value)
            yield from (messages, leaking, findings)

    return ThinkfixCollector()


def _observer(paths: list[str], wake: threading.Event) -> Any:
    """A watchdog observer that wakes the loop on any change under the paths, or None when
    watchdog cannot watch here (then the loop polls)."""
    import os

    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:
        return None

    class Wake(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            wake.set()

    observer = Observer()
    handler = Wake()
    try:
        for path in paths:
            if os.path.isdir(path):
                observer.schedule(handler, path, recursive=True)
            elif os.path.isdir(os.path.dirname(os.path.abspath(path))):
                observer.schedule(handler, os.path.dirname(os.path.abspath(path)))
        observer.start()
    except (OSError, RuntimeError):
        return None
    return observer


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
    help="Write the counters as OpenMetrics text to PATH (replaced atomically), for "
    "node_exporter's textfile collector.",
)
@click.option(
    "--state",
    "state_file",
    default=None,
    metavar="FILE",
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
    **kwargs: Any,
) -> None:
    """Follow session files as agents write them: print each new leak as it lands, and export
    counters (thinkfix_assistant_messages_total, thinkfix_leaking_messages_total,
    thinkfix_findings_total{kind}, by format and model) over HTTP and/or to a text file.

    Stops cleanly on Ctrl-C or SIGTERM, saving its state, so a restart counts every record
    once.
    """
    prom = _prometheus()
    from rich.console import Console

    from thinkfix.engine import config, fsio
    from thinkfix.engine.incremental import StateError, default_state_path
    from thinkfix.engine.watch import Watcher

    if discover:
        from thinkfix.engine.discover import discover as find

        paths = paths + tuple(p for p in find() if p not in paths)
    if not paths:
        raise Failure("name at least one PATH, or use --discover")
    try:
        settings, _ = resolve_settings(kwargs)
        options = config.scan_options(settings)
    except (config.ConfigError, ValueError, TypeError) as exc:
        raise Failure(str(exc)) from None
    state_path = state_file or default_state_path().replace("scan-state", "watch-state")
    console = Console(highlight=False)
    watcher = Watcher(paths, options, state_path, on_finding=lambda f: _live_line(console, f))

    registry = prom.client.CollectorRegistry(auto_describe=True)
    registry.register(_collector(watcher, prom))

    def write_textfile() -> None:
        if textfile is not None:
            try:
                fsio.atomic_write(textfile, prom.generate_latest(registry))
            except OSError as exc:
                raise Failure(f"cannot write {textfile}: {exc}") from None

    stop = threading.Event()
    wake = threading.Event()

    def note(text: str) -> None:
        if not quiet:
            click.echo(text, err=True)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        wake.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    try:
        watcher.run_pass(announce=False)
    except StateError as exc:
        raise Failure(str(exc)) from None
    totals = watcher.snapshot()
    server = None
    if metrics_port is not None:
        try:
            server, _ = prom.client.start_http_server(metrics_port, metrics_host, registry=registry)
        except OSError as exc:
            raise Failure(f"cannot serve metrics on {metrics_host}:{metrics_port}: {exc}") from None
        port = server.server_address[1]
        note(f"thinkfix: metrics on http://{metrics_host}:{port}/metrics")
    write_textfile()
    observer = None if poll else _observer(list(paths), wake)
    note(
        f"thinkfix: watching {len(paths)} path(s) "
        f"({'filesystem events' if observer is not None else 'polling'}); so far "
        f"{sum(totals.messages.values())} assistant messages, "
        f"{sum(totals.leaking.values())} leaking"
    )
    sys.stdout.flush()
    wait = interval * 10 if observer is not None else interval
    try:
        while not stop.is_set():
            wake.wait(wait)
            if stop.is_set():
                break
            if wake.is_set():
                wake.clear()
                stop.wait(min(0.1, interval))  # let a burst of writes settle into one pass
            if watcher.run_pass():
                sys.stdout.flush()
            write_textfile()
    except StateError as exc:
        raise Failure(str(exc)) from None
    finally:
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        if server is not None:
            server.shutdown()
    write_textfile()
    note("thinkfix: watch stopped; state saved to " + state_path)


commands: list[click.Command] = [watch_command]
