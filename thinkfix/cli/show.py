"""`thinkfix show SESSION`: a session as a transcript, thinking collapsed by default."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click
from rich.console import Console, RenderableType

from thinkfix.cli.options import (
    color_option,
    fail,
    policy_options,
    pop_policy,
    quiet_option,
    wants_color,
)
from thinkfix.cli.settings import RedactCommand
from thinkfix.engine.controls import visible_name
from thinkfix.engine.scan.transcript import TranscriptError, load
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.settings.values import ConfigError, parse_size
from thinkfix.formats import registry
from thinkfix.reporters.controls import visible_strings
from thinkfix.reporters.transcript import delimited, terminal
from thinkfix.reporters.transcript.redact import redact_transcript
from thinkfix.reporters.transcript.view import ThinkingView

#: Width of delimited output when neither --width nor a terminal says otherwise.
PLAIN_WIDTH = 100


def _is_terminal() -> bool:
    return sys.stdout.isatty()


def _paged(console: Console, pager: bool, lines: int) -> bool:
    """Page only on a terminal, and only what does not fit on one screen."""
    return pager and _is_terminal() and lines > console.height


def _print(console: Console, items: Sequence[RenderableType], pager: bool) -> None:
    with console.capture() as capture:
        for item in items:
            console.print(item)
    if not _paged(console, pager, capture.get().count("\n")):
        for item in items:
            console.print(item)
        return
    os.environ.setdefault("LESS", "-R")  # less shows rich's colours instead of escape codes
    with console.pager(styles=True):
        for item in items:
            console.print(item)


def _print_plain(console: Console, text: str, pager: bool) -> None:
    if not _paged(console, pager, text.count("\n")):
        click.echo(text, nl=False)
        return
    with console.pager():
        console.out(text, end="", highlight=False)


@click.command("show", cls=RedactCommand)
@click.argument("session", type=click.Path(dir_okay=True, allow_dash=False))
@click.option(
    "--format",
    "format_name",
    type=click.Choice(["auto", *registry.names()]),
    default="auto",
    help="Session format (default: detect it).",
)
@click.option(
    "--thinking",
    type=click.Choice([v.value for v in ThinkingView]),
    default=ThinkingView.COLLAPSED.value,
    show_default=True,
    help="How to show thinking; 'delimited' prints plain text with thinking between "
    "the \\n\\n---\\n and \\n---\\n\\n delimiters of OpenAI/Anthropic-compatible "
    "front ends.",
)
@click.option(
    "--normalized",
    is_flag=True,
    help="Show the session as repair would leave it: leaked reasoning appears as "
    "thinking, marked as recovered.",
)
@click.option("--no-pager", is_flag=True, help="Never page, even on a terminal.")
@click.option(
    "--width",
    type=click.IntRange(min=20),
    default=None,
    metavar="N",
    help="Line width (default: the terminal's).",
)
@click.option(
    "--redact",
    default=None,
    type=click.Choice([r.value for r in Redaction]),
    help="secrets (the default): mask likely credentials; all: show only lengths "
    "and hashes of session text; none: show it as stored.",
)
@click.option(
    "--max-record-size",
    default="64MB",
    show_default=True,
    metavar="SIZE",
    help="Records longer than this (0: no limit) are left out as too large, "
    "never read into memory.",
)
@color_option
@quiet_option
@policy_options
def show_command(
    session: str,
    format_name: str,
    thinking: str,
    normalized: bool,
    no_pager: bool,
    width: int | None,
    quiet: bool,
    redact: str | None,
    max_record_size: str,
    color_setting: bool | None,
    **flags: Any,
) -> None:
    """Show a session file as a transcript: turns, tool calls, and thinking.

    Exit 0 when the session was shown, 2 when it cannot be read or is in no known
    format. Lines that cannot be read are left out and named on stderr.
    """
    policy = pop_policy(flags)
    try:
        limit = parse_size(max_record_size, "--max-record-size")
        transcript = load(
            session,
            None if format_name == "auto" else format_name,
            normalized=normalized,
            policy=policy,
            max_record_size=limit,
        )
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--max-record-size") from None
    except TranscriptError as exc:
        fail(str(exc))
        return
    transcript = redact_transcript(transcript, Redaction.from_flag(redact))
    transcript = visible_strings(transcript)  # session text never drives the terminal
    for problem in transcript.problems:
        click.echo(f"thinkfix show: {visible_name(session)}: {problem} (left out)", err=True)
    if not transcript.turns:
        if not quiet:
            click.echo(f"thinkfix show: {visible_name(session)}: no turns to show", err=True)
        return
    view = ThinkingView(thinking)
    console = Console(
        width=width,
        highlight=False,
        color_system="auto" if wants_color(color_setting, sys.stdout) else None,
        force_terminal=True if color_setting else None,
    )
    if view is ThinkingView.DELIMITED:
        text = delimited.render(
            transcript, width or (console.width if console.is_terminal else PLAIN_WIDTH)
        )
        _print_plain(console, text, not no_pager)
    else:
        items = list(terminal.renderables(transcript, view, console.width))
        _print(console, items, not no_pager)


commands: list[click.Command] = [show_command]
