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


#: The OS layouts a runtime's folders are spelled for (`this_system`).
LINUX, MACOS, WINDOWS = "linux", "macos", "windows"


def this_system() -> str:
    """The OS layout of this machine, as platformdirs picks it (Android and the BSDs lay
    folders out as Linux does): `where --all` lists only this OS's folders, not macOS's on
    Linux."""
    import platformdirs

    return {"MacOS": MACOS, "Windows": WINDOWS}.get(platformdirs.PlatformDirs.__name__, LINUX)


def _set(env: Mapping[str, str], name: str, default: Path) -> Path:
    from pathlib import Path

    value = env.get(name, "").strip()
    return Path(value) if value else default


def config_root(env: Mapping[str, str], home: Path, system: str) -> Path:
    """platformdirs' `user_config_dir` (roaming on Windows), from `env` and `home`:
    $XDG_CONFIG_HOME (else ~/.config), ~/Library/Application Support, %APPDATA%."""
    if system == MACOS:
        return home / "Library" / "Application Support"
    if system == WINDOWS:
        return _set(env, "APPDATA", home / "AppData" / "Roaming")
    return _set(env, "XDG_CONFIG_HOME", home / ".config")


def data_root(env: Mapping[str, str], home: Path, system: str) -> Path:
    """platformdirs' `user_data_dir` (local on Windows), from `env` and `home`:
    $XDG_DATA_HOME (else ~/.local/share), ~/Library/Application Support, %LOCALAPPDATA%."""
    if system == MACOS:
        return home / "Library" / "Application Support"
    if system == WINDOWS:
        return _set(env, "LOCALAPPDATA", home / "AppData" / "Local")
    return _set(env, "XDG_DATA_HOME", home / ".local" / "share")


#: VS Code and its forks, whose user folders hold the extensions' storage and the chat's.
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
#: The builds whose chat is Copilot Chat's (the forks have chats of their own).
VSCODE_EDITORS = ("Code", "Code - Insiders", "VSCodium")


def editor_users(
    env: Mapping[str, str], home: Path, editors: tuple[str, ...] = EDITORS, *, server: bool = False
) -> list[Path]:
    """`<editor>/User` for each editor in this OS's config folder (`config_root`: VS Code's
    own rule, src/vs/platform/environment/node/userDataPath.ts); `server` adds the VS Code
    Server's (~/.vscode-server/data/User) and a portable install's
    ($VSCODE_PORTABLE/user-data/User)."""
    root = config_root(env, home, this_system())
    out = [root / editor / "User" for editor in editors]
    if server:
        out.append(home / ".vscode-server" / "data" / "User")
        if env.get("VSCODE_PORTABLE", "").strip():
            out.append(expand(env["VSCODE_PORTABLE"].strip(), home) / "user-data" / "User")
    return out
