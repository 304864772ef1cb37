"""The `Report` value: what a scan found, independent of how it is shown, and its exit code.

What `scan --check` found is its own module (`report.health`), loaded only when a check ran
(#26 item 3: start-up); the checks a scan may be asked for are `report.checks`."""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

from dataclasses import field, fields
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from thinkfix._serialize import frozen, plain, record
from thinkfix.io.errors import ErrorKind
from thinkfix.normalizer.kinds import LeakKind

if TYPE_CHECKING:  # annotations only: a scan that ran no check loads no health value
    from typing import NamedTuple

    from thinkfix.engine.report.health import HealthFinding, HealthSection
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

SCHEMA_VERSION = 1


class ExitCode(IntEnum):
    """The command contract of DESIGN.md."""

    CLEAN = 0
    FINDINGS = 1
    ERROR = 2

    @classmethod
    def of(cls, *, errors: bool, findings: bool) -> "ExitCode":
        """The contract's order: an error outranks a finding; neither is clean."""
        if errors:
            return cls.ERROR
        return cls.FINDINGS if findings else cls.CLEAN


def document_head(tool_version: str) -> dict[str, Any]:
    """The keys every report document starts with: its schema, and the tool that wrote it."""
    return {"schema_version": SCHEMA_VERSION, "tool": {"name": "thinkfix", "version": tool_version}}


# LeakFinding, InputError, MessageCounts, SkippedFile and StaleEntry are NamedTuples, not
# frozen dataclasses: every scan loads this module, and a dataclass costs ~1 ms of every
# start-up to define (6-10 generated methods compiled; #26 item 3). They are built and read,
# never changed in place, and sort as their fields' tuples (as order=True did). A kind read
# back as text (the state file) becomes its enum where it is read (telemetry/state.py).


class LeakFinding(NamedTuple):
    """One leak in one stored message, located well enough to find it again.

    A kind this version does not know (a newer tool's state) stays text, and reports still
    list it."""

    path: str
    line: int  # 1-based line of the record (1 for a whole-document JSON file)
    json_path: str  # e.g. message.content[1].text
    format: str
    kind: LeakKind
    tag: str
    start: int  # offsets into the stored text
    end: int
    leaked_chars: int
    session_id: str | None = None
    message_id: str | None = None
    message_index: int = 0  # position of the message in its session, for baselines without ids
    model: str | None = None
    fingerprint: str = ""  # baseline identity: format + session + message + hash of leaked text
    baselined: bool = False
    snippet: str = ""  # the leaked text (possibly redacted), for humans
    # Why `thinkfix repair` leaves this message as it is (all reasoning, nothing else to
    # show: an empty text would break the session), or None. A scan still counts the leak.
    refused: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return record(self, _FINDING_KEYS, omit_none=("refused",))


#: Where a message is, as every report that names one writes it (a finding, a changed message).
MESSAGE_PLACE_KEYS = (
    "path",
    "line",
    "json_path",
    "format",
    "session_id",
    "message_id",
    "message_index",
    "model",
)
#: A finding's JSON keys, in the schema's order (where it is, what it is, what it leaked).
_FINDING_KEYS = (
    *MESSAGE_PLACE_KEYS,
    "kind",
    "tag",
    "start",
    "end",
    "leaked_chars",
    "fingerprint",
    "baselined",
    "snippet",
    "refused",
)


class InputError(NamedTuple):
    """A file or line that could not be read; never counted as clean."""

    path: str
    line: int | None
    kind: ErrorKind
    message: str

    def to_dict(self) -> dict[str, Any]:
        return record(self)


class MessageCounts(NamedTuple):
    """Assistant messages seen and how many leaked, for one breakdown key."""

    assistant_messages: int = 0
    leaking_messages: int = 0
    findings: int = 0
    format: str | None = None  # set in by_file only

    def to_dict(self) -> dict[str, Any]:
        return record(self, omit_none=("format",))


@frozen
class Summary:
    """A scan's totals, and its message counts by kind, format, model, file and day."""

    files: int = 0
    records: int = 0
    assistant_messages: int = 0
    leaking_messages: int = 0
    findings: int = 0
    leaked_chars: int = 0
    baselined: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    by_format: dict[str, MessageCounts] = field(default_factory=dict)
    by_model: dict[str, MessageCounts] = field(default_factory=dict)
    by_file: dict[str, MessageCounts] = field(default_factory=dict)
    # day (UTC, YYYY-MM-DD) -> model -> counts: the trend, when the scan was asked for days
    by_day: dict[str, dict[str, MessageCounts]] = field(default_factory=dict)
    # format -> model -> counts: the metrics' labels (engine/telemetry/metrics.py); not in the JSON
    # report, whose by_format and by_model already sum to the same totals
    by_format_and_model: dict[str, dict[str, MessageCounts]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return record(
            self,
            [n for n in _SUMMARY_KEYS if n != "by_format_and_model"],
            by_day={day: _day_dict(models) for day, models in sorted(self.by_day.items())},
        )


_SUMMARY_KEYS = tuple(f.name for f in fields(Summary))


def _day_dict(models: dict[str, MessageCounts]) -> dict[str, Any]:
    """One day of the trend: its totals, then the same counts per model."""
    total = MessageCounts(
        sum(c.assistant_messages for c in models.values()),
        sum(c.leaking_messages for c in models.values()),
        sum(c.findings for c in models.values()),
    )
    return {**total.to_dict(), "by_model": plain(models)}


class SkippedFile(NamedTuple):
    """A file found by walking a folder but not scanned, and why (not a session, empty, opted out).

    Not an error: folders hold other JSON. A file named on the command line that no
    format claims is an error instead.
    """

    path: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return record(self)


class StaleEntry(NamedTuple):
    """A baseline entry that no longer matches any finding."""

    fingerprint: str
    path: str

    def to_dict(self) -> dict[str, Any]:
        return record(self)


@frozen
class Report:
    """Everything a scan found, sorted so it is the same whatever order files ran in."""

    summary: Summary
    findings: tuple[LeakFinding, ...] = ()
    errors: tuple[InputError, ...] = ()
    stale_baseline: tuple[StaleEntry, ...] = ()
    tool_version: str = ""
    skipped: tuple[SkippedFile, ...] = ()
    #: The folder relative paths are relative to (the working folder of the scan), when known.
    root: str | None = None
    #: `scan --check`'s findings; None when no check was asked for (then no output shows it).
    health: "HealthSection | None" = None

    @property
    def new_findings(self) -> tuple[LeakFinding, ...]:
        """Findings not covered by a baseline: the ones that fail a run."""
        return tuple(f for f in self.findings if not f.baselined)

    @property
    def new_health(self) -> "tuple[HealthFinding, ...]":
        """Health findings not covered by a baseline: they fail a run as a leak does."""
        return tuple(f for f in self.health.findings if not f.baselined) if self.health else ()

    def exit_code(self, *, exit_zero: bool = False) -> ExitCode:
        # A bad line is part of a file that was not fully read: never call that clean.
        return ExitCode.of(
            errors=bool(self.errors),
            findings=bool(self.new_findings or self.new_health) and not exit_zero,
        )

    def to_dict(self) -> dict[str, Any]:
        # `skipped` is always there (empty when none): a reader must not take a missing key
        # for "none".
        doc = {
            **document_head(self.tool_version),
            **record(self, ("summary", "findings", "errors", "stale_baseline", "skipped")),
        }
        if self.health is not None:
            doc["health"] = self.health.to_dict()
        return doc
