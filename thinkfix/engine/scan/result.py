"""What one file's scan contributes to a report: a value that merges in any order."""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

from typing import TYPE_CHECKING

from thinkfix.engine.report import InputError, LeakFinding
from thinkfix.engine.scan.findings import TOO_MANY
from thinkfix.formats.records import TOO_LARGE
from thinkfix.io.errors import ErrorKind

if TYPE_CHECKING:  # annotations only: a scan that runs no check loads no health value
    from typing import NamedTuple

    from thinkfix.engine.report.health import HealthFinding
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

UNKNOWN_MODEL = ""  # the by_model key for messages whose model is not recorded


class ScannedFile(NamedTuple):
    """What one file contributed: counts, findings, errors; merged by `build_report`.

    A NamedTuple, not a frozen dataclass: every scan loads it, and a dataclass of this many
    fields costs ~1.5 ms of every start-up to define (#26 item 3)."""

    path: str
    format: str | None = None
    size: int = 0
    records: int = 0
    assistant_messages: int = 0
    leaking_messages: int = 0
    findings: tuple[LeakFinding, ...] = ()
    errors: tuple[InputError, ...] = ()
    by_model: tuple[tuple[str, int, int, int], ...] = ()  # (model, assistant, leaking, findings)
    skipped: str | None = None
    # (day, model, assistant, leaking, findings), when the options ask for days
    by_day: tuple[tuple[str, str, int, int, int], ...] = ()
    # `--check`: the file's health findings, and (with `size`) (type, records, bytes)
    health: "tuple[HealthFinding, ...]" = ()
    bytes_by_type: tuple[tuple[str, int, int], ...] = ()

    @property
    def read(self) -> bool:
        """The file was opened and read as a session (possibly with bad lines)."""
        return self.format is not None and self.skipped is None


def bad_kind(error: str) -> ErrorKind:
    """The error kind of a record that could not be used, from its error."""
    if error.startswith("unknown shape"):
        return ErrorKind.BAD_SHAPE
    if error.startswith(TOO_LARGE):
        return ErrorKind.TOO_LARGE
    if error.startswith(TOO_MANY):
        return ErrorKind.TOO_MANY_FINDINGS
    return ErrorKind.BAD_LINE
