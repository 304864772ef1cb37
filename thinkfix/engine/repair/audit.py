"""The auditor's view of a repair: each changed message before and after, with totals.

`DiffReport` is a plain value built from a `RepairResult` (`build`); redaction
(`engine.redact`) and the renderers of `thinkfix.reporters.diff` take it from there,
so every output shows the same facts in the same order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from thinkfix._serialize import Plain, record
from thinkfix._version import __version__
from thinkfix.engine.ledger.change import Change
from thinkfix.engine.repair.model import FileResult, FileStatus, RepairResult
from thinkfix.engine.report import (
    MESSAGE_PLACE_KEYS,
    ExitCode,
    InputError,
    SkippedFile,
    document_head,
)


@dataclass(frozen=True, order=True)
class MessageDiff:
    """One assistant text that the repair changes (or refused to change)."""

    path: str
    line: int
    json_path: str
    format: str
    session_id: str | None
    message_id: str | None
    message_index: int
    model: str | None
    kinds: tuple[str, ...]
    before: str
    after: str
    extracted: tuple[str, ...]  # the reasoning taken out of the text, in order
    placement: str  # a PlacementKind value
    where: str  # where the reasoning went, in words
    applied: bool = True
    reason: str | None = None  # why it was not applied
    mirrors: tuple[str, ...] = ()  # other copies of the text fixed with it (codex events)
    # `before` cut into labelled pieces (visible, thinking, delimiter, trimmed, duplicate),
    # so a renderer can mark exactly what left the visible text.
    segments: tuple[tuple[str, str], ...] = ()
    # Sizes of the unredacted texts, so counts survive redaction. None: measure the texts.
    removed: int | None = None
    extracted_sizes: tuple[int, ...] | None = None

    @property
    def removed_chars(self) -> int:
        """Characters that left the visible text."""
        return len(self.before) - len(self.after) if self.removed is None else self.removed

    @property
    def sizes(self) -> tuple[int, ...]:
        """The length of each extracted segment before any redaction."""
        if self.extracted_sizes is None:
            return tuple(len(t) for t in self.extracted)
        return self.extracted_sizes

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return record(
            self,
            _MESSAGE_KEYS,
            placement={"kind": self.placement, "where": self.where, "mirrors": list(self.mirrors)},
            extracted_chars=list(self.sizes),
            segments=[{"label": label, "text": text} for label, text in self.segments],
        )


#: A changed message's JSON keys, in the schema's order.
_MESSAGE_KEYS = (
    *MESSAGE_PLACE_KEYS,
    "kinds",
    "applied",
    "reason",
    "placement",
    "removed_chars",
    "before",
    "after",
    "extracted",
    "extracted_chars",
    "segments",
)


@dataclass(frozen=True, order=True)
class FileDiff:
    """One file's line in the summary table."""

    path: str
    format: str | None
    status: str  # a FileStatus value
    messages: int = 0  # messages changed
    refused: int = 0  # messages with a leak the format could not safely change
    removed_chars: int = 0
    records_changed: int = 0
    records_inserted: int = 0
    output: str | None = None
    by_kind: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return record(self, by_kind=dict(self.by_kind))  # in the order the kinds were counted


@dataclass(frozen=True, order=True)
class FixDiff:
    """One problem `--fix` repaired (or would): where, which fix, what it did, and what it
    took out of the file (reasoning, unreadable bytes), kept as the manifest keeps it."""

    path: str
    line: int
    fix: str
    problem: str
    detail: str
    dropped: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return record(self)


@dataclass(frozen=True)
class Totals(Plain):
    files: int = 0
    files_changed: int = 0
    messages: int = 0
    refused: int = 0
    removed_chars: int = 0
    extracted_segments: int = 0
    extracted_chars: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    by_placement: dict[str, int] = field(default_factory=dict)
    by_format: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class DiffReport:
    """Every changed message of a run, per-file rows, errors, and how it was produced."""

    messages: tuple[MessageDiff, ...] = ()
    files: tuple[FileDiff, ...] = ()
    errors: tuple[InputError, ...] = ()
    mode: str = "diff"  # the WriteMode value of the run it describes
    written: bool = False  # the changes were written (repair --report), not just planned
    redaction: str = "none"
    unified_diff: str = ""
    tool_version: str = __version__
    manifest: str | None = None
    fixes: tuple[FixDiff, ...] = ()  # what `--fix` repaired, beside the messages
    skipped: tuple[SkippedFile, ...] = ()  # found in a folder and not read, as scan's report

    @property
    def applied(self) -> tuple[MessageDiff, ...]:
        return tuple(m for m in self.messages if m.applied)

    @property
    def fixed_paths(self) -> set[str]:
        """The files `--fix` changes (or would)."""
        return {f.path for f in self.fixes}

    @property
    def totals(self) -> Totals:
        applied = self.applied
        return Totals(
            files=len(self.files),
            files_changed=len({f.path for f in self.files if f.messages} | self.fixed_paths),
            messages=len(applied),
            refused=len(self.messages) - len(applied),
            removed_chars=sum(m.removed_chars for m in applied),
            extracted_segments=sum(len(m.extracted) for m in applied),
            extracted_chars=sum(n for m in applied for n in m.sizes),
            by_kind=dict(Counter(k for m in applied for k in m.kinds)),
            by_placement=dict(Counter(m.placement for m in applied)),
            by_format=dict(Counter(m.format for m in applied)),
        )

    def exit_code(self, *, exit_zero: bool = False) -> ExitCode:
        """The scan contract: 2 on errors, 1 when something would change (a message or a
        fix), else 0."""
        changes = bool(self.applied or self.fixes)
        return ExitCode.of(errors=bool(self.errors), findings=changes and not exit_zero)

    def to_dict(self) -> dict[str, Any]:
        out = {**document_head(self.tool_version), **record(self, _REPORT_KEYS)}
        if self.fixes:  # a run without --fix keeps the schema it always had
            out["fixes"] = [f.to_dict() for f in self.fixes]
        if self.skipped:  # likewise a run that skipped nothing
            out["skipped"] = [s.to_dict() for s in self.skipped]
        return out


#: The diff report's JSON keys after its head, in the schema's order.
_REPORT_KEYS = ("mode", "written", "redaction", "manifest", "totals", "files", "messages", "errors")


def _segments(change: Change) -> tuple[tuple[str, str], ...]:
    text = change.before
    out: list[tuple[str, str]] = []
    for start, end, label in change.spans:
        if out and out[-1][0] == label:
            out[-1] = (label, out[-1][1] + text[start:end])
        else:
            out.append((label, text[start:end]))
    return tuple(out)


def message_diff(path: str, fmt: str, change: Change) -> MessageDiff:
    site, p = change.site, change.placement
    return MessageDiff(
        path=path,
        line=site.line,
        json_path=site.json_path,
        format=fmt,
        session_id=site.session_id,
        message_id=site.message_id,
        message_index=site.message_index,
        model=site.model,
        kinds=change.kinds,
        before=change.before,
        after=change.after if p.applied else change.before,
        extracted=change.extracted if p.applied else (),
        placement=p.kind.value,
        where=p.where,
        applied=p.applied,
        reason=p.reason,
        mirrors=p.mirrors,
        segments=_segments(change),
        removed=len(change.before) - len(change.after) if p.applied else 0,
        extracted_sizes=tuple(len(t) for t in change.extracted) if p.applied else (),
    )


def file_diff(result: FileResult) -> FileDiff:
    applied = [c for c in result.changes if c.applied]
    kinds = Counter(k for c in applied for k in c.kinds)
    return FileDiff(
        path=result.path,
        format=result.format,
        status=result.status.value,
        messages=len(applied),
        refused=len(result.changes) - len(applied),
        removed_chars=sum(len(c.before) - len(c.after) for c in applied),
        records_changed=result.records_changed if applied else 0,
        records_inserted=result.records_inserted,
        output=result.output,
        by_kind=tuple(sorted(kinds.items())),
    )


def build(result: RepairResult) -> DiffReport:
    """The diff report of a repair run (read-only or written)."""
    messages = sorted(
        message_diff(f.path, f.format or "", c) for f in result.files for c in f.changes
    )
    fixes = sorted(
        FixDiff(f.path, x.line, x.fix.value, x.problem, x.detail, x.dropped)
        for f in result.files
        for x in f.fixes
    )
    return DiffReport(
        fixes=tuple(fixes),
        messages=tuple(messages),
        files=tuple(sorted(file_diff(f) for f in result.files)),
        errors=result.all_errors,
        mode=result.mode.value,
        written=result.mode.writes and any(f.status is FileStatus.REPAIRED for f in result.files),
        unified_diff="".join(f.unified_diff for f in result.files),
        manifest=result.manifest_path,
        skipped=result.skipped,
    )
