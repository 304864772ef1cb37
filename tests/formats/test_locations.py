"""Each runtime's folders are spelled for the OS thinkfix runs on (#27 item 8): `where --all`
on Linux listed macOS's ~/Library/Application Support folders and Windows' %APPDATA% ones,
folders no Linux runtime ever writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import platformdirs
import platformdirs.macos
import platformdirs.unix
import platformdirs.windows
import pytest
from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.engine.inputs.discover import locations
from thinkfix.formats import locations as oslayout
from thinkfix.formats.cursor import Cursor
from thinkfix.formats.goose import Goose
from thinkfix.formats.locations import LINUX, MACOS, WINDOWS, config_root, data_root
from thinkfix.formats.zed import Zed

#: Another OS's folders (runtimes on XDG folders everywhere, OpenCode's, Kilo's, Goose's on
#: macOS, keep them on every OS: those are the runtimes' own rules).
FOREIGN = {
    LINUX: ("Library/Application Support", "/appdata/"),
    MACOS: ("/appdata/", "/xdg/Code", "/xdg/Cursor"),
    WINDOWS: ("Library/Application Support", "/xdg/Code", "/xdg/Cursor"),
}
ENV = {"XDG_CONFIG_HOME": "/xdg", "XDG_DATA_HOME": "/xdg-data", "APPDATA": "/appdata"}


#: platformdirs' own class for each OS, the one it picks there (all import anywhere).
CLASSES = {
    LINUX: platformdirs.unix.Unix,
    MACOS: platformdirs.macos.MacOS,
    WINDOWS: platformdirs.windows.Windows,
}


def _on(monkeypatch: pytest.MonkeyPatch, system: str) -> None:
    """Run as if on `system`: platformdirs picked that OS's class."""
    monkeypatch.setattr(platformdirs, "PlatformDirs", CLASSES[system])
    assert oslayout.this_system() == system


def test_this_machine_is_the_layout_platformdirs_picks() -> None:
    expected = {"MacOS": MACOS, "Windows": WINDOWS}.get(platformdirs.PlatformDirs.__name__, LINUX)
    assert oslayout.this_system() == expected


@pytest.mark.parametrize("xdg", [None, "xdg-root"])
def test_the_roots_are_platformdirs_own_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        if xdg:
            monkeypatch.setenv(name, str(tmp_path / xdg / name))
        else:
            monkeypatch.delenv(name, raising=False)
    system = oslayout.this_system()
    if system == WINDOWS:  # Windows' roots come from the shell's known folders
        pytest.skip("the known folders are the OS's, not the environment's")
    assert config_root(os.environ, Path.home(), system) == Path(
        platformdirs.user_config_dir(roaming=True)
    )
    assert data_root(os.environ, Path.home(), system) == Path(platformdirs.user_data_dir())


@pytest.mark.parametrize("system", [LINUX, MACOS, WINDOWS])
def test_where_all_lists_only_this_oss_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system: str
) -> None:
    _on(monkeypatch, system)
    for name in (
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "APPDATA",
        "LOCALAPPDATA",
        "CLAUDE_CONFIG_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, ["where", "--all", "--json"])
    listing = json.loads(result.stdout)
    assert listing["platform"] == system
    rows = listing["locations"]
    paths = [Path(r["path"]).as_posix() for r in rows]
    assert paths and result.exit_code == 1  # nothing exists in the fake home
    foreign = [p for p in paths if any(mark in p for mark in FOREIGN[system])]
    assert foreign == []
    # and this OS's editor folder is there for every editor-hosted runtime
    root = config_root(ENV, tmp_path, system).as_posix()
    assert {r["format"] for r in rows if Path(r["path"]).as_posix().startswith(root)} >= {
        "cline",
        "roo-code",
        "kilo-code",
        "copilot-chat",
    }


def test_the_text_listing_on_linux_names_no_macos_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _on(monkeypatch, LINUX)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("APPDATA", str(tmp_path / "roaming"))
    result = CliRunner().invoke(main, ["where", "--all"])
    assert ".config/Code/User" in result.stdout
    assert "Library" not in result.stdout and "roaming" not in result.stdout


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        (LINUX, "/xdg/Cursor/User/globalStorage/state.vscdb"),
        (MACOS, "/home/ana/Library/Application Support/Cursor/User/globalStorage/state.vscdb"),
        (WINDOWS, "/appdata/Cursor/User/globalStorage/state.vscdb"),
    ],
)
def test_cursor_store_is_spelled_for_each_os(
    monkeypatch: pytest.MonkeyPatch, system: str, expected: str
) -> None:
    _on(monkeypatch, system)
    found = [p.as_posix() for p in Cursor().default_locations(ENV, Path("/home/ana"))]
    assert found == [expected, "/home/ana/.cursor-server/data/User/globalStorage/state.vscdb"]


def test_windows_without_appdata_falls_back_as_vscode_does(monkeypatch: pytest.MonkeyPatch) -> None:
    # userDataPath.ts: %APPDATA%, else <home>/AppData/Roaming
    assert config_root({}, Path("/u"), WINDOWS) == Path("/u/AppData/Roaming")
    assert data_root({"LOCALAPPDATA": " "}, Path("/u"), WINDOWS) == Path("/u/AppData/Local")


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        (LINUX, ["/flat/zed/threads", "/xdg-data/zed/threads", "/h/.local/share/zed/threads"]),
        (MACOS, ["/h/Library/Application Support/Zed/threads"]),
        (WINDOWS, ["/local/Zed/threads"]),
    ],
)
def test_zed_threads_follow_zeds_paths_on_each_os(
    monkeypatch: pytest.MonkeyPatch, system: str, expected: list[str]
) -> None:
    _on(monkeypatch, system)
    env = {**ENV, "FLATPAK_XDG_DATA_HOME": "/flat", "LOCALAPPDATA": "/local"}
    assert [p.as_posix() for p in Zed().default_locations(env, Path("/h"))] == expected


@pytest.mark.parametrize(
    ("system", "folder"),
    [
        (LINUX, "/xdg-data/goose/sessions"),
        (MACOS, "/xdg-data/goose/sessions"),  # etcetera's Xdg strategy on macOS too
        (WINDOWS, "/appdata/Block/goose/data/sessions"),
    ],
)
def test_goose_sessions_follow_etcetera_on_each_os(
    monkeypatch: pytest.MonkeyPatch, system: str, folder: str
) -> None:
    _on(monkeypatch, system)
    found = [p.as_posix() for p in Goose().default_locations(ENV, Path("/h"))]
    assert found == [f"{folder}/sessions.db", folder]


def test_discovery_uses_the_same_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on(monkeypatch, MACOS)
    found = [loc.path for loc in locations(env={}, home=tmp_path) if loc.format == "cline"]
    assert found and all("Library" in p or ".cline" in p for p in found)
