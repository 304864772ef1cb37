"""The terminal side of `engine.progress`: a rich bar on stderr, only where someone watches
(rich itself is imported only then, from `cli.richbar`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

from thinkfix.engine.progress import NULL_PROGRESS
from thinkfix.engine.progress import Progress as ProgressSink


def wanted(stream: IO[Any], setting: bool | None, environ: Mapping[str, str] = os.environ) -> bool:
    """Show a bar? An explicit setting wins; else only on a terminal and never in CI."""
    if setting is not None:
        return setting
    return bool(getattr(stream, "isatty", lambda: False)()) and not environ.get("CI")


def unless_quiet(setting: bool | None, quiet: bool) -> bool | None:
    """The bar setting under `--quiet`: no bar, unless `--progress` asks for one."""
    return False if quiet and setting is None else setting


def progress_for(stream: IO[Any], setting: bool | None, verb: str = "Scanning") -> ProgressSink:
    """A bar when wanted, else the engine's silent default."""
    if not wanted(stream, setting):
        return NULL_PROGRESS
    from thinkfix.cli.richbar import RichProgress  # rich only when a bar is drawn

    return RichProgress(stream, verb)
