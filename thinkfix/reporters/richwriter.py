"""A laid-out text report drawn with rich: colour, and values wrapped or folded to the width.

Used for what `plainwriter` does not draw; it imports rich, so it is imported only then.
"""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel as RichPanel
from rich.table import Table as RichTable
from rich.text import Text

from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.console import report_console, report_table
from thinkfix.reporters.layout import Block, Document, Grid, Panel, Paragraph


def _grid(grid: Grid) -> RichTable:
    table = RichTable.grid(padding=(0, 2))
    for c in grid.columns:
        table.add_column(justify=c.justify, no_wrap=c.no_wrap, overflow=c.overflow, style=c.style)
    for cells, style in grid.rows:
        # Text() keeps data literal: no rich markup or emoji codes from file names or tags.
        table.add_row(*(Text(text, style=cell_style) for text, cell_style in cells), style=style)
    return table


def _renderable(block: Block) -> RenderableType:
    if isinstance(block, Paragraph):
        return Text(block.text, style=block.style)
    if isinstance(block, Grid):
        grid = _grid(block)
        return Padding(grid, (0, 0, 0, block.indent)) if block.indent else grid
    if isinstance(block, Panel):
        return RichPanel(
            _grid(block.grid), title=block.title, title_align="left", box=box.ROUNDED, expand=False
        )
    table = report_table(block.title, *block.columns)  # a layout.Table
    for row in block.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def draw(document: Document, options: RenderOptions) -> str:
    """The document as rich prints it into a buffer, exactly as `options` say."""
    console, buffer = report_console(options)
    for i, part in enumerate(document):
        if i:
            console.print()
        if len(part) == 1:
            console.print(_renderable(part[0]))
        else:
            console.print(Group(*(_renderable(block) for block in part)))
    return buffer.getvalue()
