"""`thinkfix where`: the session folders of the runtimes thinkfix reads, found or not."""

from __future__ import annotations

import click

from thinkfix.cli.options import echo_json, exit_zero_option, json_option, quiet_option
from thinkfix.engine.controls import visible_name
from thinkfix.engine.inputs.discover import locations
from thinkfix.engine.report import SCHEMA_VERSION
from thinkfix.formats.locations import this_system


@click.command("where")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also list the folders that do not exist on this machine (this OS's folders only: "
    "~/.config on Linux, ~/Library/Application Support on macOS, %APPDATA% on Windows).",
)
@json_option("{schema_version, platform, locations: [{format, path, exists}]}")
@exit_zero_option("no session folder exists")
@quiet_option
def where_command(show_all: bool, as_json: bool, exit_zero: bool | None, quiet: bool) -> None:
    """List the session folders found on this machine (what `scan --discover` reads),
    honouring each runtime's override variable (CLAUDE_CONFIG_DIR, CODEX_HOME, ...),
    spelled for the OS it runs on (platform: linux, macos or windows, as platformdirs
    tells).

    Exits 0 when at least one folder exists, 1 when none does.
    """
    found = locations()
    shown = found if show_all or as_json else [loc for loc in found if loc.exists]
    if as_json:
        echo_json(
            {
                "schema_version": SCHEMA_VERSION,
                "platform": this_system(),
                "locations": [
                    {"format": loc.format, "path": loc.path, "exists": loc.exists} for loc in shown
                ],
            }
        )
    elif not shown:
        if not quiet:
            click.echo("thinkfix: no session folders found (see `thinkfix where --all`)", err=True)
    else:
        width = max(len(loc.format) for loc in shown)
        for loc in shown:
            mark = "" if loc.exists else "  (not found)"
            click.echo(f"{loc.format:<{width}}  {visible_name(loc.path)}{mark}")
    raise SystemExit(0 if exit_zero or any(loc.exists for loc in found) else 1)


commands: list[click.Command] = [where_command]
