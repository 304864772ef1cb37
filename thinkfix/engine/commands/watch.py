"""`thinkfix watch`'s library side: a `Watcher` kept running, its counters served.

The counters go to Prometheus over HTTP and/or to an OpenMetrics text file replaced
atomically after every pass; passes are woken by filesystem events (watchdog) or a poll,
and `stop()` (safe from a signal handler) ends the loop after saving the state.
`prometheus_client` and `watchdog` are the `thinkfix[watch]` extra: imported here, on use,
so no other command loads them.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from thinkfix.engine.report import LeakFinding
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.telemetry.incremental import default_state_path
from thinkfix.engine.telemetry.metrics import (
    ASSISTANT_MESSAGES,
    COUNTERS,
    FINDINGS,
    LEAKING_MESSAGES,
)
from thinkfix.engine.telemetry.state import StateError
from thinkfix.engine.telemetry.watch import Watcher
from thinkfix.io import filestate, safewrite


class WatchError(ValueError):
    """What stops a watch: the extra missing, a port taken, a file that cannot be written."""


def prometheus() -> Any:
    """The parts of prometheus_client a watch uses (the `watch` extra), or `WatchError`."""
    try:
        import prometheus_client
        from prometheus_client.core import CounterMetricFamily
        from prometheus_client.openmetrics.exposition import generate_latest
        from prometheus_client.registry import Collector
    except ImportError:
        raise WatchError("watch needs the watch extra: pip install 'thinkfix[watch]'") from None
    return SimpleNamespace(
        client=prometheus_client,
        CounterMetricFamily=CounterMetricFamily,
        generate_latest=generate_latest,
        Collector=Collector,
    )


def _collector(watcher: Watcher, prom: Any) -> Any:
    CounterMetricFamily = prom.CounterMetricFamily

    class ThinkfixCollector(prom.Collector):  # type: ignore[misc]
        def collect(self) -> Any:
            totals = watcher.snapshot()
            samples = {
                ASSISTANT_MESSAGES: totals.messages,
                LEAKING_MESSAGES: totals.leaking,
                FINDINGS: totals.findings,
            }
            for (
                family
            ) in COUNTERS:  # the names the cron route writes too (engine/telemetry/metrics.py)
                metric = CounterMetricFamily(family.name, family.help, labels=list(family.labels))
                for labels, value in sorted(samples[family].items()):
                    metric.add_metric(list(labels), value)
                yield metric

    return ThinkfixCollector()


def _observer(paths: list[str], wake: threading.Event) -> Any:
    """A watchdog observer that wakes the loop on any change under the paths, or None when
    watchdog cannot watch here (then the loop polls)."""
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


def watched_paths(paths: Sequence[str], discover: bool) -> tuple[str, ...]:
    """The paths named, then (with `discover`) every runtime's session folder found on this
    machine that is not named already; `ValueError` when that leaves none."""
    found: tuple[str, ...] = tuple(paths)
    if discover:
        from thinkfix.engine.inputs.discover import discover as find

        found += tuple(p for p in find() if p not in paths)
    if not found:
        raise ValueError("name at least one PATH, or use --discover")
    return found


def state_path(given: str | None) -> str:
    """Where the watch remembers files and counters: `given`, else watch-state.json beside
    the incremental scan's state."""
    return given or default_state_path().replace("scan-state", "watch-state")


@dataclass(frozen=True)
class Started:
    """What a person should know once the first pass is done and the counters are served."""

    metrics_url: str | None
    events: bool  # woken by filesystem events (else polling)
    messages: int
    leaking: int
    note: str | None = None  # why the state file there was not reused


@dataclass
class Serving:
    """Where the counters go and how often the paths are looked at."""

    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    textfile: str | None = None
    interval: float = 1.0
    poll: bool = False


class Serve:
    """`start()`, then `loop()` until `stop()`; every failure is a `WatchError`."""

    def __init__(self, watcher: Watcher, serving: Serving) -> None:
        self.watcher = watcher
        self.serving = serving
        self.prom = prometheus()
        self.registry = self.prom.client.CollectorRegistry(auto_describe=True)
        self.registry.register(_collector(watcher, self.prom))
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._server: Any = None
        self._observer: Any = None

    @classmethod
    def watching(
        cls,
        paths: Sequence[str],
        options: ScanOptions,
        state_file: str | None,
        serving: Serving,
        on_finding: Callable[[LeakFinding], None],
    ) -> Serve:
        """A watch of `paths` remembered in `state_file` (default: `state_path`'s), each new
        leak handed to `on_finding`, stopped by SIGINT or SIGTERM."""
        watcher = Watcher(paths, options, state_path(state_file), on_finding=on_finding)
        serve = cls(watcher, serving)

        def stop_soon(*_: object) -> None:
            # A signal's handler runs between two bytecodes of the main thread, perhaps while
            # it holds the lock of the event it waits on (`Event.wait` takes it): `stop` sets
            # those events, so it runs in a thread of its own, which waits for the lock.
            threading.Thread(target=serve.stop, daemon=True).start()

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, stop_soon)
        return serve

    def stop(self) -> None:
        """End the loop after the pass under way (it takes the events' locks: a signal
        handler calls it from a thread, see `watching`)."""
        self._stop.set()
        self._wake.set()

    def _write_textfile(self) -> None:
        path = self.serving.textfile
        if path is not None:
            try:
                safewrite.atomic_write(path, self.prom.generate_latest(self.registry))
            except (OSError, filestate.WriteError) as exc:  # a folder that is not there
                raise WatchError(f"cannot write {path}: {exc}") from None

    def start(self) -> Started:
        """The first pass (announcing nothing: what is already there is not news), the
        metrics server, the text file and the filesystem observer."""
        s = self.serving
        try:
            self.watcher.run_pass(announce=False)
        except StateError as exc:
            raise WatchError(str(exc)) from None
        totals = self.watcher.snapshot()
        url = None
        if s.metrics_port is not None:
            try:
                self._server, _ = self.prom.client.start_http_server(
                    s.metrics_port, s.metrics_host, registry=self.registry
                )
            except OSError as exc:
                raise WatchError(
                    f"cannot serve metrics on {s.metrics_host}:{s.metrics_port}: {exc}"
                ) from None
            url = f"http://{s.metrics_host}:{self._server.server_address[1]}/metrics"
        self._write_textfile()
        self._observer = None if s.poll else _observer(list(self.watcher.paths), self._wake)
        return Started(
            url,
            self._observer is not None,
            sum(totals.messages.values()),
            sum(totals.leaking.values()),
            self.watcher.state.files.note,
        )

    def loop(self, after_findings: Callable[[], None] = lambda: None) -> None:
        """Pass after pass until `stop()`; `after_findings` runs after a pass that found
        leaks (the command flushes the lines it printed)."""
        interval = self.serving.interval
        wait = interval * 10 if self._observer is not None else interval
        try:
            while not self._stop.is_set():
                self._wake.wait(wait)
                if self._stop.is_set():
                    break
                if self._wake.is_set():
                    self._wake.clear()
                    self._stop.wait(min(0.1, interval))  # a burst of writes: one pass
                if self.watcher.run_pass():
                    after_findings()
                self._write_textfile()
        except StateError as exc:
            raise WatchError(str(exc)) from None
        finally:
            if self._observer is not None:
                self._observer.stop()
                self._observer.join(timeout=5)
            if self._server is not None:
                self._server.shutdown()
        self._write_textfile()
