"""A text report laid out as plain data: paragraphs, grids, a panel and tables.

The text reporters decide *what* to show once, here, and a writer decides *how*:
`plainwriter` with string operations (no colour, every value fits: what a pipe, a CI log or
a pre-commit hook gets, without importing rich), `richwriter` with rich (colour, wrapping,
folding, wide characters). Styles are rich style names; the plain writer ignores them.
Plain classes, not dataclasses: they are built on every scan's start-up path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

DEFAULT_WIDTH = 120  # for files and pipes; a terminal passes its own width

Justify = Literal["left", "right"]
#: What a cell too long for its column becomes when rich must shorten it.
Overflow = Literal["fold", "ellipsis"]


class Paragraph:
    """One text, wrapped at the width (at spaces; a word longer than a line is folded)."""

    __slots__ = ("style", "text")

    def __init__(self, text: str, style: str = "") -> None:
        self.text, self.style = text, style

    def __repr__(self) -> str:
        return f"Paragraph({self.text!r}, {self.style!r})"


class Column:
    """A grid column: how its cells align and what happens when they do not fit."""

    __slots__ = ("justify", "no_wrap", "overflow", "style")

    def __init__(
        self,
        justify: Justify = "left",
        *,
        no_wrap: bool = False,
        overflow: Overflow = "ellipsis",
        style: str = "",
    ) -> None:
        self.justify, self.no_wrap, self.overflow, self.style = justify, no_wrap, overflow, style


#: A cell: its text, and a style of its own ("" for none).
Cell = tuple[str, str]


class Grid:
    """Rows of cells in columns two spaces apart, no borders, indented by `indent`."""

    __slots__ = ("columns", "indent", "rows")

    def __init__(self, columns: Sequence[Column], indent: int = 2) -> None:
        self.columns = tuple(columns)
        self.indent = indent
        #: (cells, row style)
        self.rows: list[tuple[tuple[Cell, ...], str]] = []

    def add_row(self, *cells: Cell, style: str = "") -> None:
        self.rows.append((cells, style))

    def __repr__(self) -> str:
        columns = [(c.justify, c.no_wrap) for c in self.columns]
        return f"Grid({columns}, indent={self.indent}, rows={self.rows})"


class Panel:
    """A grid in a rounded box with a title on its top edge, as wide as it needs."""

    __slots__ = ("grid", "title")

    def __init__(self, grid: Grid, title: str) -> None:
        self.grid, self.title = grid, title

    def __repr__(self) -> str:
        return f"Panel({self.grid!r}, {self.title!r})"


class Table:
    """A titled table with a header rule (the statistics): drawn by rich only."""

    __slots__ = ("columns", "rows", "title")

    def __init__(self, title: str, columns: Sequence[tuple[str, Justify]]) -> None:
        self.title, self.columns = title, tuple(columns)
        self.rows: list[tuple[str, ...]] = []

    def add_row(self, *cells: str) -> None:
        self.rows.append(cells)


Block = Paragraph | Grid | Panel | Table
#: A document: parts with a blank line between them, each a run of blocks.
Document = list[list[Block]]
