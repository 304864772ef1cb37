"""A laid-out text report written with string operations, byte for byte as rich draws it.

Most text reports need nothing but columns: no colour, and every value fits its line. For
those, importing rich (~25 ms, the largest part of a pre-commit hook's `thinkfix scan`) buys
nothing. This writer draws exactly what `richwriter` draws for them (tests/reporters/
test_plainwriter.py checks it on generated reports) and raises `NotPlain` for anything
else: a value to wrap or fold, a character that is not printable ASCII (rich measures
those in terminal cells), a statistics table, or a line wider than the width. The caller
then hands the document to rich.
"""

from __future__ import annotations

import re
from itertools import pairwise

from thinkfix.reporters.layout import Block, Document, Grid, Panel, Paragraph

_WORD = r"\s*\S+\s*"  # rich's word: the word and the blanks after it (compiled where used)
#: Characters rich draws one cell wide, so a string of them is as wide as it is long
#: (tests/reporters/test_plainwriter.py checks each against rich): printable ASCII, Latin-1
#: and Latin Extended, general punctuation, arrows, the control pictures `visible_controls`
#: writes, box drawing and geometric shapes (Kimi's `◁think▷`) less two emoji-wide squares.
ONE_CELL = "\u0020-\u007e\u00a0-\u024f\u2000-\u206f\u2190-\u21ff\u2400-\u2426\u2500-\u25fc\u25ff"
#: Compiled where a text is not ASCII (re's cache keeps it): a class of 64K code points costs
#: ~2 M instructions, and most reports are ASCII (#26 item 3: start-up).
_ONE_CELL = f"[{ONE_CELL}]*"
_TITLE_PAD = " "


class NotPlain(Exception):
    """The document needs rich's layout."""


def _plain(text: str) -> str:
    """`text`, when it is one line of one-cell characters (printable excludes tab, newline and
    every other control character); else NotPlain."""
    if not text.isprintable() or not (text.isascii() or re.fullmatch(_ONE_CELL, text)):
        raise NotPlain
    return text


def _paragraph(text: str, width: int) -> list[str]:
    """`text` split into lines at the spaces where rich's word wrap splits it."""
    _plain(text)
    if len(text) <= width:  # every word fits: no break (and no regex to compile, #26 item 3)
        return [text]
    breaks: list[int] = []
    offset = 0
    for m in re.finditer(_WORD, text):
        word = m.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            raise NotPlain  # rich folds a word longer than a line
        elif offset and m.start():
            breaks.append(m.start())
            offset = len(word)
    bounds = [0, *breaks, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


def _grid(grid: Grid, width: int) -> list[str]:
    """The grid's rows, columns two spaces apart, at most `width` wide (else NotPlain)."""
    widths = [0] * len(grid.columns)
    for cells, _ in grid.rows:
        if len(cells) != len(widths):
            raise NotPlain
        for i, (text, _) in enumerate(cells):
            widths[i] = max(widths[i], len(_plain(text)))
    # rich gives a last column of empty cells one cell; every other column has its padding
    if sum(widths) + 2 * (len(widths) - 1) + (widths[-1] == 0) > width:
        raise NotPlain
    right = [c.justify == "right" for c in grid.columns]
    # rich strips a cell's trailing blanks before it aligns it (its width counts them)
    return [
        "  ".join(
            text.rstrip().rjust(w) if r else text.rstrip().ljust(w)
            for (text, _), w, r in zip(cells, widths, right)
        )
        for cells, _ in grid.rows
    ]


def _panel(panel: Panel, width: int) -> list[str]:
    """rich's `Panel(grid, title, title_align="left", box=ROUNDED, expand=False)`."""
    if not any(cells[-1][0] for cells, _ in panel.grid.rows):
        # rich sizes the panel by the grid's measure, which leaves out the one cell it then
        # gives an empty last column, so the grid wraps inside it
        raise NotPlain
    rows = _grid(panel.grid, width - 4)
    title = _TITLE_PAD + _plain(panel.title) + _TITLE_PAD
    inner = max(max((len(row) for row in rows), default=0) + 2, len(title) + 2)
    if inner + 2 > width or not rows:
        raise NotPlain
    top = "╭─" + title + "─" * (inner - 2 - len(title)) + "─╮"
    body = ["│ " + row.ljust(inner - 2) + " │" for row in rows]
    return [top, *body, "╰" + "─" * inner + "╯"]


def _block(block: Block, width: int) -> list[str]:
    if isinstance(block, Paragraph):
        return _paragraph(block.text, width)
    if isinstance(block, Grid):
        pad = " " * block.indent
        return [pad + row for row in _grid(block, width - block.indent)]
    if isinstance(block, Panel):
        return _panel(block, width)
    raise NotPlain  # a statistics table


def draw(document: Document, width: int) -> str:
    """The document as plain lines (trailing blanks stripped), or NotPlain."""
    lines: list[str] = []
    for i, part in enumerate(document):
        if i:
            lines.append("")
        for block in part:
            lines += _block(block, width)
    return "\n".join(line.rstrip() for line in lines) + "\n"
