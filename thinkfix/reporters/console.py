"""The terminal drawing the text reports share (scan's and diff's): one console setup and
one table style, so both read alike and neither depends on the terminal it runs in."""

from __future__ import annotations

from io import StringIO

from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table

from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.layout import DEFAULT_WIDTH


def report_console(options: RenderOptions) -> tuple[Console, StringIO]:
    """A console that draws into a buffer, exactly as `options` say."""
    # Every setting rich would otherwise take from the terminal or the environment (COLUMNS,
    # NO_COLOR, FORCE_COLOR, TERM) is fixed here, so the output depends on the report alone.
    buffer = StringIO()
    console = Console(
        file=buffer,
        width=options.width or DEFAULT_WIDTH,
        height=25,
        force_terminal=options.color,
        force_jupyter=False,
        force_interactive=False,
        no_color=not options.color,
        color_system="standard" if options.color else None,
        legacy_windows=False,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=False,
        tab_size=8,
    )
    return console, buffer


def report_table(title: str, *columns: tuple[str, JustifyMethod]) -> Table:
    """The reports' one table style: a plain header rule, columns that fold, never clip."""
    table = Table(
        title=title,
        title_justify="left",
        title_style="bold",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        header_style="bold",
        pad_edge=False,
    )
    for heading, justify in columns:
        # fold, never an ellipsis: a report written to a file must keep every path whole.
        table.add_column(heading, justify=justify, overflow="fold")
    return table
