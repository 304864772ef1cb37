"""Shared pieces of the formats' `default_locations`: override variables and home-relative paths.

Runtimes name their data folder with an environment variable and fall back to a dot folder
in the home folder; a variable set to an empty string counts as unset (as Node's
`process.env.X || default` and Rust's `var_os(...).filter(non-empty)` treat it), and a
leading `~` is the given home, as the runtimes expand it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathlib is imported where a location is built: formats load at start-up
    from pathlib import Path


def expand(value: str, home: Path) -> Path:
    """A path from an environment variable, with `~` meaning `home`."""
    if value == "~" or value.startswith(("~/", "~\\")):
        return home / value[2:] if len(value) > 1 else home
    from pathlib import Path

    return Path(value)


def env_dir(env: Mapping[str, str], names: tuple[str, ...], home: Path, default: str) -> Path:
    """The first non-empty variable of `names`, else `home/default`."""
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return expand(value, home)
    return home / default


def working_dir(env: Mapping[str, str]) -> Path:
    """The folder the user is in: `$PWD` when the shell set it, else the process's own."""
    from pathlib import Path

    value = env.get("PWD", "")
    return Path(value) if value else Path.cwd()
