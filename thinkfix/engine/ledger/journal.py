"""The manifest on disk: journaled a file at a time as a run goes (before each file is replaced, so a run that dies midway can be undone), sealed into the finished manifest, and read back and checked (its seal, schema and paths) before undo trusts it."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Sequence
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

    The seal goes first: a crash between the two leaves a seal with no entries, which
    is harmless, never entries undo would refuse. `durable=False` (a run that only creates
    files: `--out` to a folder holding none of its outputs) skips the syncs: a killed run's
    entries are whole all the same, and a power cut can lose only the undo of files that
    were created, never bytes that were there before.
    """
    path = os.path.join(journal_dir, f"{index:08d}.json")
    data = document_bytes(list(entries))
    # The journal's folder was swept as the run started it (`start_journal`): two listings per
    # file journaled made a run quadratic in its files.
    safewrite.atomic_write(
        path + integrity.MAC_SUFFIX,
        integrity.seal_bytes(data, _key(create=True)),
        mode=0o600,
        make_dirs=True,
        durable=durable,
        sweep=False,
    )
    safewrite.atomic_write(path, data, mode=0o600, make_dirs=True, durable=durable, sweep=False)


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
        entries = journal_entries(journal_dir)
    except ManifestError:
        return out  # not what this run journaled: nothing of it goes into a sealed manifest
    for entry in entries:
        target = entry.get("target")
        if not isinstance(target, str) or target in known:
            continue
        if is_store_entry(entry):  # committed when its rows are the repair's
            if store.state(entry)[0] == "after":
                out.append(entry)
            continue
        try:
            now = urlwrite.sha256(target) if remote.is_url(target) else current_sha256(target)
        except filestate.WriteError:
            continue
        if now is not None and now == entry["after"]["sha256"]:
            out.append(entry)
    return out


def journal_entries(journal_dir: str) -> list[dict[str, Any]]:
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
