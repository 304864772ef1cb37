"""Session-file formats: detect, read, locate assistant text, apply repairs, write.

`registry.FORMATS` lists them; `base` holds the interface and its values.
"""

from thinkfix.formats.base import (
    ApplyOptions,
    ClaudeCodeMode,
    Placement,
    PlacementKind,
    Record,
    Repair,
    SessionFormat,
    Site,
)
from thinkfix.formats.registry import FORMATS, UnknownFormatError, detect, get

__all__ = [
    "FORMATS",
    "ApplyOptions",
    "ClaudeCodeMode",
    "Placement",
    "PlacementKind",
    "Record",
    "Repair",
    "SessionFormat",
    "Site",
    "UnknownFormatError",
    "detect",
    "get",
]
