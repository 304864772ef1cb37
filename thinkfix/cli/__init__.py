"""The thin command layer: parse flags, call the library, pick a reporter, exit."""

from __future__ import annotations

import sys
import traceback
from typing import Any

import click

from thinkfix import __version__
from thinkfix.cli import formats, normalize, repair, replay, scan, show, where
from thinkfix.engine.report import ExitCode


def _carry_lone_surrogates() -> None:
    """Text written to the terminal shows a lone surrogate (valid in JSON session text) as its
    `\\udXXX` escape instead of crashing on it; bytes written by reporters are already safe."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream that cannot change its error handler
                pass


class _Main(click.Group):
    """The command group, where a crash exits 2 (an error), never 1 (which means findings).

    Exit 1 is the CI signal for "leaks found", so a bug must not be mistaken for one,
    even under `--exit-zero`: the traceback goes to stderr and the exit code is 2.
    """

    def invoke(self, ctx: click.Context) -> Any:
        _carry_lone_surrogates()
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort,
                SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - the contract's last line of defence
            traceback.print_exc(file=sys.stderr)
            click.echo(f"error: internal error: {type(exc).__name__}: {exc} (please report "
                       "it with the traceback above)", err=True)
            ctx.exit(int(ExitCode.ERROR))


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="thinkfix")
def main() -> None:
    """Find, count and repair reasoning that leaked into stored LLM agent sessions."""


for _module in (scan, repair, normalize, replay, show, formats, where):
    for _command in _module.commands:
        main.add_command(_command)
