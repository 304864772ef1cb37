"""The end of a repair run: its journal becomes the sealed undo manifest.

Entries are journaled one file at a time before each file is replaced
(`write`); whatever stopped the run, the driver calls `finalise` before the
exception goes on (an interrupt's says what was replaced), so every file
already replaced is in a manifest undo can follow.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from typing import Any

from thinkfix.engine.repair.model import FileResult, RepairOptions, Replaced, WriteMode
from thinkfix.engine.report import InputError
from thinkfix.io import filestate, remote
from thinkfix.io.errors import ErrorKind


def finalise(
    results: Sequence[FileResult],
    *,
    options: RepairOptions,
    manifest_path: str | None,
    journal_dir: str | None,
    run_dir: str | None,
    backup_dir: str | None,
    tool_version: str,
    roots: Sequence[str] = (),
) -> tuple[tuple[InputError, ...], list[dict[str, Any]]]:
    """Turn the journal into the run's manifest (or remove it when nothing was replaced).

    Results may be missing (a worker died, the run was interrupted, a file met a bug
    after its rename), so the journal's entries of files that now hold the bytes the
    repair wrote count too. A journal that cannot be read is kept as it is and reported
    (it may be the only record of files the run replaced); the manifest then holds the
    files this process knows it replaced.
    """
    errors: list[InputError] = []
    written = [e for r in results for e in r.manifest_entries]
    if journal_dir is None and manifest_path is None:
        return (), written  # a read-only run: no ledger to load (start-up, #26 item 3)
    from thinkfix.engine.ledger import journal as ledger_journal
    from thinkfix.engine.ledger import manifest as mf

    readable = True
    if journal_dir is not None:
        try:
            written += ledger_journal.recover_journal(journal_dir, {e["target"] for e in written})
        except mf.ManifestError as exc:
            readable = False
            errors.append(
                InputError(
                    journal_dir,
                    None,
                    ErrorKind.WRITE_FAILED,
                    f"the run's undo journal cannot be read ({exc}); it is kept as it is: "
                    "files it names may have been replaced, and undo cannot follow them",
                )
            )
    if manifest_path is not None and written:
        try:
            _sync_folders(written)
            ledger_journal.write_manifest(
                manifest_path,
                mf.manifest_document(
                    written,
                    mode=options.mode.value,
                    policy=options.scan.policy,
                    apply=options.apply,
                    backup_dir=backup_dir,
                    tool_version=tool_version,
                    roots=roots,
                ),
            )
            if journal_dir is not None and readable:
                ledger_journal.remove_journal(journal_dir)
        except (OSError, filestate.WriteError) as exc:
            errors.append(
                InputError(
                    manifest_path,
                    None,
                    ErrorKind.WRITE_FAILED,
                    f"the undo manifest could not be written ({exc}); its entries "
                    f"are kept in {journal_dir}",
                )
            )
    elif journal_dir is not None and readable:
        ledger_journal.remove_journal(journal_dir)  # nothing was replaced: nothing to undo
        if run_dir is not None and options.run_dir is None:
            _remove_empty(run_dir)
    return tuple(errors), written


def replaced_files(
    entries: Sequence[dict[str, Any]], mode: WriteMode, outputs: Mapping[str, str]
) -> tuple[Replaced, ...]:
    """The files a run repaired, by path, from the manifest's entries of what it wrote (a
    journal recovers a file whose result never came back, so the entries, not the results,
    say it); `outputs` spells an --out copy as the run named it, where its result is known.
    Sidecars and unchanged copies are left out, as a finished run's lines leave them."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        if e.get("role") in ("session", "database"):
            seen.setdefault(str(e["path"]), []).append(e)
    files = []
    for path, group in sorted(seen.items()):
        # a store journals its entries batch by batch: each holds its own repairs, and all
        # the same fixes
        repairs = [r for e in group for r in e.get("repairs", ())]
        messages = sum(1 for r in repairs if r.get("applied"))
        fixes = max(len(e.get("fixes", ())) for e in group)
        if not messages and not fixes:
            continue
        target = str(group[0]["target"])
        files.append(
            Replaced(
                path,
                outputs.get(path, target) if mode is WriteMode.OUT else None,
                messages,
                fixes,
                tuple(
                    (int(r["line"]), str(r["json_path"]), str(r["reason"]))
                    for r in repairs
                    if not r.get("applied")
                ),
            )
        )
    return tuple(files)


def _sync_folders(entries: Sequence[dict[str, Any]]) -> None:
    """Sync the folder of every local file the run wrote, once each, before the manifest that
    names them: a fresh output's rename is not synced on its own (`repair.write`)."""
    from thinkfix.io.filestate import fsync_folder

    folders = {os.path.dirname(e["target"]) for e in entries if not remote.is_url(e["target"])}
    for folder in sorted(folders):
        fsync_folder(folder)


def _remove_empty(folder: str) -> None:
    """Remove `folder` and its empty subfolders; anything left in it stays."""
    for root, _, _ in sorted(os.walk(folder), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(root)
