"""Undo obeys only manifests this thinkfix wrote: a keyed seal, a schema and path checks.

A manifest tells `undo` which files to overwrite, with what bytes and mode, and
which to delete; a forged one could write anywhere the user can. So every
manifest (and every journal entry of a run that died) is sealed with an
HMAC-SHA256 keyed by a secret kept in the state folder (`undo.key`, created
0600 on first use), and undo refuses a document whose seal does not verify
before reading any of it. What passes is then checked as if it were hostile
anyway: the schema (clear errors, never a traceback), every target inside the
run's recorded roots and free of symlinks swapped in since, every backup inside
the run's backup folder, deletions only of files the run created, and modes
limited to permission bits (never setuid, setgid or sticky).

The seal is over the exact bytes written, so no canonical re-serialisation is
needed: a manifest is its JSON document with one last key, `integrity`, whose
value is the HMAC of the document written without it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
from collections.abc import Iterable, Sequence
from typing import Any

from thinkfix.io import remote

KEY_NAME = "undo.key"
KEY_BYTES = 32
SIDECAR_SUFFIX = ".thinkfix.json"
ALGORITHM = "hmac-sha256"
MAC_SUFFIX = ".hmac"  # a journal file's seal sat beside it (the layout before #26 item 4)

_TRAILER = re.compile(
    rb',\n  "integrity": \{"alg": "hmac-sha256", "key": "([0-9a-f]{16})", '
    rb'"mac": "([0-9a-f]{64})"\}\n\}\n\Z'
)
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


class IntegrityError(Exception):
    """A manifest this thinkfix did not write, or one that is not a sound manifest."""


# --- the key ---------------------------------------------------------------------------------


def key_path(state: str) -> str:
    return os.path.join(state, KEY_NAME)


def load_key(state: str, *, create: bool) -> bytes:
    """The state folder's secret; made (0600, atomically) on first use when `create`."""
    path = key_path(state)
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            raise IntegrityError(
                f"no undo key in {state}: this manifest was not written by thinkfix with this "
                "state folder (set THINKFIX_STATE_DIR to the one the repair used)"
            ) from None
    os.makedirs(state, mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, secrets.token_bytes(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # never replaces a key another run made meanwhile
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return _read_key(path)


def _read_key(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise IntegrityError(f"{path}: the undo key is not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise IntegrityError(f"{path}: the undo key belongs to another user")
        if info.st_mode & 0o077:
            raise IntegrityError(
                f"{path}: the undo key is readable or writable by others "
                f"(mode {stat.S_IMODE(info.st_mode):o}); chmod 600 it"
            )
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise IntegrityError(f"{path}: the undo key is damaged ({len(data)} bytes)")
    return data


def key_id(key: bytes) -> str:
    return hashlib.sha256(b"thinkfix undo key id\0" + key).hexdigest()[:16]


def mac(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


# --- sealing and opening ---------------------------------------------------------------------


def seal_document(body: bytes, key: bytes) -> bytes:
    """A JSON object's bytes (indented by two, ending `\\n}\\n`) with its seal as the last key."""
    if not body.endswith(b"\n}\n"):
        raise ValueError("a sealed document is an indented JSON object")
    trailer = (
        f',\n  "integrity": {{"alg": "{ALGORITHM}", "key": "{key_id(key)}", '
        f'"mac": "{mac(key, body)}"}}\n}}\n'
    ).encode()
    return body[:-3] + trailer


def _trailer(data: bytes, where: str) -> tuple[int, re.Match[bytes]]:
    at = data.rfind(b',\n  "integrity": ')
    found = _TRAILER.match(data, at) if at >= 0 else None
    if found is None:
        raise IntegrityError(
            f"{where}: not sealed by thinkfix (no integrity seal); undo only "
            "follows manifests thinkfix wrote"
        )
    return at, found


def require_seal(data: bytes, where: str) -> None:
    """IntegrityError when `data` carries no seal at all (checked before any key is needed)."""
    _trailer(data, where)


def open_document(data: bytes, key: bytes, where: str) -> bytes:
    """The document bytes a seal covers, after proving it; IntegrityError otherwise."""
    at, found = _trailer(data, where)
    body = data[:at] + b"\n}\n"
    return _check(body, key, found.group(1).decode(), found.group(2).decode(), where)


def seal_bytes(data: bytes, key: bytes) -> bytes:
    """A detached seal (for journal files, whose document is a list)."""
    return f"{ALGORITHM} {key_id(key)} {mac(key, data)}\n".encode()


def open_bytes(data: bytes, seal: bytes | None, key: bytes, where: str) -> bytes:
    """`data` after proving its detached seal; IntegrityError otherwise."""
    parts = require_detached(seal, where)
    return _check(data, key, parts[1], parts[2], where)


def chained_mac(key: bytes, previous: bytes, body: bytes) -> bytes:
    """The seal of one entry of an append-only journal file: over the seal before it (the
    file's header, which names a random nonce, for the first), its length and its bytes, so
    no entry can be altered, reordered, left out or moved from another file unseen."""
    sealed = hmac.new(key, previous, hashlib.sha256)
    sealed.update(len(body).to_bytes(8, "big"))
    sealed.update(body)
    return sealed.digest()


def chained_ok(key: bytes, previous: bytes, body: bytes, seal: bytes) -> bool:
    return hmac.compare_digest(chained_mac(key, previous, body), seal)


def altered(where: str) -> IntegrityError:
    return IntegrityError(
        f"{where}: the integrity seal does not match: the manifest was "
        "altered after thinkfix wrote it; refusing to follow it"
    )


def other_key(where: str, kid: str, key: bytes) -> IntegrityError:
    return IntegrityError(
        f"{where}: sealed with another undo key (key {kid}, this state "
        f"folder's is {key_id(key)}); undo it with the state folder the "
        "repair used (THINKFIX_STATE_DIR)"
    )


def require_detached(seal: bytes | None, where: str) -> list[str]:
    parts = seal.decode("ascii", "replace").split() if seal is not None else []
    if len(parts) != 3 or parts[0] != ALGORITHM:
        raise IntegrityError(
            f"{where}: not sealed by thinkfix (missing or malformed "
            f"{MAC_SUFFIX} file); undo only follows journals thinkfix wrote"
        )
    return parts


def _check(body: bytes, key: bytes, kid: str, want: str, where: str) -> bytes:
    if kid != key_id(key):
        raise other_key(where, kid, key)
    if not hmac.compare_digest(mac(key, body), want):
        raise altered(where)
    return body


# --- the run's roots -------------------------------------------------------------------------


def run_roots(paths: Iterable[str], out_dir: str | None) -> list[str]:
    """Where a run may write: each named path and the output folder, as given and resolved.
    A URL output folder is kept as written; a URL input is never written (not in place)."""
    out: set[str] = set()
    if out_dir and remote.is_url(out_dir):
        out.add(out_dir.rstrip("/"))
    for p in [*paths, *([out_dir] if out_dir else [])]:
        if p == "-" or remote.is_url(p):
            continue
        out.add(os.path.abspath(p))
        out.add(os.path.realpath(p))
    return sorted(out)


def _under(path: str, root: str) -> bool:
    return (
        path == root
        or path == root + SIDECAR_SUFFIX
        or path.startswith(root.rstrip(os.sep) + os.sep)
    )


# --- the schema and the paths ----------------------------------------------------------------


class _Checker:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, what: str) -> IntegrityError:
        return IntegrityError(f"{self.where}: malformed manifest: {what}")

    def get(self, obj: Any, key: str, types: type | tuple[type, ...], at: str) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(f"{at} is not an object")
        if key not in obj:
            raise self.fail(f"{at}.{key} is missing")
        value = obj[key]
        if not isinstance(value, types) or (
            isinstance(value, bool)
            and bool not in (types if isinstance(types, tuple) else (types,))
        ):
            raise self.fail(f"{at}.{key} has the wrong type ({type(value).__name__})")
        return value

    def path(self, value: Any, at: str) -> str:
        if not isinstance(value, str) or not value or "\0" in value:
            raise self.fail(f"{at} is not a path")
        if remote.is_url(value):  # an output written to an fsspec URL (repair --out URL)
            if any(part in (".", "..") for part in value.split("://", 1)[1].split("/")):
                raise self.fail(f"{at} {value!r} is not a normalised URL")
            return value
        if (
            not os.path.isabs(value)
            or os.path.normpath(value) != value
            or any(part == ".." for part in value.split(os.sep))
        ):
            raise self.fail(f"{at} {value!r} is not a normalised absolute path")
        return value

    def sha(self, obj: Any, at: str) -> str:
        value = self.get(obj, "sha256", str, at)
        if not _HEX64.match(value):
            raise self.fail(f"{at}.sha256 is not a SHA-256")
        return str(value)

    def mode(self, obj: Any, at: str) -> int:
        value = self.get(obj, "mode", str, at)
        try:
            number = int(value, 8)
        except ValueError:
            raise self.fail(f"{at}.mode {value!r} is not an octal mode") from None
        if number < 0 or number > 0o7777:
            raise self.fail(f"{at}.mode {value!r} is not a file mode")
        return number


def check_document(
    doc: Any,
    where: str,
    *,
    roots: Sequence[str] | None = None,
    backup_dir: str | None = None,
    mode: str | None = None,
) -> None:
    """IntegrityError unless `doc` has the manifest's shape and stays inside its roots.

    A finished manifest carries its roots, backup folder and mode; a journal passes the ones
    recorded when its run started.
    """
    c = _Checker(where)
    if not isinstance(doc, dict):
        raise c.fail("not an object")
    if roots is None:
        roots = c.get(doc, "roots", list, "manifest")
        backup_dir = doc.get("backup_dir")
        mode = c.get(doc, "mode", str, "manifest")
    for i, root in enumerate(roots):
        c.path(root, f"roots[{i}]")
    if backup_dir is not None:
        c.path(backup_dir, "backup_dir")
    if mode not in ("in-place", "out"):
        raise c.fail(f"mode {mode!r} is not in-place or out")
    files = c.get(doc, "files", list, "manifest")
    for i, entry in enumerate(files):
        _check_entry(c, entry, f"files[{i}]", roots, backup_dir, mode)


def _check_entry(
    c: _Checker, entry: Any, at: str, roots: Sequence[str], backup_dir: str | None, mode: str
) -> None:
    role = c.get(entry, "role", str, at)
    if role not in ("session", "sidecar", "database"):
        raise c.fail(f"{at}.role {role!r} is not session, sidecar or database")
    target = c.path(c.get(entry, "target", str, at), f"{at}.target")
    link = entry.get("link")
    if link is not None:
        c.path(link, f"{at}.link")
    if not any(_under(target, r) for r in roots) and not (
        link is not None and any(_under(link, r) for r in roots)
    ):
        raise c.fail(
            f"{at}.target {target} is outside the folders the repair was given "
            f"({', '.join(roots) or 'none recorded'})"
        )
    after = c.get(entry, "after", dict, at)
    c.sha(after, f"{at}.after")
    c.mode(after, f"{at}.after")
    before = entry.get("before", None)
    if before is not None and remote.is_url(target):
        raise c.fail(f"{at}.before is not null, but a URL output is only ever created")
    if before is None:
        if role != "sidecar" and mode != "out":
            raise c.fail(
                f"{at}.before is null, but an in-place repair creates no session "
                "file (undo would delete it)"
            )
    else:
        c.get(entry, "before", dict, at)
        c.sha(before, f"{at}.before")
        c.mode(before, f"{at}.before")
        backup = before.get("backup")
        if backup is not None:
            c.path(backup, f"{at}.before.backup")
            if backup_dir is None or not backup.startswith(backup_dir.rstrip(os.sep) + os.sep):
                raise c.fail(f"{at}.before.backup {backup} is outside the run's backup folder")
        if "bytes" in before:
            _check_blob(c, before["bytes"], f"{at}.before.bytes")
    if role == "database" and "rows" in entry:
        for k, row in enumerate(c.get(entry, "rows", list, at)):
            where = f"{at}.rows[{k}]"
            c.get(row, "table", str, where)
            if not c.get(row, "key", dict, where):
                raise c.fail(f"{where}.key is empty")
            if not isinstance(row.get("before"), (dict, type(None))):
                raise c.fail(f"{where}.before is neither a row nor null")
            after = row.get("after_sha256")
            if after is not None and not (isinstance(after, str) and _HEX64.match(after)):
                raise c.fail(f"{where}.after_sha256 is not a SHA-256")
            columns = row.get("repaired_columns", {})
            if not isinstance(columns, dict) or not all(
                isinstance(v, str) and _HEX64.match(v) for v in columns.values()
            ):
                raise c.fail(f"{where}.repaired_columns is not a column's SHA-256 each")
    if role == "session":
        content = c.get(entry, "content", dict, at)
        if c.get(content, "rebuildable", bool, f"{at}.content"):
            c.get(entry, "format", str, at)
            c.get(content, "after_records", int, f"{at}.content")
            for k, rec in enumerate(c.get(entry, "records", list, at)):
                where = f"{at}.records[{k}]"
                inserted = c.get(rec, "inserted", bool, where)
                c.get(c.get(rec, "after", dict, where), "index", int, f"{where}.after")
                if not inserted:
                    _check_blob(c, c.get(rec, "before", dict, where), f"{where}.before")
                if "tree_changes" in rec:
                    _check_tree(c, rec["tree_changes"], f"{where}.tree_changes")


def _check_tree(c: _Checker, changes: Any, at: str) -> None:
    """A document's changed values (`docwise.tree_changes`): each a path of keys and indices
    and the SHA-256 of what the repair left there."""
    if not isinstance(changes, list) or not changes:
        raise c.fail(f"{at} is not a list of changed values")
    for k, change in enumerate(changes):
        path = c.get(change, "path", list, f"{at}[{k}]")
        length = change.get("length")
        if length is not None and (type(length) is not int or length < 0):
            raise c.fail(f"{at}[{k}].length is not a list's length")
        if (not path and length is None) or not all(
            isinstance(s, str) or type(s) is int for s in path
        ):
            raise c.fail(f"{at}[{k}].path is not a path of keys and indices")
        digest = change.get("after_sha256")
        if not (isinstance(digest, str) and _HEX64.match(digest)):
            raise c.fail(f"{at}[{k}].after_sha256 is not a SHA-256")


def _check_blob(c: _Checker, blob: Any, at: str) -> None:
    if isinstance(blob, dict) and isinstance(blob.get("text"), str):
        return
    if isinstance(blob, dict) and isinstance(blob.get("base64"), str):
        return
    raise c.fail(f"{at} holds neither text nor base64")


def safe_target(target: str) -> str | None:
    """Why writing `target` now would leave the place the repair wrote, else None: a symlink
    put where the file was, or a folder on its path swapped for a link since the repair."""
    if remote.is_url(target):
        return None  # no symbolic links to follow on an object store
    parent = os.path.dirname(target)
    if os.path.realpath(parent) != parent:
        return (
            f"{target}: a folder on its path is now a symbolic link; refusing to write through it"
        )
    if os.path.islink(target):
        return f"{target}: is now a symbolic link; refusing to write through it"
    return None
