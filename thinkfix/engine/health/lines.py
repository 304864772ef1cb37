"""`lines`: records a runtime cannot read, and where it stops reading the session.

A record is judged by the error its format's reader gave it (`Record.error`): only a
record whose bytes do not parse counts here (too large is `size`'s, a JSON value of an
unknown shape is no damage to the file). What the bytes are is then told apart: NUL
padding from an interrupted append, two records glued on one line (`}{`), one record split
over lines by a raw newline inside a string, a record cut short, bytes that are not UTF-8,
anything else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace

from thinkfix.engine.health.where import Where
from thinkfix.engine.report.health import HealthFinding, Problem
from thinkfix.formats.records import Record

#: Errors `formats.base.parse_json` gives bytes that do not parse (its prefixes).
_PARSE_ERRORS = ("not UTF-8", "truncated", "not JSON")
#: At most this many lines are joined to find one record split by raw newlines.
SPLIT_LINES = 16

#: What a runtime does at a record it cannot parse. Claude Code's `--resume` stopped
#: loading at the first one until 2.1.121, which skips it (anthropics/claude-code#50347,
#: #49876: NUL padding; the 2.1.121 release notes).
STOPS_BEFORE = {"claude-code": (2, 1, 121)}
_RUNTIME = {"claude-code": "Claude Code"}
#: Runtimes whose loader skips such a record and reads on: pi
#: (packages/coding-agent/src/core/session-manager.ts `parseSessionEntries`), Codex
#: (codex-rs/core/src/rollout/recorder.rs `get_rollout_history`: "failed to parse line as
#: JSON", continue), Gemini CLI (packages/core/src/services/chatRecordingService.ts
#: `loadConversationRecord`: "ignore parse errors on individual lines").
SKIPS = {"pi": "pi", "codex": "Codex", "gemini-cli": "Gemini CLI"}
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _version(value: object) -> tuple[int, ...] | None:
    m = _VERSION.match(value) if isinstance(value, str) else None
    return tuple(int(g) for g in m.groups()) if m else None


def unreadable(record: Record) -> bool:
    """The record's bytes do not parse (as opposed to too large, or of an unknown shape)."""
    error = record.error
    return error is not None and error.startswith(_PARSE_ERRORS) and bool(record.raw.strip())


def _values(raw: bytes) -> int:
    """How many JSON values follow one another in `raw` (0: it is not such a sequence)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    decoder, at, count = json.JSONDecoder(), 0, 0
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at == len(text):
            return count
        try:
            _, at = decoder.raw_decode(text, at)
        except (json.JSONDecodeError, RecursionError):
            return 0
        count += 1


def _parses(raw: bytes) -> bool:
    """`raw` is one JSON value once raw control characters inside strings are allowed."""
    try:
        json.loads(raw.decode("utf-8"), strict=False)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    return True


def _ends_early(record: Record) -> bool:
    return bool(record.eol) and (record.error or "").startswith("truncated")


class LineCheck:
    """The `lines` visitor: a bad record waits for the next ones in case a raw newline split
    it; everything else is judged alone."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.found: list[HealthFinding] = []
        self.pending: list[tuple[Record, int]] = []
        self.version: tuple[int, ...] | None = None
        self.records = 0

    def feed(self, record: Record, offset: int) -> None:
        self.records += 1
        if self.pending:
            if self._join(record, offset):
                return
            if unreadable(record) and len(self.pending) < SPLIT_LINES:
                self.pending.append((record, offset))
                return
            self._flush()
        if not unreadable(record):
            obj = record.obj
            if obj is not None and self.where.format in STOPS_BEFORE:
                self.version = _version(obj.get("version")) or self.version
            return
        if _ends_early(record):
            self.pending = [(record, offset)]
        else:
            self.found.append(self._alone(record, offset))

    def _join(self, record: Record, offset: int) -> bool:
        parts = [*self.pending, (record, offset)]
        raw = b"".join(r.raw + r.eol for r, _ in parts[:-1]) + record.raw
        if not _parses(raw):
            return False
        first, at = parts[0]
        self.pending = []
        self.found.append(
            self.where.finding(
                first,
                Problem.SPLIT_RECORD,
                f"one record split over lines {first.line}-{record.line} by a raw line break "
                "inside a string",
                content=raw,
                offset=at,
                size=len(raw),
                end_line=record.line,
            )
        )
        return True

    def _flush(self) -> None:
        pending, self.pending = self.pending, []
        self.found.extend(self._alone(r, at) for r, at in pending)

    def _alone(self, record: Record, offset: int) -> HealthFinding:
        raw, error = record.raw, record.error or ""
        if b"\x00" in raw:
            rest = raw.replace(b"\x00", b"")
            problem = Problem.NUL_PADDING
            what = f"{raw.count(0)} NUL bytes (an interrupted append)" + (
                ", then a record that reads once they are cut" if _values(rest) == 1 else ""
            )
        elif error.startswith("not UTF-8"):
            problem, what = Problem.NOT_UTF8, f"bytes that are not UTF-8 ({error})"
        elif (n := _values(raw)) > 1:
            problem, what = Problem.GLUED, f"{n} records glued on one line"
        elif error.startswith("truncated"):
            problem = Problem.TRUNCATED
            what = (
                "the last record is cut short (no line end)"
                if not record.eol
                else "a record cut short, then the next record on a new line"
            )
        else:
            problem, what = Problem.NOT_JSON, f"not a record ({error})"
        return self.where.finding(record, problem, what, offset=offset, size=len(raw))

    def finish(self) -> Iterator[HealthFinding]:
        self._flush()
        found = sorted(self.found, key=lambda f: f.record_index)
        cut = STOPS_BEFORE.get(self.where.format)
        stops = found and cut is not None and (self.version is None or self.version < cut)
        skips = SKIPS.get(self.where.format)
        for i, finding in enumerate(found):
            if skips is not None:
                finding = replace(
                    finding, message=f"{finding.message}; {skips} skips it and reads on"
                )
            if i == 0 and stops:
                later = self.records - 1 - (finding.record_index + _span(finding))
                runtime = _RUNTIME[self.where.format]
                before = ".".join(map(str, cut or ()))
                finding = replace(
                    finding,
                    stops_reading=True,
                    message=f"{finding.message}; {runtime} before {before} stops loading the "
                    f"session here ({later} later records are not read)",
                )
            yield finding


def _span(finding: HealthFinding) -> int:
    """Records a finding covers past its first (a split record's continuation lines)."""
    return finding.end_line - finding.line if finding.end_line else 0
