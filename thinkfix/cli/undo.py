"""`thinkfix undo`: restore every file a repair wrote, byte for byte, from its manifest (or
its run's folder, which holds the manifest, or the journal of a run that never finished)."""

from __future__ import annotations

import sys

import click

from thinkfix.cli.options import echo_error, quiet_option
from thinkfix.engine.controls import visible_name
from thinkfix.engine.ledger.manifest import ManifestError
from thinkfix.engine.ledger.restore import UndoStatus, undo
from thinkfix.engine.report import ExitCode
from thinkfix.reporters.base import plural


@click.command("undo")
@click.argument("manifest", type=click.Path(), metavar="MANIFEST|RUN_DIR")
@click.option("--dry-run", is_flag=True, help="Check every file and say what would be restored.")
@click.option(
    "--skip-changed",
    is_flag=True,
    help="Restore the files that are unchanged since the repair and leave the others "
    "(by default one changed file stops the whole undo).",
)
@quiet_option
def undo_command(manifest: str, dry_run: bool, skip_changed: bool, quiet: bool) -> None:
    """Restore every file a repair wrote, byte for byte, from its MANIFEST.

    MANIFEST is the file a repair names ("undo with: thinkfix undo MANIFEST"). RUN_DIR, the
    run's folder (--run-dir, or the run's own under $XDG_STATE_HOME/thinkfix/runs), does as
    well: it also follows a run that was killed or interrupted before its manifest was
    written, from the journal the run kept there.
    """
    try:
        result = undo(manifest, dry_run=dry_run, skip_changed=skip_changed)
    except ManifestError as exc:
        echo_error(str(exc))
        sys.exit(int(ExitCode.ERROR))
    except Exception as exc:  # noqa: BLE001 - never a traceback for a manifest we cannot follow
        echo_error(f"{manifest}: cannot undo: {type(exc).__name__}: {exc}")
        sys.exit(int(ExitCode.ERROR))
    words = {
        UndoStatus.RESTORED: "restored",
        UndoStatus.REMOVED: "removed",
        UndoStatus.ALREADY: "already as before the repair",
        UndoStatus.WOULD_RESTORE: "would restore",
    }
    if result.refused:
        changed = [f for f in result.files if f.status in (UndoStatus.CHANGED, UndoStatus.FAILED)]
        echo_error(
            f"refusing to undo: {plural(len(changed), 'file')} changed since the "
            "repair; nothing was restored (--skip-changed restores the others):"
        )
        for f in changed:
            click.echo(f"  {visible_name(f.message)}", err=True)
        sys.exit(int(ExitCode.ERROR))
    for f in result.files:
        if f.status in words:
            if not quiet:
                # a note of the lines appended since, kept; "already" says the rest
                keeps = f.status is not UndoStatus.ALREADY or f.message.startswith("keeping")
                note = f" ({f.message})" if f.message and keeps else ""
                click.echo(f"{words[f.status]} {visible_name(f.path)}{note}", err=True)
        else:
            echo_error(f.message)
    sys.exit(int(result.exit_code()))


commands: list[click.Command] = [undo_command]
