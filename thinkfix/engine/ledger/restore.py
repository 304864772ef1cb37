"""Undo: put back exactly what a repair changed, from a manifest read and checked by `journal`.

Every file must still hold the bytes the repair wrote (by hash; a session of lines, the records
it wrote), or undo refuses it, naming it; then each is restored atomically, checked by hash,
lines and rows the runtime wrote since kept (a store's through `rows`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, BinaryIO

from thinkfix.engine.ledger import docwise, integrity, recordwise
from thinkfix.engine.ledger import rows as store
from thinkfix.engine.ledger.journal import (
    forget_logs,
    holds_written,
    journal_entries,
    load_manifest,
)
from thinkfix.engine.ledger.manifest import (
    ManifestError,
    current_state,
    is_store_entry,
    unblob,
)
from thinkfix.engine.ledger.recordwise import Digest, rebuild
from thinkfix.engine.report import ExitCode, InputError
from thinkfix.formats import registry
from thinkfix.io import filestate, remote, safewrite, urlwrite
from thinkfix.io.errors import ErrorKind
from thinkfix.io.ranges import ByteRange

# --- undo ------------------------------------------------------------------------------------


class UndoStatus(str, Enum):
    RESTORED = "restored"
    REMOVED = "removed"  # a file the repair created (an --out copy, a sidecar)
    ALREADY = "already"  # already holds the bytes from before the repair
    CHANGED = "changed"  # changed since the repair: refused
    FAILED = "failed"
    WOULD_RESTORE = "would-restore"  # dry run


@dataclass(frozen=True)
class UndoFile:
    path: str  # the file restored (the real path the repair wrote)
    status: UndoStatus
    message: str = ""


@dataclass(frozen=True)
class UndoResult:
    files: tuple[UndoFile, ...]
    refused: bool = False  # nothing was restored because some file changed since the repair

    @property
    def errors(self) -> tuple[InputError, ...]:
        kinds = {UndoStatus.CHANGED: ErrorKind.CHANGED, UndoStatus.FAILED: ErrorKind.WRITE_FAILED}
        return tuple(
            InputError(f.path, None, kinds[f.status], f.message)
            for f in self.files
            if f.status in kinds
        )

    def exit_code(self) -> ExitCode:
        return ExitCode.ERROR if self.errors or self.refused else ExitCode.CLEAN


def _classify(entry: dict[str, Any]) -> tuple[UndoStatus, str, filestate.FileState | None]:
    if is_store_entry(entry):
        status, message = _classify_store(entry)
        return status, message, None
    target = entry["target"]
    before, after = entry.get("before"), entry["after"]
    unsafe = integrity.safe_target(target)
    if unsafe is not None:
        return UndoStatus.FAILED, unsafe, None
    if remote.is_url(target):
        status, message = _classify_url(target, after["sha256"])
        return status, message, None
    try:
        now = current_state(target)
    except filestate.WriteError as exc:
        return UndoStatus.FAILED, str(exc), None
    if now is None:
        if before is None:
            return UndoStatus.ALREADY, "already removed", None
        return UndoStatus.CHANGED, f"{target}: missing (removed since the repair)", None
    if now.sha256 == after["sha256"]:
        return UndoStatus.WOULD_RESTORE, "", now
    if before is not None and now.sha256 == before["sha256"]:
        return UndoStatus.ALREADY, "already holds the bytes from before the repair", now
    kept = appended(entry, now)
    if kept:
        return UndoStatus.WOULD_RESTORE, f"keeping the {kept:,} bytes appended since", now
    kept = _lines_after(entry, now, before) if before is not None else 0
    if kept:  # undone before, keeping what was appended (then or since): done, as it was
        return UndoStatus.ALREADY, f"keeping the {kept:,} bytes appended since", now
    found = recordwise.located(entry, now)
    if found.at:
        return UndoStatus.WOULD_RESTORE, MERGED, now
    if recordwise.as_before(entry, now):
        return UndoStatus.ALREADY, MERGED, now
    others = recordwise.others_added(entry, now)
    if others is not None:
        status = UndoStatus.WOULD_RESTORE if others[1] else UndoStatus.ALREADY
        return status, OTHERS if others[0] is not None else "", now  # "": none left, removed
    document, why_not = docwise.undone_document(entry, now.path)
    if document is not None:
        if filestate.sha256(document) == now.sha256:
            return UndoStatus.ALREADY, RESAVED, now
        return UndoStatus.WOULD_RESTORE, RESAVED, now
    said = f"(sha256 {now.sha256[:16]}..., the repair wrote {after['sha256'][:16]}...)"
    which = f": {why_not or found.why}" if why_not or found.why else ""
    why = f"{target}: changed since the repair {said}{which}; restoring it would lose those changes"
    return UndoStatus.CHANGED, why, now


def appended(entry: dict[str, Any], now: filestate.FileState) -> int:
    """How many bytes a runtime appended since the repair to a session of lines that still
    holds every byte the repair wrote (`_lines_after`), or 0; undo keeps those lines."""
    return _lines_after(entry, now, entry["after"]) if entry.get("before") else 0


def _lines_after(entry: dict[str, Any], now: filestate.FileState, state: dict[str, Any]) -> int:
    """How many bytes follow the first `state["size"]` bytes of the session `now` when those
    hash to `state["sha256"]` and end a line, else 0: `state` is the manifest's `after`
    (appended since the repair) or `before` (appended to a file an undo gave back)."""
    size = state.get("size")
    if (
        entry.get("role") != "session"
        or entry.get("compression") != "none"
        or not isinstance(size, int)
        or not 0 < size < now.size
        or not registry.get(entry["format"]).appends_lines
    ):
        return 0
    digest, last = hashlib.sha256(), b""
    try:
        with open(now.path, "rb") as raw:
            fp = ByteRange(raw, 0, size)
            while block := fp.read(filestate.BLOCK):
                digest.update(block)
                last = block[-1:]
    except OSError:
        return 0
    if fp.pos != size or last != b"\n" or digest.hexdigest() != state["sha256"]:
        return 0
    return now.size - size


#: An undo's note for a session whose lines the runtime rewrote or appended since the repair.
MERGED = "keeping the lines written since the repair"


#: An undo's note for a session document its runtime saved again since the repair.
RESAVED = "keeping what the runtime saved since the repair"


#: An undo's note for a sidecar a later repair added its own reasoning to.
OTHERS = "keeping the reasoning other repairs added"


def _classify_url(target: str, after: str) -> tuple[UndoStatus, str]:
    """An output the repair created at a URL (it never replaces one there): removable while
    it holds the bytes written."""
    try:
        now = urlwrite.sha256(target)
    except filestate.WriteError as exc:
        return UndoStatus.FAILED, str(exc)
    if now is None:
        return UndoStatus.ALREADY, "already removed"
    if now == after:
        return UndoStatus.WOULD_RESTORE, ""
    return (
        UndoStatus.CHANGED,
        (
            f"{target}: changed since the repair (sha256 {now[:16]}..., the repair wrote "
            f"{after[:16]}...); removing it would lose those changes"
        ),
    )


def _classify_store(entry: dict[str, Any]) -> tuple[UndoStatus, str]:
    """A database store is judged by the rows the repair changed (its change set), never by
    the rest of the store, which its runtime may have written since."""
    target = entry["target"]
    unsafe = integrity.safe_target(target)
    if unsafe is not None:
        return UndoStatus.FAILED, unsafe
    if not os.path.lexists(target):
        if entry.get("before") is None:
            return UndoStatus.ALREADY, "already removed"
        return UndoStatus.CHANGED, f"{target}: missing (removed since the repair)"
    where, message = store.state(entry)
    if where == "after":
        return UndoStatus.WOULD_RESTORE, ""
    if where == "before" and entry.get("before") is not None:
        return UndoStatus.ALREADY, "already holds the rows from before the repair"
    if where == "failed":
        return UndoStatus.FAILED, message
    return UndoStatus.CHANGED, message or f"{target}: rows the repair wrote changed since"


def _undo_store(entry: dict[str, Any], status: UndoStatus, message: str, dry_run: bool) -> UndoFile:
    target = entry["target"]
    if status is not UndoStatus.WOULD_RESTORE or dry_run:
        return UndoFile(target, status, message)
    try:
        if entry.get("before") is None:  # an --out copy the repair made
            os.unlink(target)
            return UndoFile(target, UndoStatus.REMOVED)
        store.revert(entry)
        return UndoFile(target, UndoStatus.RESTORED)
    except (filestate.WriteError, sqlite3.Error, OSError) as exc:
        kind = getattr(exc, "kind", None)
        return UndoFile(
            target, UndoStatus.CHANGED if kind is ErrorKind.CHANGED else UndoStatus.FAILED, str(exc)
        )


Producer = Callable[[BinaryIO], object]


def previous_bytes(
    entry: dict[str, Any], now: filestate.FileState, written: int | None = None
) -> Producer:
    """A writer of the bytes a file held before the repair, from the first source whose hash
    proves it (a backup, bytes embedded in the manifest, or the file rebuilt from its changed
    records: from its first `written` bytes, where lines were appended since); each is read
    in blocks or by record, never whole."""
    before = entry["before"]
    want = before["sha256"]
    backup = before.get("backup")
    if backup and os.path.exists(backup) and safewrite.hash_file(backup)[1] == want:
        return lambda out: _copy(backup, out)
    if "bytes" in before:
        data = unblob(before["bytes"])
        if filestate.sha256(data) == want:
            return lambda out: out.write(data)
    if entry.get("content", {}).get("rebuildable"):
        digest = Digest()
        try:
            rebuild(entry, now.path, digest, written)
        except filestate.WriteError:
            pass
        else:
            if digest.hash.hexdigest() == want:
                return lambda out: rebuild(entry, now.path, out, written)
    raise filestate.WriteError(
        f"{entry['target']}: no intact copy of the previous bytes (backup "
        "missing or altered, and the records cannot rebuild them)"
    )


def _copy(path: str, out: BinaryIO | Digest) -> None:
    with open(path, "rb") as fp:
        while block := fp.read(filestate.BLOCK):
            out.write(block)


def undo(path: str, *, dry_run: bool = False, skip_changed: bool = False) -> UndoResult:
    """Restore every file a repair wrote, exactly, or refuse before touching any.

    With `skip_changed`, files changed since the repair are left alone and the
    others restored.
    """
    doc = load_manifest(path)
    entries = list(doc["files"])
    checked = _with_sessions([(e, *_classify(e)) for e in entries])
    blocked = [
        UndoFile(e["target"], status, msg)
        for e, status, msg, _ in checked
        if status in (UndoStatus.CHANGED, UndoStatus.FAILED)
    ]
    if blocked and not skip_changed:
        others = [
            UndoFile(e["target"], status, msg)
            for e, status, msg, _ in checked
            if status not in (UndoStatus.CHANGED, UndoStatus.FAILED)
        ]
        return UndoResult(tuple(blocked + others), refused=True)
    results: list[UndoFile] = []
    # Sidecars and inserted files last-in first-out, so a file is restored after its sidecar.
    for entry, status, message, now in reversed(checked):
        target = entry["target"]
        if is_store_entry(entry):
            results.append(_undo_store(entry, status, message, dry_run))
            continue
        if remote.is_url(target) and status is UndoStatus.WOULD_RESTORE and not dry_run:
            try:
                urlwrite.remove_verified(target, entry["after"]["sha256"])
                results.append(UndoFile(target, UndoStatus.REMOVED))
            except filestate.WriteError as exc:
                why = UndoStatus.CHANGED if exc.kind is ErrorKind.CHANGED else UndoStatus.FAILED
                results.append(UndoFile(target, why, str(exc)))
            continue
        if status is not UndoStatus.WOULD_RESTORE or now is None:
            results.append(UndoFile(target, status, message))
            continue
        if dry_run:
            results.append(UndoFile(target, status, message))
            continue
        try:
            results.append(UndoFile(target, _restore(entry, now), message))
        except filestate.WriteError as exc:
            status = UndoStatus.CHANGED if exc.kind is ErrorKind.CHANGED else UndoStatus.FAILED
            results.append(UndoFile(target, status, str(exc)))
    return UndoResult(tuple(reversed(results)))


Checked = tuple[dict[str, Any], UndoStatus, str, "filestate.FileState | None"]


def _with_sessions(checked: list[Checked]) -> list[Checked]:
    """A sidecar stays while its session stays repaired (changed since, or failed): it holds
    the reasoning that session's repair took out, which `--skip-changed` would otherwise
    remove alone."""
    kept = {
        e["path"]
        for e, status, _, _ in checked
        if e.get("role") == "session" and status in (UndoStatus.CHANGED, UndoStatus.FAILED)
    }
    out: list[Checked] = []
    for e, status, message, now in checked:
        if (
            e.get("role") == "sidecar"
            and e.get("path") in kept
            and status is not UndoStatus.ALREADY
        ):
            status = UndoStatus.CHANGED
            message = (
                f"{e['target']}: kept, since its session {e['path']} is not restored (it "
                "holds the reasoning that session's repair took out)"
            )
        out.append((e, status, message, now))
    return out


def _restore(entry: dict[str, Any], now: filestate.FileState) -> UndoStatus:
    """Put a local file that holds the bytes the repair wrote back as it was (removed when
    the repair created it). Raises `filestate.WriteError`."""
    target = entry["target"]
    exact = now.sha256 == entry["after"]["sha256"]
    # Permission bits only: never setuid, setgid or sticky, whatever was recorded.
    mode = int((entry["before"] or entry["after"]).get("mode", "0o644"), 8) & 0o777
    others = None if exact else recordwise.others_added(entry, now)
    if others is not None:  # a sidecar a later repair added to
        return _without_added(target, now, mode, others[0])
    if entry.get("before") is None:
        safewrite.remove_verified(target, entry["after"]["sha256"])
        return UndoStatus.REMOVED
    kept = 0 if exact else appended(entry, now)
    if not kept and now.sha256 != entry["after"]["sha256"]:  # lines rewritten since
        return _merge(entry, now, mode)
    written = entry["after"]["size"]
    previous = previous_bytes(entry, now, written if kept else None)
    tail = _tail_sha256(now.path, written) if kept else None

    def produce(out: BinaryIO) -> None:
        previous(out)
        if kept:  # what the runtime appended since, after the bytes from before the repair
            with open(now.path, "rb") as raw:
                appended_lines = ByteRange(raw, written, now.size)
                while block := appended_lines.read(filestate.BLOCK):
                    out.write(block)

    safewrite.atomic_write_stream(
        target,
        produce,
        mode=mode,
        watch=(now.path, now.stamp),
        verify=_expect(entry["before"]["sha256"], entry["before"].get("size"), tail),
    )
    return UndoStatus.RESTORED


def _merge(entry: dict[str, Any], now: filestate.FileState, mode: int) -> UndoStatus:
    """Put back the records the repair changed, wherever they are now, keeping every line
    written since; checked against the same rebuild made before, the rename refused if the
    file moved meanwhile."""
    found = recordwise.locate(entry, now.path)
    if not found.at:
        document, why_not = docwise.undone_document(entry, now.path)
        if document is None:
            why = why_not or found.why
            raise filestate.WriteError(f"{entry['target']}: {why}", ErrorKind.CHANGED)
        safewrite.atomic_write_stream(
            entry["target"],
            lambda out: out.write(document),
            mode=mode,
            watch=(now.path, now.stamp),
            verify=_expect(filestate.sha256(document), len(document)),
        )
        return UndoStatus.RESTORED
    digest = Digest()
    rebuild(entry, now.path, digest, at=found.at)
    safewrite.atomic_write_stream(
        entry["target"],
        lambda out: rebuild(entry, now.path, out, at=found.at),
        mode=mode,
        watch=(now.path, now.stamp),
        verify=_expect(digest.hash.hexdigest()),
    )
    return UndoStatus.RESTORED


def _without_added(
    target: str, now: filestate.FileState, mode: int, data: bytes | None
) -> UndoStatus:
    """Write a sidecar without this repair's entries (`data`), or remove it when none is
    left, refused if it moved since it was read."""
    if data is None:
        safewrite.remove_verified(target, now.sha256)
        return UndoStatus.REMOVED
    safewrite.atomic_write_stream(
        target,
        lambda out: out.write(data),
        mode=mode,
        watch=(now.path, now.stamp),
        verify=_expect(filestate.sha256(data)),
    )
    return UndoStatus.RESTORED


def _tail_sha256(path: str, start: int) -> str:
    with open(path, "rb") as raw:
        return _sha256(ByteRange(raw, start, os.fstat(raw.fileno()).st_size))


def roll_back_unfinished(journal_dir: str) -> None:
    """Put back the sidecars of files a dead worker journaled but never replaced.

    A file's sidecar is written after its journal entry and before the file itself is
    renamed into place; a worker killed between the two leaves a sidecar for a file that
    still holds its leak. The run is then redone, and the redo would read that sidecar as
    what was there before (so undo would keep it). Called before the redo, whose entries go
    to a journal file of their own, made after the dead workers' (`forget_logs`): a file's
    last entry is the one that counts."""
    forget_logs(journal_dir)
    try:
        entries = journal_entries(journal_dir)
    except ManifestError:
        return
    replaced = {
        e["path"]
        for e in entries
        if e.get("role") == "session"
        and isinstance(e.get("target"), str)
        and not remote.is_url(e["target"])
        and holds_written(e)
    }
    for entry in entries:
        if entry.get("role") != "sidecar" or entry.get("path") in replaced:
            continue
        status, _, now = _classify(entry)
        if status is UndoStatus.WOULD_RESTORE and now is not None:
            with contextlib.suppress(filestate.WriteError):
                _restore(entry, now)


def _expect(sha: str, size: int | None = None, tail: str | None = None) -> Callable[[str], None]:
    """The check of a restored file: it hashes to `sha`; or, keeping lines appended since
    the repair (`tail`, their hash), its first `size` bytes hash to `sha` and the rest to
    `tail`."""

    def check(temp: str) -> None:
        if tail is None or size is None:
            ok = safewrite.hash_file(temp)[1] == sha
        else:
            with open(temp, "rb") as raw:
                end = os.fstat(raw.fileno()).st_size
                ok = _sha256(ByteRange(raw, 0, size)) == sha and (
                    _sha256(ByteRange(raw, size, end)) == tail
                )
        if not ok:
            raise filestate.VerifyError(
                "restored bytes do not match the hash from before the repair"
            )

    return check


def _sha256(fp: ByteRange) -> str:
    digest = hashlib.sha256()
    while block := fp.read(filestate.BLOCK):
        digest.update(block)
    return digest.hexdigest()
