"""The rich progress bar `cli.progress` shows; its own module so rich is imported only when a
bar is actually drawn."""

from __future__ import annotations

import time
from typing import IO, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

#: The least time between two redraws: rich's own refresh rate (10 a second).
REDRAW_SECONDS = 0.1


class RichProgress:
    """Files and megabytes done, with the rate, on stderr; gone when the scan ends.

    Redrawn as files finish, not by rich's refresh thread: the pool forks its workers only
    in a process with no other thread (`engine/parallel/pool.start_method`), and a bar's
    thread would make every run on a terminal spawn them instead (slower to start)."""

    def __init__(self, stream: IO[Any], verb: str = "Scanning") -> None:
        self._bar = Progress(
            console=Console(file=stream, stderr=True), transient=True, auto_refresh=False
        )
        self._verb = verb
        self._files: Any = None
        self._bytes: Any = None
        self._drawn = 0.0

    def start(self, files: int, total_bytes: int) -> None:
        self._files = self._bar.add_task(self._verb, total=files)
        # Hidden: it only carries the byte count and rate that the files row shows.
        self._bytes = self._bar.add_task("", total=max(total_bytes, 1), visible=False)
        self._bar.columns = (
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files"),
            _BytesOf(self._bar, self._bytes),
        )
        self._bar.start()
        self._bar.refresh()

    def advance(self, path: str, nbytes: int) -> None:
        self._bar.advance(self._files, 1)
        self._bar.advance(self._bytes, max(nbytes, 0))
        now = time.monotonic()
        if now - self._drawn >= REDRAW_SECONDS:
            self._drawn = now
            self._bar.refresh()

    def finish(self) -> None:
        self._bar.stop()


class _BytesOf(TextColumn):
    """Megabytes done and the rate, read from another task of the same bar."""

    def __init__(self, bar: Progress, task_id: Any) -> None:
        super().__init__("")
        self._bar, self._task_id = bar, task_id

    def render(self, task: Any) -> Any:
        other = self._bar.tasks[self._task_id]
        speed = other.finished_speed or other.speed or 0.0
        self.text_format = (
            f"{other.completed / 1e6:,.1f}/{other.total / 1e6:,.1f} MB {speed / 1e6:,.1f} MB/s"
        )
        return super().render(task)
