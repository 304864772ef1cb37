"""The values a repair run trades in: its mode and options, and what became of each file.

Kept apart from the work (planning, writing, the driver) so every repair module,
and the CLI and reporters, can name them without importing the machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from thinkfix.engine.health.fixes.model import Fix, Fixed
from thinkfix.engine.inputs.files import Candidate, InputFile
from thinkfix.engine.ledger.change import Change
from thinkfix.engine.report import ExitCode, InputError, SkippedFile
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.report import error_key
from thinkfix.engine.scan.result import bad_kind
from thinkfix.formats.repairs import ApplyOptions
from thinkfix.io.errors import ErrorKind


class WriteMode(str, Enum):
    """What a repair run does with what it finds (built from the CLI flags in one place)."""

    CHECK = "check"  # exit 1 if anything would change; write nothing
    DIFF = "diff"  # a unified diff of the changed lines; write nothing
    DRY_RUN = "dry-run"  # say what would change; write nothing
    OUT = "out"  # write repaired copies under another folder; inputs untouched
    IN_PLACE = "in-place"  # replace the inputs, with a backup and an undo manifest

    @property
    def writes(self) -> bool:
        return self in (WriteMode.OUT, WriteMode.IN_PLACE)

    @classmethod
    def from_flags(
        cls,
        *,
        check: bool = False,
        diff: bool = False,
        dry_run: bool = False,
        in_place: bool = False,
        out: str | None = None,
    ) -> WriteMode:
        """The mode the flags ask for; ValueError when they ask for none or for two writes.

        A read-only flag wins over a write target, so `--in-place --dry-run`
        previews an in-place run (as `black --check` does).
        """
        if in_place and out:
            raise ValueError("--in-place and --out exclude each other")
        if diff:
            return cls.DIFF
        if check:
            return cls.CHECK
        if dry_run:
            return cls.DRY_RUN
        if in_place:
            return cls.IN_PLACE
        if out:
            return cls.OUT
        raise ValueError(
            "say where repaired files go: --out DIR or --in-place "
            "(or preview with --check, --diff or --dry-run)"
        )


@dataclass(frozen=True)
class RepairOptions:
    """Everything a repair run needs besides the paths."""

    mode: WriteMode = WriteMode.DRY_RUN
    # What counts as a leak: policy, kinds, inputs, opt-outs; the same value scan uses,
    # so a repaired tree scans clean under the same configuration.
    scan: ScanOptions = field(default_factory=ScanOptions)
    apply: ApplyOptions = field(default_factory=ApplyOptions)
    out_dir: str | None = None
    backup: bool = True
    run_dir: str | None = None  # where the manifest and backups go (default: see manifest)
    manifest_path: str | None = None
    jobs: int = 1
    unified_diff: bool = False  # build the unified diff text (WriteMode.DIFF sets it)
    keep_texts: bool = True  # carry before/after texts for the diff report
    # --in-place leaves alone a file modified less than this many seconds ago: a live agent
    # may be about to append (the CLI's default is ACTIVE_SECONDS; --include-active sets 0).
    active_seconds: float = 0.0
    # --in-place rewrites a symlink's target outside the named paths only when asked.
    follow_links: bool = False
    # --dask: the scheduler whose workers repair the files (engine/parallel/dask.py).
    dask: str | None = None
    # --fix: the health fixes to make beside the reasoning repair (engine/repair/fixes.py).
    fixes: frozenset[Fix] = frozenset()


#: The CLI's default quiet time before a session file is rewritten in place.
ACTIVE_SECONDS = 5.0


class FileStatus(str, Enum):
    """What happened to one input file."""

    CLEAN = "clean"  # nothing to repair
    WOULD_CHANGE = "would-change"  # a read-only mode found repairs
    REPAIRED = "repaired"  # written (in place or under --out)
    COPIED = "copied"  # --out: nothing to repair, copied as it is
    SKIPPED = "skipped"  # changed on disk while being repaired; left as it is
    FAILED = "failed"  # verification or the write failed; left as it is
    ERROR = "error"  # could not be read or has no known format


@dataclass(frozen=True)
class FileResult:
    """The outcome for one file: a mergeable value, so files can run anywhere in any order."""

    path: str
    format: str | None
    status: FileStatus
    changes: tuple[Change, ...] = ()
    errors: tuple[InputError, ...] = ()
    records: int = 0
    records_changed: int = 0
    records_inserted: int = 0
    output: str | None = None
    unified_diff: str = ""
    manifest_entries: tuple[dict[str, Any], ...] = ()
    skipped_reason: str | None = None  # not a session file (walked folders only)
    fixes: tuple[Fixed, ...] = ()  # what `--fix` repaired (or would)

    @property
    def changed(self) -> bool:
        return bool(self.fixes) or any(c.applied for c in self.changes)


@dataclass(frozen=True)
class RepairResult:
    """A whole run, sorted by path."""

    mode: WriteMode
    files: tuple[FileResult, ...]
    manifest_path: str | None = None
    backup_dir: str | None = None
    errors: tuple[InputError, ...] = ()  # run-level errors (the manifest could not be written)
    # found in a folder and not read (not a session, empty, not a regular file): as scan's
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def all_errors(self) -> tuple[InputError, ...]:
        # scan's order: a file's own error (no line) and its bad lines sort together
        return tuple(
            sorted(self.errors + tuple(e for f in self.files for e in f.errors), key=error_key)
        )

    @property
    def changed_files(self) -> tuple[FileResult, ...]:
        return tuple(
            f
            for f in self.files
            if f.changed and f.status in (FileStatus.REPAIRED, FileStatus.WOULD_CHANGE)
        )

    @property
    def changes(self) -> tuple[Change, ...]:
        return tuple(c for f in self.files for c in f.changes)

    @property
    def remaining(self) -> tuple[Change, ...]:
        """The leaks still in the sessions after this run, as `scan` would find them: those
        refused, those in a file left as it was (changed on disk, or its write failed), and,
        when the run writes nothing, every one."""
        return tuple(
            c
            for f in self.files
            for c in f.changes
            if not c.applied or not self.mode.writes or f.status is not FileStatus.REPAIRED
        )

    def exit_code(self, *, fail_on_change: bool = False) -> ExitCode:
        """2 on any error; 1 when something changed (or would) and that should fail; else 0.
        The command's own code adds the leaks that remain (`commands.repair.Request.exit_code`)."""
        if self.all_errors:
            return ExitCode.ERROR
        if (fail_on_change or self.mode is WriteMode.CHECK) and self.changed_files:
            return ExitCode.FINDINGS
        return ExitCode.CLEAN


@dataclass(frozen=True)
class Replaced:
    """A file a run that stopped early had already replaced (or written, --out), as its
    manifest records it: what a finished run would have said of it."""

    path: str
    output: str | None  # --out: the copy written
    messages: int  # repaired
    fixes: int  # made by --fix
    refused: tuple[tuple[int, str, str], ...] = ()  # (line, JSON path, why) left as they were


@dataclass(frozen=True)
class Stopped:
    """What a run stopped early (Ctrl-C, an unexpected exception) had done: `written` files
    (None when the run's end was itself cut short) in `manifest_path`, which `thinkfix undo`
    follows (None when there is nothing to undo), those it had repaired (`files`, by path),
    and `errors`, what kept the manifest from being finished (its journal is then kept, and
    undo follows it from the same path)."""

    written: int | None
    manifest_path: str | None
    errors: tuple[InputError, ...] = ()
    files: tuple[Replaced, ...] = ()


@dataclass(frozen=True)
class Job:
    """One file to repair, with everything a worker process needs to do it alone."""

    candidate: Candidate | InputFile
    index: int
    options: RepairOptions
    output: str | None  # --out: where the repaired copy goes
    backup_dir: str | None
    journal_dir: str | None
    roots: tuple[str, ...] = ()  # the named paths, symlinks resolved (see `_refuse_links`)
    # Write only where nothing is: a run on a cluster has no backup folder to keep what an
    # output it replaced held, a URL output is always written so, and an --out run into a
    # folder that held none of its outputs replaces nothing, so its journal needs no sync.
    fresh_only: bool = False


def describe(exc: BaseException) -> str:
    """An exception as a message that always says what happened (MemoryError has no text)."""
    if isinstance(exc, MemoryError):
        return "out of memory" + (f" ({exc})" if str(exc) else "")
    text = str(exc)
    return (
        text
        if text and not isinstance(exc, (KeyError, TypeError, AttributeError))
        else f"{type(exc).__name__}: {text or 'no details'}"
    )


def failed(
    path: str, fmt: str | None, kind: ErrorKind, message: str, status: FileStatus
) -> FileResult:
    return FileResult(path, fmt, status, errors=(InputError(path, None, kind, message),))


def bad_record(path: str, line: int, error: str) -> InputError:
    """A record that could not be used, as the error its file reports (copied through)."""
    message = error
    if not message.endswith("copied through untouched"):
        message += "; copied through untouched"
    return InputError(path, line, bad_kind(message), f"line {line}: {message}")
