"""The auditor's diff report: one module per output format behind `base.DiffRenderer`."""

from __future__ import annotations

from thinkfix.reporters.base import by_name
from thinkfix.reporters.diff.base import DiffFormat, DiffRenderer
from thinkfix.reporters.diff.html import HtmlDiffRenderer
from thinkfix.reporters.diff.json import JsonDiffRenderer
from thinkfix.reporters.diff.markdown import MarkdownDiffRenderer
from thinkfix.reporters.diff.text import TextDiffRenderer

# Explicit, so a format cannot exist without a renderer: a test checks every member is here.
RENDERERS: dict[DiffFormat, DiffRenderer] = {
    DiffFormat.TEXT: TextDiffRenderer(),
    DiffFormat.MARKDOWN: MarkdownDiffRenderer(),
    DiffFormat.HTML: HtmlDiffRenderer(),
    DiffFormat.JSON: JsonDiffRenderer(),
}


def get_renderer(name: str | DiffFormat) -> DiffRenderer:
    """The renderer for a format name; ValueError naming the choices otherwise."""
    return by_name(RENDERERS, DiffFormat, name, "diff format")


__all__ = [
    "RENDERERS",
    "DiffFormat",
    "DiffRenderer",
    "HtmlDiffRenderer",
    "JsonDiffRenderer",
    "MarkdownDiffRenderer",
    "TextDiffRenderer",
    "get_renderer",
]
