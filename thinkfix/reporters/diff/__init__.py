"""The auditor's diff report: one module per output format behind `base.DiffRenderer`.

Renderers are imported on first use (PEP 562 `__getattr__` for the classes), so a repair
that writes no report imports none of them, nor the rich the text renderer uses.
"""

from __future__ import annotations

from thinkfix.reporters.base import LazyTable, by_name
from thinkfix.reporters.diff.base import DiffFormat, DiffRenderer

# Explicit, so a format cannot exist without a renderer: a test checks every member is here.
# Named, not imported: a repair that writes no report imports no renderer (nor rich).
RENDERERS: LazyTable[DiffFormat, DiffRenderer] = LazyTable(
    __name__,
    {
        DiffFormat.TEXT: ("text", "TextDiffRenderer"),
        DiffFormat.MARKDOWN: ("markdown", "MarkdownDiffRenderer"),
        DiffFormat.HTML: ("html", "HtmlDiffRenderer"),
        DiffFormat.JSON: ("json", "JsonDiffRenderer"),
    },
)


def get_renderer(name: str | DiffFormat) -> DiffRenderer:
    """The renderer for a format name; ValueError naming the choices otherwise."""
    return by_name(RENDERERS, DiffFormat, name, "diff format")
