"""Run the checks a scan asks for over one file, in one pass over its records."""

from __future__ import annotations

import io
from collections.abc import Collection, Iterable
from dataclasses import replace
from typing import BinaryIO

from thinkfix.engine.health.lines import LineCheck
from thinkfix.engine.health.model import DEFAULT_HEALTH, FileHealth, HealthOptions
from thinkfix.engine.health.secrets import SecretCheck
from thinkfix.engine.health.signature import SignatureCheck
from thinkfix.engine.health.size import SizeCheck, record_size
from thinkfix.engine.health.toolpairs import ToolPairCheck
from thinkfix.engine.health.where import Visitor, Where, record_session
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import HealthFinding
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import Record
from thinkfix.io.compression import open_read


def check_records(
    records: Iterable[Record],
    where: Where,
    checks: Collection[Check],
    options: HealthOptions = DEFAULT_HEALTH,
    *,
    offsets: bool = True,
) -> FileHealth:
    """The findings of `checks` over a file's records in read order. `offsets`: the
    records' bytes and line ends make up the file (not a database's rows), so each
    record's byte offset is known."""
    size = SizeCheck(where, options) if Check.SIZE in checks else None
    visitors: list[Visitor] = []
    if Check.SIGNATURE in checks:
        visitors.append(SignatureCheck(where))
    if Check.TOOL_PAIRS in checks:
        visitors.append(ToolPairCheck(where))
    if Check.LINES in checks:
        visitors.append(LineCheck(where))
    if Check.SECRETS in checks:
        visitors.append(SecretCheck(where))
    if size is not None:
        visitors.append(size)
    at = 0
    session: str | None = None
    for record in records:
        session = session or record_session(record)
        offset = at if offsets else -1
        for visitor in visitors:
            visitor.feed(record, offset)
        if offsets:
            at += record_size(record)
    found: list[HealthFinding] = []
    for visitor in visitors:
        found.extend(visitor.finish())
    if session is not None:  # records before the one that names the session
        found = [f if f.session_id else replace(f, session_id=session) for f in found]
    return FileHealth(tuple(sorted(found)), size.bytes_by_type() if size is not None else ())


def check_stream(
    fp: BinaryIO,
    fmt: SessionFormat,
    checks: Collection[Check],
    path: str,
    options: HealthOptions = DEFAULT_HEALTH,
    *,
    shown: str | None = None,
) -> FileHealth:
    """`check_records` over the records `fmt` reads from `fp` (the decompressed bytes of
    the file at `path`); findings name the file as `shown` (default `path`)."""
    where = Where(shown if shown is not None else path, fmt.id)
    return check_records(fmt.read(fp), where, checks, options, offsets=not fmt.is_database(path))


def check_file(
    path: str,
    fmt: SessionFormat,
    checks: Collection[Check],
    options: HealthOptions = DEFAULT_HEALTH,
) -> FileHealth:
    """The checks over the file at `path` (compressed or not), read as `fmt`."""
    with open_read(path) as fp:
        return check_stream(fp, fmt, checks, path, options)


def check_bytes(
    data: bytes,
    fmt: SessionFormat,
    checks: Collection[Check],
    path: str = "-",
    options: HealthOptions = DEFAULT_HEALTH,
) -> FileHealth:
    """The checks over a file's decompressed bytes (a repair's output, before it is
    written): what a fix proves its output by. Not for database formats."""
    return check_records(fmt.read(io.BytesIO(data)), Where(path, fmt.id), checks, options)
