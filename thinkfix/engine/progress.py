"""How the engine tells a caller about progress without ever printing.

The engine calls these methods; the CLI passes an implementation that draws a
bar on a terminal, and everything else gets `NullProgress`.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receives the shape of the work up front and each file as it is done."""

    def start(self, files: int, total_bytes: int) -> None:
        """The work ahead: how many files and how many bytes on disk."""

    def advance(self, path: str, nbytes: int) -> None:
        """One file finished (in completion order, which need not be input order)."""

    def finish(self) -> None:
        """No more files; a display may close."""


class NullProgress:
    """Progress that goes nowhere (the default)."""

    def start(self, files: int, total_bytes: int) -> None:
        pass

    def advance(self, path: str, nbytes: int) -> None:
        pass

    def finish(self) -> None:
        pass


NULL_PROGRESS = NullProgress()
