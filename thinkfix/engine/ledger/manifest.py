"""The undo manifest: everything a repair changed, enough to put every byte back.

One JSON document per repair run (`schema_version` first). For each file
written it holds the hashes and sizes of the bytes before and after, where the
previous bytes can be had (a verified backup, the bytes themselves, or the
changed records' original bytes, from which the file is rebuilt), and for each
changed record its line, byte offset, length and hashes before and after. For
each repaired message it holds the extracted reasoning and where it was placed,
so nothing is lost even where the format has no place for reasoning (Claude
Code's default mode keeps it here only).

This module builds the document and its entries; `journal` writes it (a file at a time as the
run goes, then sealed) and reads it back checked; `restore` is undo.
"""

from __future__ import annotations

import base64
import contextlib
import os
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from thinkfix._version import __version__
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import ApplyOptions
from thinkfix.io import filestate, jsontext, remote, safewrite
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


def unblob(blob: dict[str, Any]) -> bytes:
    if "text" in blob:
        return str(blob["text"]).encode("utf-8", "surrogatepass")
    return base64.b64decode(blob["base64"])


def _state(
    snapshot: filestate.Snapshot | filestate.FileState | None, backup: str | None, embed: bool
) -> dict[str, Any] | None:
    if snapshot is None:
        return None
    size = len(snapshot.data) if isinstance(snapshot, filestate.Snapshot) else snapshot.size
    out: dict[str, Any] = {
        "sha256": snapshot.sha256,
        "size": size,
        "mode": oct(snapshot.mode),
        "backup": backup,
    }
    if embed:  # no backup and no way to rebuild: the bytes themselves
        out["bytes"] = _blob(
            snapshot.data if isinstance(snapshot, filestate.Snapshot) else snapshot.read()
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
        "text_before_sha256": filestate.sha256(site.text.encode("utf-8", "surrogatepass")),
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
    before: filestate.FileState | None,
    backup: str | None,
    written: safewrite.Written,
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
    new: Record,
    new_offset: int,
    old: tuple[int, Record, int] | None,
    tree: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One changed (`old` is its original index, record and offset) or inserted record;
    `tree`: a whole document's changed values (`docwise.tree_changes`), so that undo can put
    them back in the document its runtime saved again since."""
    after = {
        "index": new.index,
        "line": new.line,
        "offset": new_offset,
        "length": len(new.raw),
        "sha256": filestate.sha256(new.raw),
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
            "sha256": filestate.sha256(rec.raw),
            **_blob(rec.raw),
        },
        "after": after,
        **({"tree_changes": tree} if tree else {}),
    }


def sidecar_entry(
    path: str, target: str, before: filestate.Snapshot | None, backup: str | None, data: bytes
) -> dict[str, Any]:
    """The manifest entry of a sidecar file (reasoning a format had no place for). `added`
    lists the reasoning entries this repair added, so that its undo may take out those alone
    once a later repair added its own (`sidecar_without`)."""
    earlier = (sidecar_entries(before.data) or []) if before is not None else []
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
            "sha256": filestate.sha256(data),
            "size": len(data),
            "mode": oct(before.mode if before else 0o644),
        },
        "records": [],
        "repairs": [],
        "added": [e for e in sidecar_entries(data) or [] if e not in earlier],
    }


def sidecar_entries(data: bytes) -> list[Any] | None:
    """The reasoning entries of a sidecar document, None when `data` is not one."""
    with contextlib.suppress(ValueError):
        doc = jsontext.loads(data)
        if isinstance(doc, dict) and isinstance(doc.get("reasoning"), list):
            return list(doc["reasoning"])
    return None


def sidecar_without(data: bytes, added: list[Any]) -> tuple[bytes | None, int] | None:
    """The sidecar document `data` with the entries a repair `added` taken out, each once:
    (its bytes, None when no entry is left, as before any repair made it; how many of
    `added` were there), or None when `data` is no sidecar document."""
    doc = None
    with contextlib.suppress(ValueError):
        doc = jsontext.loads(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("reasoning"), list):
        return None
    left, found = list(doc["reasoning"]), 0
    for entry in added:
        if entry in left:
            left.remove(entry)
            found += 1
    if not left:
        return None, found
    return jsontext.dumps(doc | {"reasoning": left}, indent=True, newline=True), found


def sidecar_document(
    fmt: str, source_name: str, changes: Iterable[Change], existing: bytes | None
) -> bytes:
    """`<file>.thinkfix.json`: the reasoning of messages whose format cannot hold it."""
    entries = (sidecar_entries(existing) or []) if existing is not None else []
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
            "apply": apply._asdict(),
        },
        "files": list(entries),
    }


def document_bytes(value: Any) -> bytes:
    # Extracted reasoning may hold a lone surrogate (valid JSON): kept as its escape.
    return jsontext.dumps(value, indent=True, newline=True)


def current_state(target: str) -> filestate.FileState | None:
    if not os.path.lexists(target):
        return None
    return filestate.file_state(target)


def current_sha256(target: str) -> str | None:
    now = current_state(target)
    return None if now is None else now.sha256


def is_store_entry(entry: dict[str, Any]) -> bool:
    """A store undone row by row; a store's --out copy at a URL is an object like any other
    URL output (removed while it holds the bytes written)."""
    return entry.get("role") == "database" and not remote.is_url(str(entry.get("target")))
