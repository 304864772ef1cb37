"""Where a check is looking (file, format, session) and how a finding is made there."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from thinkfix.engine.report.health import HealthFinding, Problem, health_fingerprint
from thinkfix.formats.detection import base_name
from thinkfix.formats.records import Record


def session_of(path: str) -> str:
    """A file's session key when its records name none: its name without archive or
    compression suffixes (what scan's fingerprints use)."""
    return os.path.splitext(base_name(path))[0] if path != "-" else "-"


_SESSION_KEYS = ("sessionId", "session_id", "sessionID")


def record_session(record: Record) -> str | None:
    """The session a record names: its carried context's, or its own `sessionId` field (Claude
    Code, Qwen Code and OpenCode write one on every record and carry no context)."""
    if record.ctx.session_id:
        return record.ctx.session_id
    obj = record.obj
    if obj is None:
        return None
    for key in _SESSION_KEYS:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return None


@dataclass(frozen=True)
class Where:
    """The file a check reads: its path as reports show it, and its format's id."""

    path: str
    format: str

    def finding(
        self,
        record: Record,
        problem: Problem,
        message: str,
        *,
        json_path: str = "",
        detail: str = "",
        content: bytes | None = None,
        **extra: Any,
    ) -> HealthFinding:
        """A finding on `record`; its fingerprint hashes `content` (default: the record's
        bytes) with the problem and `detail`, never the line nor the record's own session id
        (the file's session key: a record before the one naming the session has none)."""
        session = record_session(record)
        return HealthFinding(
            self.path,
            record.line,
            problem.check,
            problem,
            self.format,
            record_index=record.index,
            json_path=json_path,
            detail=detail,
            message=message,
            session_id=session,
            fingerprint=health_fingerprint(
                self.format,
                session_of(self.path),
                problem,
                detail,
                record.raw if content is None else content,
            ),
            **extra,
        )


class Visitor(Protocol):
    """One check over one file: fed every record in order (with its byte offset in the
    decompressed file, -1 where unknown), then asked for its findings."""

    def feed(self, record: Record, offset: int) -> None: ...

    def finish(self) -> Iterable[HealthFinding]: ...
