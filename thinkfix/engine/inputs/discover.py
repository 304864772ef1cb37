"""Where the runtimes thinkfix reads keep their sessions on this machine.

Each format knows its runtime's folders (`SessionFormat.default_locations`, taken from the
runtime's docs or source and cited in `locations_source`); discovery asks every format in
the registry, so a format added later is discovered without touching this module.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from thinkfix.formats.base import SessionFormat


@dataclass(frozen=True)
class Location:
    """One candidate session folder of one format, and whether it is there."""

    format: str
    path: str
    exists: bool


def locations(
    formats: Iterable[SessionFormat] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[Location]:
    """Every candidate folder, in registry order, each path once (first format wins)."""
    if formats is None:
        from thinkfix.formats.registry import FORMATS

        formats = FORMATS.values()
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    out: list[Location] = []
    seen: set[str] = set()
    for fmt in formats:
        for folder in fmt.default_locations(env, home):
            path = os.path.normpath(os.fspath(folder))
            if path in seen:
                continue
            seen.add(path)
            # a folder, or a store that is one file (OpenCode's opencode.db)
            out.append(Location(fmt.id, path, os.path.isdir(path) or os.path.isfile(path)))
    return out


def discover(
    formats: Iterable[SessionFormat] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> list[str]:
    """The session folders that exist here, ready to hand to `scan` or `watch`."""
    return [loc.path for loc in locations(formats, env, home) if loc.exists]
