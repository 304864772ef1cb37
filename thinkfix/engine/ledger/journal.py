"""The manifest on disk: journaled a file at a time as a run goes (before each file is replaced, so a run that dies midway can be undone), sealed into the finished manifest, and read back and checked (its seal, schema and paths) before undo trusts it."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from thinkfix.engine.ledger import integrity
from thinkfix.engine.ledger import rows as store
from thinkfix.engine.ledger.manifest import (
    JOURNAL_SUFFIX,
    MANIFEST_NAME,
    SCHEMA_VERSION,
    ManifestError,
    current_sha256,
    document_bytes,
    is_store_entry,
    state_dir,
)
from thinkfix.io import filestate, jsontext, remote, safewrite, urlwrite

HEADER_NAME = "run.header"  # a journal's sealed note of where its run may write


def _key(*, create: bool) -> bytes:
    try:
        return integrity.load_key(state_dir(), create=create)
    except OSError as exc:
        raise filestate.WriteError(
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
    safewrite.atomic_write(
        os.path.join(journal_dir, HEADER_NAME),
        integrity.seal_document(document_bytes(header), _key(create=True)),
        mode=0o600,
        make_dirs=True,
    )


def journal(
    journal_dir: str, index: int, entries: Sequence[dict[str, Any]], *, durable: bool = True
) -> None:
    """Record one file's entries durably (and sealed) before that file is replaced.

    They are appended to this process's journal file of the run (`_Log`), synced (and, for
    its first entry, the file's name) before this returns. `durable=False` (a run that only
    creates files: `--out` to a folder holding none of its outputs) skips the syncs: a killed
    run's entries are whole all the same, and a power cut can lose only the undo of files
    that were created, never bytes that were there before.
    """
    _append(journal_dir, index, list(entries), durable=durable)


def unjournal(journal_dir: str, index: int) -> None:
    """Drop a file's journaled entries: the file was not replaced after all (an entry with
    none for it follows; the last entry for a file is the one that counts)."""
    with contextlib.suppress(OSError, filestate.WriteError):
        _append(journal_dir, index, [], durable=False)


# --- the journal's files ---------------------------------------------------------------------
#
# One file per process and run, `<n>.log` (n from 1, the first name free as it is created,
# so a file made later has a larger n): a line of header naming the key and a random nonce,
# then entries, each its length (8 bytes, big-endian), its seal (32 bytes, chained:
# `integrity.chained_mac`) and a JSON object `{"index": file number, "files": entries}`.
# Two processes never append to one file: a killed writer's partial entry would then sit
# between another's whole ones; in a file of its own it can only be the last, dropped as
# the file is read. Each entry is one `write` to a file opened `O_APPEND`.

LOG_SUFFIX = ".log"
_LOG_NAME = re.compile(r"([1-9][0-9]{0,8})\.log\Z")
_MAGIC = b"thinkfix journal 1 "
_HEADER = re.compile(rb"thinkfix journal 1 hmac-sha256 ([0-9a-f]{16}) [0-9a-f]{32}\n\Z")
_HEADER_SIZE = len("thinkfix journal 1 hmac-sha256 ") + 16 + 1 + 32 + 1
_LENGTH, _SEAL = 8, 32
_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
# Reentrant: Ctrl-C can land between a `with` block's last line and its exit, leaving the lock
# held by the main thread (the only one it interrupts), whose next append (`unjournal`, as the
# interrupted write unwinds) must not then wait on itself for ever.
_LOCK = threading.RLock()


@dataclass
class _Log:
    """This process's journal file of one run, and the seal its next entry chains from."""

    pid: int
    path: str
    key: bytes
    last: bytes  # the header, until an entry is written; then the last entry's seal
    size: int = 0  # bytes written (0: not even the header yet)
    named: bool = False  # its folder synced since it was made: its name survives a power cut


_LOGS: dict[str, _Log] = {}


def _append(journal_dir: str, index: int, entries: list[dict[str, Any]], *, durable: bool) -> None:
    body = jsontext.dumps({"index": index, "files": entries})
    with _LOCK:
        # Out of `_LOGS` while the file changes, back in (as a new `_Log`) only once the entry
        # is whole and synced: an append stopped anywhere between (an error, or Ctrl-C, which
        # lands between any two lines) leaves no `_Log` whose seal the file does not end with;
        # this process's next entry goes to a new file (#26 item 4 review).
        log = _LOGS.pop(journal_dir, None)
        if log is None or log.pid != os.getpid():  # a forked worker makes a file of its own
            fd, log = _new_log(journal_dir)
        else:
            fd = _open(log.path, _FLAGS)
        try:
            seal = integrity.chained_mac(log.key, log.last, body)
            data = b"".join(
                [b"" if log.size else log.last, len(body).to_bytes(_LENGTH, "big"), seal, body]
            )
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
                if not log.named:
                    filestate.fsync_folder(journal_dir)
        except BaseException as exc:
            # The entry is refused, so its file is not replaced: cut back off (tidy, and a torn
            # entry would else be the file's last; if the cut fails, it is, dropped as read).
            with contextlib.suppress(OSError):
                os.ftruncate(fd, log.size)
            if isinstance(exc, OSError):
                raise filestate.WriteError(
                    f"{log.path}: cannot journal: {exc.strerror or exc}"
                ) from exc
            raise
        finally:
            os.close(fd)
        _LOGS[journal_dir] = replace(
            log, last=seal, size=log.size + len(data), named=log.named or durable
        )


def _new_log(journal_dir: str) -> tuple[int, _Log]:
    """A new journal file for this process, and its descriptor; its header is written with
    its first entry (a file killed before holds no entry: read as empty)."""
    key = _key(create=True)
    try:
        os.makedirs(journal_dir, exist_ok=True)
    except OSError as exc:
        raise filestate.WriteError(f"{journal_dir}: cannot journal: {exc.strerror or exc}") from exc
    header = (
        f"thinkfix journal 1 {integrity.ALGORITHM} {integrity.key_id(key)} "
        f"{secrets.token_hex(16)}\n"
    ).encode()
    n = 1
    while True:
        path = os.path.join(journal_dir, f"{n}{LOG_SUFFIX}")
        try:
            return _open(path, _FLAGS | os.O_CREAT | os.O_EXCL), _Log(
                os.getpid(), path, key, header
            )
        except FileExistsError:
            n += 1  # another process's, or an earlier one of this: never shared


def _open(path: str, flags: int) -> int:
    try:
        return os.open(path, flags, 0o600)
    except FileExistsError:
        raise
    except OSError as exc:
        raise filestate.WriteError(f"{path}: cannot journal: {exc.strerror or exc}") from exc


def forget_logs(journal_dir: str) -> None:
    """This process's next entry of the run goes to a new journal file, numbered after every
    file there now (so it counts over a dead worker's entry for the same file)."""
    with _LOCK:
        _LOGS.pop(journal_dir, None)


def _log_entries(path: str, key: Callable[[], bytes]) -> list[bytes]:
    """The whole entries of one journal file, each proven; a torn tail is dropped.

    Only an append that never finished (a killed or powered-off writer) tears a file, and
    only at its end (a run that replaces files syncs each entry before the next). What it
    can leave is
    an entry cut short, one whose seal fails as the file's last, or zeros (a power
    cut can keep a file's new length but not its bytes): a file that is zeros from some
    point on ends there (an entry ends in `}`, never a zero byte), and an entry of length 0
    is the start of zeros (an entry is never empty). A file holding no whole header (its
    first write torn) holds no entry. Any other entry whose seal fails means the file was
    altered or damaged: IntegrityError.
    """
    data = _read(path).rstrip(b"\0")
    if len(data) < _HEADER_SIZE and _MAGIC.startswith(data[: len(_MAGIC)]):
        return []
    found = _HEADER.match(data[:_HEADER_SIZE])
    if found is None:
        raise integrity.IntegrityError(
            f"{path}: no journal header: not a journal file thinkfix wrote, or one damaged "
            "since; undo only follows journals thinkfix wrote"
        )
    secret = key()
    if found.group(1).decode() != integrity.key_id(secret):
        raise integrity.other_key(path, found.group(1).decode(), secret)
    out: list[bytes] = []
    last, at = data[:_HEADER_SIZE], _HEADER_SIZE
    while len(data) - at >= _LENGTH + _SEAL:
        size = int.from_bytes(data[at : at + _LENGTH], "big")
        end = at + _LENGTH + _SEAL + size
        if size == 0 or end > len(data):
            break  # the last entry, torn: zeros, or cut short
        seal = data[at + _LENGTH : at + _LENGTH + _SEAL]
        body = data[at + _LENGTH + _SEAL : end]
        if not integrity.chained_ok(secret, last, body, seal):
            if end == len(data):
                break  # the last entry, torn
            raise integrity.IntegrityError(
                f"{path}: the integrity seal of entry {len(out) + 1} does not match and "
                "entries follow it: the journal file was altered or damaged after thinkfix "
                "wrote it; refusing to follow it"
            )
        out.append(body)
        last, at = seal, end
    return out


def recover_journal(journal_dir: str, known: set[str]) -> list[dict[str, Any]]:
    """Journaled entries of files that were really written (their bytes are the new ones).

    ManifestError when the journal cannot be read (its seals fail): never taken for one
    that holds nothing, for it is then the only record of the files the run replaced."""
    out: list[dict[str, Any]] = []
    for entry in journal_entries(journal_dir):
        target = entry.get("target")
        if not isinstance(target, str) or target in known:
            continue
        if is_store_entry(entry):  # committed when its rows are the repair's
            if store.state(entry)[0] == "after":
                out.append(entry)
            continue
        if holds_written(entry):
            out.append(entry)
    return out


def holds_written(entry: dict[str, Any]) -> bool:
    """Does an entry's file (not a store's) hold the bytes the repair wrote: was it replaced?"""
    target = entry["target"]
    try:
        now = urlwrite.sha256(target) if remote.is_url(target) else current_sha256(target)
    except filestate.WriteError:
        return False
    return now is not None and now == entry["after"]["sha256"]


def journal_entries(journal_dir: str) -> list[dict[str, Any]]:
    """Every journaled entry in file order, each seal proven first (ManifestError otherwise).

    Read from the journal files (`<n>.log`, in the order they were made, a file's last entry
    for each file counting) and from the layout earlier versions wrote (`<n>.json` with its
    detached seal `<n>.json.hmac`): a run journaled by one still undoes.
    """
    if not os.path.isdir(journal_dir):
        return []
    names = os.listdir(journal_dir)
    old = sorted(n for n in names if n.endswith(".json"))
    logs = sorted((int(m.group(1)), n) for n in names if (m := _LOG_NAME.match(n)))
    if not old and not logs:
        return []
    keys: list[bytes] = []

    def key() -> bytes:  # loaded once, and only where a seal is there to check
        if not keys:
            keys.append(integrity.load_key(state_dir(), create=False))
        return keys[0]

    by_file: dict[int, list[dict[str, Any]]] = {}
    with _journal_errors(journal_dir, "malformed journal"):
        for name in old:
            by_file[_old_index(journal_dir, name)] = _old_entries(journal_dir, name, key)
        for _, name in logs:
            path = os.path.join(journal_dir, name)
            for body in _log_entries(path, key):
                doc = jsontext.loads(body)
                if (
                    not isinstance(doc, dict)
                    or not isinstance(doc.get("index"), int)
                    or not isinstance(doc.get("files"), list)
                ):
                    raise ManifestError(f"{path}: malformed journal: not a file's entries")
                by_file[doc["index"]] = doc["files"]
    return [e for n in sorted(by_file) for e in by_file[n]]


def _old_index(journal_dir: str, name: str) -> int:
    stem = name[: -len(".json")]
    if not stem.isdigit():
        raise ManifestError(f"{os.path.join(journal_dir, name)}: not a journal file thinkfix wrote")
    return int(stem)


def _old_entries(journal_dir: str, name: str, key: Callable[[], bytes]) -> list[dict[str, Any]]:
    """One file's entries in the layout before #26 item 4, its detached seal proven first."""
    path = os.path.join(journal_dir, name)
    data = _read(path)
    seal = (
        _read(path + integrity.MAC_SUFFIX) if os.path.exists(path + integrity.MAC_SUFFIX) else None
    )
    integrity.require_detached(seal, path)
    entries = jsontext.loads(integrity.open_bytes(data, seal, key(), path))
    if not isinstance(entries, list):
        raise ManifestError(f"{path}: malformed journal: not a list of entries")
    return entries


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
            "files": journal_entries(journal_dir),
            "journal": True,
            "mode": header.get("mode"),
            "roots": header.get("roots"),
            "backup_dir": header.get("backup_dir"),
            "cwd": header.get("cwd"),
        }
        integrity.check_document(doc, journal_dir)
    return doc


def remove_journal(journal_dir: str) -> None:
    forget_logs(journal_dir)
    shutil.rmtree(journal_dir, ignore_errors=True)


def write_manifest(path: str, doc: dict[str, Any]) -> None:
    """The finished manifest, sealed with the state folder's key so undo can trust it."""
    safewrite.atomic_write(
        path,
        integrity.seal_document(document_bytes(doc), _key(create=True)),
        mode=0o600,
        make_dirs=True,
    )


# --- reading ---------------------------------------------------------------------------------


def load_manifest(path: str) -> dict[str, Any]:
    """A manifest document (`path` the manifest or its run's folder); a run that died before
    finishing is read from its journal."""
    journal_dir = path + JOURNAL_SUFFIX
    if not os.path.exists(path) and os.path.isdir(journal_dir):
        return _journal_document(journal_dir)
    inner = os.path.join(path, MANIFEST_NAME)  # a run's folder: its manifest, or its journal
    if os.path.isdir(path) and (os.path.exists(inner) or os.path.isdir(inner + JOURNAL_SUFFIX)):
        return load_manifest(inner)
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
