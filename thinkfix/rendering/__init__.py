"""Pure text renderings of a transcript, with no I/O (the `show` command prints them)."""

from thinkfix.rendering.delimited import (
    CLOSE,
    OPEN,
    DelimitedRenderer,
    Item,
    Kind,
    close,
    render_delimited,
    step,
)

__all__ = [
    "CLOSE",
    "OPEN",
    "DelimitedRenderer",
    "Item",
    "Kind",
    "close",
    "render_delimited",
    "step",
]
