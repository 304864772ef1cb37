"""A scan's unit of work: one whole file, detected, opened and read; never raising.

The pool, split pieces too small to split, incremental scans and Dask workers all run this
one function, so a file's result is the same wherever it is scanned.
"""

from __future__ import annotations

import os

from thinkfix.engine.inputs.files import DISABLED, Candidate, InputFile, resolve
from thinkfix.engine.report import InputError
from thinkfix.engine.scan.one_file import _FileScan
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.formats.records import set_record_limit
from thinkfix.io.errors import ErrorKind


def scan_file(item: Candidate | InputFile, options: ScanOptions = ScanOptions()) -> ScannedFile:
    """Detect (if needed) and scan one file. Never raises for a bad file: errors are values,
    and an unexpected exception (a bug met on this file) is an error for this file alone."""
    set_record_limit(options.max_record_size)
    try:
        return _scan_file(item, options)
    except Exception as exc:  # noqa: BLE001 - one odd file must not end a run over thousands
        path = getattr(item, "path", "?")
        return ScannedFile(
            path,
            None,
            max(0, getattr(item, "size", 0) or 0),
            errors=(
                InputError(
                    path,
                    None,
                    ErrorKind.INTERNAL,
                    f"cannot scan: internal error ({type(exc).__name__}: {exc})",
                ),
            ),
        )


def _scan_file(item: Candidate | InputFile, options: ScanOptions) -> ScannedFile:
    file = resolve(item, options.inputs)
    if file.error is not None:
        return ScannedFile(file.path, file.format, file.size, errors=(file.error,))
    if file.skipped is not None:
        return ScannedFile(file.path, file.format, file.size, skipped=file.skipped)
    if options.path_disabled(file.path):
        return ScannedFile(file.path, file.format, file.size, skipped=DISABLED)
    scan = _FileScan(file, file.session_format(), options)
    try:
        with file.open() as fp:
            size = _size(fp)
            scan.run(fp)
            changed = rewritten(file.path, fp, size)
            if changed is not None:
                scan.errors.append(changed)
    except (OSError, EOFError, ValueError) as exc:
        scan.errors.append(
            InputError(
                file.path,
                None,
                ErrorKind.UNREADABLE,
                f"read failed after {_records_read(scan)} records: {_why(exc, options)}",
            )
        )
    except Exception as exc:  # noqa: BLE001 - one odd file must not end a run over thousands
        scan.errors.append(
            InputError(
                file.path,
                None,
                ErrorKind.UNREADABLE,
                f"read failed after {_records_read(scan)} records: "
                f"{type(exc).__name__}: {_why(exc, options)}",
            )
        )
    result = scan.result()
    unread = any(e.kind is ErrorKind.UNREADABLE for e in scan.errors)
    return _with_health(file, result, options) if options.checks and not unread else result


def _records_read(scan: _FileScan) -> int:
    """The records read before a failure ended the read: the fast path's sparse reader counts
    them (`SparseReader.records`), and `scan.records` takes that count only once the file is
    read to its end (the hot loop keeps no count of its own per block); the record-by-record
    path counts each record as it is read."""
    return scan.reader.records if scan.reader is not None else scan.records


def _why(exc: BaseException, options: ScanOptions) -> str:
    """An exception's text as the report shows it, masked as the run's snippets are
    (`--redact`): a reader's error may quote what it read (sqlite3's decode error quoted a
    row's text, `formats.sqlite_store._text`), and no reporter masks an error's message."""
    text = str(exc)
    if options.redaction is Redaction.NONE:
        return text
    from thinkfix.engine.secrets.rules import mask_secrets  # only for a file that failed

    return mask_secrets(text)


def _size(fp: object) -> int | None:
    """The size of the file under `fp` now, or None where it has no descriptor of its own
    (a zstd stream, a remote object)."""
    try:
        return os.fstat(fp.fileno()).st_size  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None


def rewritten(path: str, fp: object, size: int | None) -> InputError | None:
    """An error for a file that shrank while it was read (`size`: its size before): a
    runtime that saves by truncating and writing the same file (Node's `writeFileSync`, a
    compaction) did so mid-read, and what was read may join two versions. A session only
    grows otherwise, and what an append adds is read or is a partial last line (review8,
    finding 5: a rewrite between two block reads was counted clean, exit 0)."""
    now = _size(fp)
    if size is None or now is None or now >= size:
        return None
    return InputError(
        path,
        None,
        ErrorKind.CHANGED,
        f"changed while it was being read (it shrank from {size:,} to {now:,} bytes: "
        "rewritten?); scan it again",
    )


def _with_health(file: InputFile, result: ScannedFile, options: ScanOptions) -> ScannedFile:
    """`--check`: the health checks over the file in a pass of their own (the leak scan's
    pass skips what cannot hold a leak; the checks read every record)."""
    from thinkfix.engine.health.run import check_stream

    try:
        with file.open() as fp:
            health = check_stream(
                fp,
                file.session_format(),
                options.checks,
                file.real_path,
                options.health,
                shown=file.path,
            )
    except Exception as exc:  # noqa: BLE001 - as the scan: one odd file must not end a run
        error = InputError(
            file.path, None, ErrorKind.UNREADABLE, f"health checks: {type(exc).__name__}: {exc}"
        )
        return result._replace(errors=(*result.errors, error))
    return result._replace(health=health.findings, bytes_by_type=health.bytes_by_type)
