"""Why a file or a line could not be read or written: one vocabulary for every output."""

from __future__ import annotations

from enum import Enum


class ErrorKind(str, Enum):
    """Why a file or line could not be read (or written); shown and serialized as its value."""

    def __str__(self) -> str:  # `f"{kind}"` is `unreadable` on every Python, as in the JSON
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    UNREADABLE = "unreadable"  # the file could not be opened or decompressed
    UNKNOWN_FORMAT = "unknown_format"  # no format claims the file
    BAD_LINE = (
        "bad_line"  # a line that is not JSON, not UTF-8, or truncated: copied through untouched
    )
    BAD_SHAPE = "bad_shape"  # valid JSON of a shape the format does not know
    CHANGED = "changed"  # the file changed while it was being repaired
    WRITE_FAILED = "write_failed"
    NO_SESSIONS = "no_sessions"  # the paths held no file any format claims: nothing was checked
    LINKED = "linked"  # a hard-linked file, or a symlink out of the named paths: not rewritten
    INTERNAL = "internal_error"  # a bug met on this file: reported, the run goes on
    # One message held more findings than `--max-findings`: the first ones are reported, the
    # rest of its text was not examined (a hostile record must not stall a run).
    TOO_MANY_FINDINGS = "too_many_findings"
    # A record longer than `--max-record-size` (or a decompressed stream past it): reported,
    # copied through untouched, never held in memory whole.
    TOO_LARGE = "too_large"
