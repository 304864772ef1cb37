"""The undo manifest: everything a repair changed, enough to put every byte back.

One JSON document per repair run (`schema_version` first). For each file
written it holds the hashes and sizes of the bytes before and after, where the
previous bytes can be had (a verified backup, the bytes themselves, or the
changed records' original bytes, from which the file is rebuilt), and for each
changed record its line, byte offset, length and hashes before and after. For
each repaired message it holds the extracted reasoning and where it was placed,
so nothing is lost even where the format has no place for reasoning (Claude
Code's default mode keeps it here only).

Entries are journaled one file at a time (`<manifest>.d/`) *before* the file
they describe is replaced, so a run that dies midway can still be undone; the
finished manifest replaces the journal.

`undo` restores from a manifest: it first proves the manifest is one this
thinkfix wrote (its HMAC seal, keyed by the state folder's secret, see
`integrity`) and sound (schema, paths inside the run's roots, plain modes), then
that every file still holds the bytes the repair wrote (by hash), refusing,
naming the files, if one changed since; then it restores each one atomically and
checks the result's hash.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, BinaryIO

from thinkfix._version import __version__
from thinkfix.engine.ledger import integrity
from thinkfix.engine.ledger import rows as store
from thinkfix.engine.report import ExitCode, InputError
from thinkfix.formats import registry
from thinkfix.formats.base import ApplyOptions, Record, record_limit, set_record_limit
from thinkfix.io import fsio, jsontext, remote
from thinkfix.io import urlwrite as urlio
from thinkfix.io.errors import ErrorKind
from thinkfix.normalizer.policy import Policy

if TYPE_CHECKING:
    from thinkfix.engine.ledger.change import Change

SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"
JOURNAL_SUFFIX = ".d"


class ManifestError(Exception):
    """A manifest that cannot be read or is not one of ours."""


# --- where runs keep their state -------------------------------------------------------------


def state_dir() -> str:
    """Where runs keep manifests and backups: outside any folder a scan would walk."""
    explicit = os.environ.get("THINKFIX_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(xdg, "thinkfix")


def default_run_dir(run_id: str) -> str:
    return os.path.join(state_dir(), "runs", run_id)


def backup_path(backup_dir: str, real_path: str) -> str:
    """The backup of a file mirrors its absolute path under the run's backup folder."""
    drive, rest = os.path.splitdrive(os.path.abspath(real_path))
    parts = [p for p in rest.replace("\\", "/").split("/") if p]
    if drive:
        parts.insert(0, drive.replace(":", ""))
    return os.path.join(backup_dir, *parts)


# --- building entries ------------------------------------------------------------------------


def _blob(data: bytes) -> dict[str, Any]:
    """Bytes as readable text when they are UTF-8, else base64."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def _unblob(blob: dict[str, Any]) -> bytes:
    if "text" in blob:
        return str(blob["text"]).encode("utf-8", "surrogatepass")
    return base64.b64decode(blob["base64"])


def _state(
    snapshot: fsio.Snapshot | fsio.FileState | None, backup: str | None, embed: bool
) -> dict[str, Any] | None:
    if snapshot is None:
        return None
    size = len(snapshot.data) if isinstance(snapshot, fsio.Snapshot) else snapshot.size
    out: dict[str, Any] = {
        "sha256": snapshot.sha256,
        "size": size,
        "mode": oct(snapshot.mode),
        "backup": backup,
    }
    if embed:  # no backup and no way to rebuild: the bytes themselves
        out["bytes"] = _blob(
            snapshot.data if isinstance(snapshot, fsio.Snapshot) else snapshot.read()
        )
    return out


def change_entry(change: Change) -> dict[str, Any]:
    """One repaired (or refused) message: where, what leaked, the reasoning and its placement."""
    site, p = change.site, change.placement
    return {
        "line": site.line,
        "json_path": site.json_path,
        "session_id": site.session_id,
        "message_id": site.message_id,
        "message_index": site.message_index,
        "model": site.model,
        "kinds": list(change.kinds),
        "findings": [f.to_dict() for f in change.findings],
        "applied": p.applied,
        "reason": p.reason,
        "text_before_sha256": fsio.sha256(site.text.encode("utf-8", "surrogatepass")),
        "extracted": list(change.extracted),
        "placement": {
            "kind": p.kind.value,
            "where": p.where,
            "line": None if p.record_index is None else p.record_index + 1,
            "json_path": p.json_path,
            "mirrors": list(p.mirrors),
            "text_line": None if p.message_record_index is None else p.message_record_index + 1,
            "text_path": p.text_path,
        },
    }


def file_entry(
    *,
    path: str,
    source: str,
    target: str,
    link: str | None,
    fmt: str,
    compression: str,
    mode: int,
    before: fsio.FileState | None,
    backup: str | None,
    written: fsio.Written,
    content_sha256: tuple[str, str],
    record_counts: tuple[int, int],
    records: list[dict[str, Any]],
    changes: Sequence[Change],
    same_source: bool,
) -> dict[str, Any]:
    """The manifest entry of one written session file.

    `content_sha256` and `record_counts` are (before, after) of the decompressed content;
    `records` are the changed records' entries (`record_entry`). The previous bytes are
    embedded only when neither a backup nor the changed records can rebuild them (a
    compressed file, or a file `--out` overwrote).
    """
    rebuildable = same_source and compression == "none"
    return {
        "role": "session",
        "path": path,
        "source": source,
        "target": target,
        "link": link,
        "format": fmt,
        "compression": compression,
        "before": _state(before, backup, embed=backup is None and not rebuildable),
        "after": {"sha256": written.sha256, "size": written.size, "mode": oct(mode)},
        "content": {
            "before_sha256": content_sha256[0],
            "after_sha256": content_sha256[1],
            "before_records": record_counts[0],
            "after_records": record_counts[1],
            "rebuildable": rebuildable and before is not None,
        },
        "records": records,
        "repairs": [change_entry(c) for c in changes],
    }


def record_entry(
    new: Record, new_offset: int, old: tuple[int, Record, int] | None
) -> dict[str, Any]:
    """One changed (`old` is its original index, record and offset) or inserted record."""
    after = {
        "index": new.index,
        "line": new.line,
        "offset": new_offset,
        "length": len(new.raw),
        "sha256": fsio.sha256(new.raw),
    }
    if old is None:
        return {"inserted": True, "before": None, "after": after}
    i, rec, offset = old
    return {
        "inserted": False,
        "before": {
            "index": i,
            "line": rec.line,
            "offset": offset,
            "length": len(rec.raw),
            "sha256": fsio.sha256(rec.raw),
            **_blob(rec.raw),
        },
        "after": after,
    }


def sidecar_entry(
    path: str, target: str, before: fsio.Snapshot | None, backup: str | None, data: bytes
) -> dict[str, Any]:
    """The manifest entry of a sidecar file (reasoning a format had no place for)."""
    return {
        "role": "sidecar",
        "path": path,
        "source": None,
        "target": target,
        "link": None,
        "format": None,
        "compression": "none",
        "before": _state(before, backup, embed=backup is None),
        "after": {
            "sha256": fsio.sha256(data),
            "size": len(data),
            "mode": oct(before.mode if before else 0o644),
        },
        "records": [],
        "repairs": [],
    }


def sidecar_document(
    fmt: str, source_name: str, changes: Iterable[Change], existing: bytes | None
) -> bytes:
    """`<file>.thinkfix.json`: the reasoning of messages whose format cannot hold it."""
    entries: list[Any] = []
    if existing is not None:
        with contextlib.suppress(ValueError):
            old = jsontext.loads(existing)
            if isinstance(old, dict) and isinstance(old.get("reasoning"), list):
                entries = list(old["reasoning"])
    for c in changes:
        entry = {
            "line": c.site.line,
            "json_path": c.site.json_path,
            "session_id": c.site.session_id,
            "message_id": c.site.message_id,
            "model": c.site.model,
            "reasoning": list(c.extracted),
            "why": c.placement.where,
        }
        if entry not in entries:
            entries.append(entry)
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": "thinkfix",
        "source": source_name,
        "format": fmt,
        "reasoning": entries,
    }
    return jsontext.dumps(doc, indent=True, newline=True)


def manifest_document(
    entries: Sequence[dict[str, Any]],
    *,
    mode: str,
    policy: Policy,
    apply: ApplyOptions,
    backup_dir: str | None,
    tool_version: str = "",
    roots: Sequence[str] = (),
) -> dict[str, Any]:
    """The finished manifest; `roots` are where the run was allowed to write (`run_roots`)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "thinkfix", "version": tool_version or __version__},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "mode": mode,
        "cwd": os.getcwd(),
        "roots": list(roots),
        "backup_dir": backup_dir,
        "options": {
            "policy": policy.to_dict(),
            "apply": {k: getattr(apply, k) for k in apply.__dataclass_fields__},
        },
        "files": list(entries),
    }


def _dumps(value: Any) -> bytes:
    # Extracted reasoning may hold a lone surrogate (valid JSON): kept as its escape.
    return jsontext.dumps(value, indent=True, newline=True)


run_roots = integrity.run_roots
HEADER_NAME = "run.header"  # a journal's sealed note of where its run may write


def _key(*, create: bool) -> bytes:
    try:
        return integrity.load_key(state_dir(), create=create)
    except OSError as exc:
        raise fsio.WriteError(
            f"{state_dir()}: cannot make the undo key: {exc.strerror or exc}"
        ) from exc


def start_journal(
    journal_dir: str, *, roots: Sequence[str], mode: str, backup_dir: str | None
) -> None:
    """Before any file is written: the sealed header undo checks a journal's entries against."""
    header = {
        "schema_version": SCHEMA_VERSION,
        "mode": mode,
        "roots": list(roots),
        "backup_dir": backup_dir,
        "cwd": os.getcwd(),
    }
    fsio.atomic_write(
        os.path.join(journal_dir, HEADER_NAME),
        integrity.seal_document(_dumps(header), _key(create=True)),
        mode=0o600,
        make_dirs=True,
    )


def journal(
    journal_dir: str, index: int, entries: Sequence[dict[str, Any]], *, durable: bool = True
) -> None:
    """Record one file's entries durably (and sealed) before that file is replaced.

    The seal goes first: a crash between the two leaves a seal with no entries, which
    is harmless, never entries undo would refuse. `durable=False` (a run that only creates
    files: `--out` to a folder holding none of its outputs) skips the syncs: a killed run's
    entries are whole all the same, and a power cut can lose only the undo of files that
    were created, never bytes that were there before.
    """
    path = os.path.join(journal_dir, f"{index:08d}.json")
    data = _dumps(list(entries))
    fsio.atomic_write(
        path + integrity.MAC_SUFFIX,
        integrity.seal_bytes(data, _key(create=True)),
        mode=0o600,
        make_dirs=True,
        durable=durable,
    )
    fsio.atomic_write(path, data, mode=0o600, make_dirs=True, durable=durable)


def unjournal(journal_dir: str, index: int) -> None:
    """Drop a file's journaled entries: the file was not replaced after all."""
    path = os.path.join(journal_dir, f"{index:08d}.json")
    for name in (path, path + integrity.MAC_SUFFIX):
        with contextlib.suppress(OSError):
            os.unlink(name)


def recover_journal(journal_dir: str, known: set[str]) -> list[dict[str, Any]]:
    """Journaled entries of files that were really written (their bytes are the new ones)."""
    out: list[dict[str, Any]] = []
    try:
        entries = _journal_entries(journal_dir)
    except ManifestError:
        return out  # not what this run journaled: nothing of it goes into a sealed manifest
    for entry in entries:
        target = entry.get("target")
        if not isinstance(target, str) or target in known:
            continue
        if _is_store(entry):  # committed when its rows are the repair's
            if store.state(entry)[0] == "after":
                out.append(entry)
            continue
        try:
            now = urlio.sha256(target) if remote.is_url(target) else _sha256(target)
        except fsio.WriteError:
            continue
        if now is not None and now == entry["after"]["sha256"]:
            out.append(entry)
    return out


def _journal_entries(journal_dir: str) -> list[dict[str, Any]]:
    """Every journaled entry, each file's seal proven first (ManifestError otherwise)."""
    files: list[dict[str, Any]] = []
    if not os.path.isdir(journal_dir):
        return files
    names = sorted(n for n in os.listdir(journal_dir) if n.endswith(".json"))
    if not names:
        return files
    with _journal_errors(journal_dir, "malformed journal"):
        for name in names:
            path = os.path.join(journal_dir, name)
            data = _read(path)
            seal = (
                _read(path + integrity.MAC_SUFFIX)
                if os.path.exists(path + integrity.MAC_SUFFIX)
                else None
            )
            integrity.require_detached(seal, path)
            key = integrity.load_key(state_dir(), create=False)
            entries = jsontext.loads(integrity.open_bytes(data, seal, key, path))
            if not isinstance(entries, list):
                raise ManifestError(f"{path}: malformed journal: not a list of entries")
            files.extend(entries)
    return files


@contextlib.contextmanager
def _journal_errors(where: str, what: str) -> Iterator[None]:
    """A journal that fails its seal says so as it is; one that does not parse is `what`."""
    try:
        yield
    except integrity.IntegrityError as exc:
        raise ManifestError(str(exc)) from None
    except ValueError as exc:
        raise ManifestError(f"{where}: {what}: {exc}") from None


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fp:
            return fp.read()
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _journal_document(journal_dir: str) -> dict[str, Any]:
    """A run that died: its sealed header and entries, checked as a manifest is."""
    header_path = os.path.join(journal_dir, HEADER_NAME)
    if not os.path.exists(header_path):
        raise ManifestError(
            f"{journal_dir}: not a journal thinkfix wrote (no sealed "
            f"{HEADER_NAME}); undo only follows what thinkfix wrote"
        )
    with _journal_errors(header_path, "malformed journal header"):
        data = _read(header_path)
        integrity.require_seal(data, header_path)
        key = integrity.load_key(state_dir(), create=False)
        header = jsontext.loads(integrity.open_document(data, key, header_path))
        if not isinstance(header, dict):
            raise ManifestError(f"{header_path}: malformed journal header")
        doc = {
            "schema_version": SCHEMA_VERSION,
            "files": _journal_entries(journal_dir),
            "journal": True,
            "mode": header.get("mode"),
            "roots": header.get("roots"),
            "backup_dir": header.get("backup_dir"),
            "cwd": header.get("cwd"),
        }
        integrity.check_document(doc, journal_dir)
    return doc


def remove_journal(journal_dir: str) -> None:
    shutil.rmtree(journal_dir, ignore_errors=True)


def write_manifest(path: str, doc: dict[str, Any]) -> None:
    """The finished manifest, sealed with the state folder's key so undo can trust it."""
    fsio.atomic_write(
        path, integrity.seal_document(_dumps(doc), _key(create=True)), mode=0o600, make_dirs=True
    )


# --- reading ---------------------------------------------------------------------------------


def load_manifest(path: str) -> dict[str, Any]:
    """A manifest document; a run that died before finishing is read from its journal."""
    journal_dir = path + JOURNAL_SUFFIX
    if not os.path.exists(path) and os.path.isdir(journal_dir):
        return _journal_document(journal_dir)
    if os.path.isdir(path) and os.path.exists(os.path.join(path, MANIFEST_NAME)):
        return load_manifest(os.path.join(path, MANIFEST_NAME))
    data = _read(path)
    try:
        doc = jsontext.loads(data)
    except ValueError as exc:
        raise ManifestError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise ManifestError(f"{path}: not a thinkfix manifest")
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ManifestError(
            f"{path}: manifest schema_version {version!r} is not supported "
            f"(this thinkfix reads {SCHEMA_VERSION})"
        )
    try:
        # What is read is what the seal covers, never the bytes around it.
        integrity.require_seal(data, path)
        body = integrity.open_document(data, integrity.load_key(state_dir(), create=False), path)
        doc = jsontext.loads(body)
        integrity.check_document(doc, path)
    except integrity.IntegrityError as exc:
        raise ManifestError(str(exc)) from None
    except ValueError as exc:
        raise ManifestError(f"{path}: not JSON: {exc}") from exc
    checked: dict[str, Any] = doc  # check_document proved it an object
    return checked


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


def _sha256(target: str) -> str | None:
    now = _current(target)
    return None if now is None else now.sha256


def _current(target: str) -> fsio.FileState | None:
    if not os.path.lexists(target):
        return None
    return fsio.file_state(target)


def _classify(entry: dict[str, Any]) -> tuple[UndoStatus, str, fsio.FileState | None]:
    if _is_store(entry):
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
        now = _current(target)
    except fsio.WriteError as exc:
        return UndoStatus.FAILED, str(exc), None
    if now is None:
        if before is None:
            return UndoStatus.ALREADY, "already removed", None
        return UndoStatus.CHANGED, f"{target}: missing (removed since the repair)", None
    if now.sha256 == after["sha256"]:
        return UndoStatus.WOULD_RESTORE, "", now
    if before is not None and now.sha256 == before["sha256"]:
        return UndoStatus.ALREADY, "already holds the bytes from before the repair", now
    return (
        UndoStatus.CHANGED,
        (
            f"{target}: changed since the repair (sha256 {now.sha256[:16]}..., the repair wrote "
            f"{after['sha256'][:16]}...); restoring it would lose those changes"
        ),
        now,
    )


def _classify_url(target: str, after: str) -> tuple[UndoStatus, str]:
    """An output the repair created at a URL (it never replaces one there): removable while
    it holds the bytes written."""
    try:
        now = urlio.sha256(target)
    except fsio.WriteError as exc:
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


def _is_store(entry: dict[str, Any]) -> bool:
    """A store undone row by row; a store's --out copy at a URL is an object like any other
    URL output (removed while it holds the bytes written)."""
    return entry.get("role") == "database" and not remote.is_url(str(entry.get("target")))


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
    except (fsio.WriteError, sqlite3.Error, OSError) as exc:
        kind = getattr(exc, "kind", None)
        return UndoFile(
            target, UndoStatus.CHANGED if kind is ErrorKind.CHANGED else UndoStatus.FAILED, str(exc)
        )


Producer = Callable[[BinaryIO], object]


def previous_bytes(entry: dict[str, Any], now: fsio.FileState) -> Producer:
    """A writer of the bytes a file held before the repair, from the first source whose hash
    proves it (a backup, bytes embedded in the manifest, or the file rebuilt from its changed
    records); each is read in blocks or by record, never whole."""
    before = entry["before"]
    want = before["sha256"]
    backup = before.get("backup")
    if backup and os.path.exists(backup) and fsio.hash_file(backup)[1] == want:
        return lambda out: _copy(backup, out)
    if "bytes" in before:
        data = _unblob(before["bytes"])
        if fsio.sha256(data) == want:
            return lambda out: out.write(data)
    if entry.get("content", {}).get("rebuildable"):
        digest = _Digest()
        try:
            rebuild(entry, now.path, digest)
        except fsio.WriteError:
            pass
        else:
            if digest.hash.hexdigest() == want:
                return lambda out: rebuild(entry, now.path, out)
    raise fsio.WriteError(
        f"{entry['target']}: no intact copy of the previous bytes (backup "
        "missing or altered, and the records cannot rebuild them)"
    )


class _Digest:
    """A sink that only hashes what is written to it."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        return len(data)


def _copy(path: str, out: BinaryIO | _Digest) -> None:
    with open(path, "rb") as fp:
        while block := fp.read(fsio.BLOCK):
            out.write(block)


def rebuild(entry: dict[str, Any], current: str, out: BinaryIO | _Digest) -> None:
    """The original file from the repaired one at `current`, record by record: drop inserted
    records, put originals back."""
    fmt = registry.get(entry["format"])
    inserted = {r["after"]["index"] for r in entry["records"] if r["inserted"]}
    replaced = {
        r["after"]["index"]: _unblob(r["before"]) for r in entry["records"] if not r["inserted"]
    }
    count = 0
    limit = record_limit()
    set_record_limit(0)  # every record's bytes are needed, however long (the hash proves them)
    try:
        with open(current, "rb") as fp:
            for k, rec in enumerate(fmt.read(fp)):
                count += 1
                if k in inserted:
                    continue
                out.write(replaced.get(k, rec.raw))
                out.write(rec.eol)
    finally:
        set_record_limit(limit)
    if count != entry["content"]["after_records"]:
        raise fsio.WriteError(f"{entry['target']}: record count differs from the manifest")


def undo(path: str, *, dry_run: bool = False, skip_changed: bool = False) -> UndoResult:
    """Restore every file a repair wrote, exactly, or refuse before touching any.

    With `skip_changed`, files changed since the repair are left alone and the
    others restored.
    """
    doc = load_manifest(path)
    entries = list(doc["files"])
    checked = [(e, *_classify(e)) for e in entries]
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
        if _is_store(entry):
            results.append(_undo_store(entry, status, message, dry_run))
            continue
        if remote.is_url(target) and status is UndoStatus.WOULD_RESTORE and not dry_run:
            try:
                urlio.remove_verified(target, entry["after"]["sha256"])
                results.append(UndoFile(target, UndoStatus.REMOVED))
            except fsio.WriteError as exc:
                why = UndoStatus.CHANGED if exc.kind is ErrorKind.CHANGED else UndoStatus.FAILED
                results.append(UndoFile(target, why, str(exc)))
            continue
        if status is not UndoStatus.WOULD_RESTORE or now is None:
            results.append(UndoFile(target, status, message))
            continue
        if dry_run:
            results.append(UndoFile(target, status))
            continue
        try:
            results.append(UndoFile(target, _restore(entry, now)))
        except fsio.WriteError as exc:
            status = UndoStatus.CHANGED if exc.kind is ErrorKind.CHANGED else UndoStatus.FAILED
            results.append(UndoFile(target, status, str(exc)))
    return UndoResult(tuple(reversed(results)))


def _restore(entry: dict[str, Any], now: fsio.FileState) -> UndoStatus:
    """Put a local file that holds the bytes the repair wrote back as it was (removed when
    the repair created it). Raises `fsio.WriteError`."""
    target = entry["target"]
    if entry.get("before") is None:
        fsio.remove_verified(target, entry["after"]["sha256"])
        return UndoStatus.REMOVED
    # Permission bits only: never setuid, setgid or sticky, whatever was recorded.
    mode = int(entry["before"].get("mode", "0o644"), 8) & 0o777
    fsio.atomic_write_stream(
        target,
        previous_bytes(entry, now),
        mode=mode,
        watch=(now.path, now.stamp),
        verify=_expect(entry["before"]["sha256"]),
    )
    return UndoStatus.RESTORED


def roll_back_unfinished(journal_dir: str) -> None:
    """Put back the sidecars of files a dead worker journaled but never replaced.

    A file's sidecar is written after its journal entry and before the file itself is
    renamed into place; a worker killed between the two leaves a sidecar for a file that
    still holds its leak. The run is then redone, and the redo would read that sidecar as
    what was there before (so undo would keep it). Called before the redo."""
    try:
        entries = _journal_entries(journal_dir)
    except ManifestError:
        return
    replaced = {
        e["path"]
        for e in entries
        if e.get("role") == "session"
        and isinstance(e.get("target"), str)
        and not remote.is_url(e["target"])
        and _sha256_or_none(e["target"]) == e["after"]["sha256"]
    }
    for entry in entries:
        if entry.get("role") != "sidecar" or entry.get("path") in replaced:
            continue
        status, _, now = _classify(entry)
        if status is UndoStatus.WOULD_RESTORE and now is not None:
            with contextlib.suppress(fsio.WriteError):
                _restore(entry, now)


def _sha256_or_none(target: str) -> str | None:
    try:
        return _sha256(target)
    except fsio.WriteError:
        return None


def _expect(sha: str) -> Callable[[str], None]:
    def check(temp: str) -> None:
        if fsio.hash_file(temp)[1] != sha:
            raise fsio.VerifyError("restored bytes do not match the hash from before the repair")

    return check
