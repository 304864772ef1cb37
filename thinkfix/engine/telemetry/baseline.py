"""Baselines: accept the leaks a project already has, fail only on new ones.

An entry is identified by its finding's fingerprint (format + session id +
message id or index + hash of the leaked text; see `scan.fingerprint`), never by
line numbers or timestamps, so appending to a session, reformatting it or
moving it does not turn old leaks into new ones. The file is JSON with sorted
keys and a `schema_version`, so it diffs cleanly in review. Paths inside it are
informational (where the leak was seen) and relative to the baseline's folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from thinkfix._serialize import record
from thinkfix.engine.report import LeakFinding, Report, StaleEntry
from thinkfix.engine.report.health import HealthFinding
from thinkfix.io.regular import open_regular

BASELINE_SCHEMA_VERSION = 1


class BaselineError(ValueError):
    """A baseline file that cannot be read or is of an unknown version."""


@dataclass(frozen=True)
class BaselineEntry:
    """One accepted leak."""

    fingerprint: str
    format: str
    session_id: str | None
    message: str  # message id, or `#<index>` when the message has none
    kind: str
    leaked_chars: int
    paths: tuple[str, ...]  # where it was seen, relative to the baseline's folder

    def to_dict(self) -> dict[str, Any]:
        """The file's entry; the fingerprint is its key, not repeated inside."""
        return record(self, ("format", "session_id", "message", "kind", "leaked_chars", "paths"))


@dataclass(frozen=True)
class Baseline:
    """Accepted leaks by fingerprint, and the folder their paths are relative to."""

    entries: dict[str, BaselineEntry]
    root: str = "."

    def covers(self, finding: LeakFinding | HealthFinding) -> bool:
        return finding.fingerprint in self.entries


def _relative(path: str, root: str) -> str:
    if path == "-":
        return path
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    return rel.replace(os.sep, "/")


def from_findings(findings: Iterable[LeakFinding | HealthFinding], root: str = ".") -> Baseline:
    """A baseline accepting every given finding (paths made relative to `root`); a health
    finding (`scan --check`) is kept as kind `health:<problem>`, its subject as the message."""
    entries: dict[str, BaselineEntry] = {}
    for f in findings:
        path = _relative(f.path, root)
        seen = entries.get(f.fingerprint)
        if seen is not None:
            if path not in seen.paths:
                entries[f.fingerprint] = replace(seen, paths=tuple(sorted(seen.paths + (path,))))
            continue
        if isinstance(f, HealthFinding):
            entries[f.fingerprint] = BaselineEntry(
                f.fingerprint,
                f.format,
                f.session_id,
                f.detail or f"#{f.record_index}",
                f"health:{f.problem.value}",
                0,
                (path,),
            )
            continue
        entries[f.fingerprint] = BaselineEntry(
            fingerprint=f.fingerprint,
            format=f.format,
            session_id=f.session_id,
            message=f.message_id or f"#{f.message_index}",
            kind=f.kind,
            leaked_chars=f.leaked_chars,
            paths=(path,),
        )
    return Baseline(dict(sorted(entries.items())), root)


def dumps(baseline: Baseline) -> bytes:
    """The file's bytes: sorted keys, two-space indent, a trailing newline."""
    doc = {
        "schema_version": BASELINE_SCHEMA_VERSION,
        "tool": "thinkfix",
        "findings": {fp: e.to_dict() for fp, e in baseline.entries.items()},
    }
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def loads(data: bytes, root: str = ".", source: str = "baseline") -> Baseline:
    """Parse a baseline file; BaselineError says what is wrong with it."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{source}: not a thinkfix baseline (invalid JSON: {exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), dict):
        raise BaselineError(f"{source}: not a thinkfix baseline (no 'findings' object)")
    version = doc.get("schema_version")
    if version != BASELINE_SCHEMA_VERSION:
        raise BaselineError(
            f"{source}: baseline schema_version {version!r} is not supported "
            f"(this thinkfix writes {BASELINE_SCHEMA_VERSION})"
        )
    entries: dict[str, BaselineEntry] = {}
    for fp, e in doc["findings"].items():
        if not isinstance(e, dict):
            raise BaselineError(f"{source}: entry {fp!r} is not an object")
        paths = e.get("paths") or []
        try:
            leaked = int(e.get("leaked_chars", 0))
        except (TypeError, ValueError):  # an internal error before (review10)
            raise BaselineError(f"{source}: entry {fp!r}: leaked_chars is no number") from None
        entries[fp] = BaselineEntry(
            fingerprint=fp,
            format=str(e.get("format", "")),
            session_id=e.get("session_id"),
            message=str(e.get("message", "")),
            kind=str(e.get("kind", "")),
            leaked_chars=leaked,
            paths=tuple(str(p) for p in paths) if isinstance(paths, list) else (),
        )
    return Baseline(entries, root)


def load(path: str) -> Baseline:
    """Read a baseline file; paths inside it are relative to its folder."""
    try:
        # never `open`: a FIFO would wait for a writer forever, /dev/zero never end (review10)
        with open_regular(path) as fp:
            data = fp.read()
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from exc
    return loads(data, os.path.dirname(os.path.abspath(path)), path)


def apply(report: Report, baseline: Baseline) -> Report:
    """The report with covered findings marked `baselined`, and the stale entries listed.

    An entry is stale when none of this run's findings matches it and one of the
    files it was seen in was scanned in this run or no longer exists; an entry
    for a file this run did not look at is left alone (a scan of some files must
    not call the rest of the baseline stale).
    """
    findings = tuple(
        f._replace(baselined=True) if baseline.covers(f) else f for f in report.findings
    )
    health = (
        None
        if report.health is None
        else replace(
            report.health,
            findings=tuple(
                replace(f, baselined=True) if baseline.covers(f) else f
                for f in report.health.findings
            ),
        )
    )
    found = {f.fingerprint for f in findings}
    found |= {f.fingerprint for f in (health.findings if health else ())}
    scanned = {_relative(p, baseline.root) for p in report.summary.by_file}
    scanned |= {_relative(e.path, baseline.root) for e in report.errors}
    stale = []
    for fp, entry in baseline.entries.items():
        if fp in found:
            continue
        for path in entry.paths or ("",):
            gone = not os.path.exists(os.path.join(baseline.root, path)) if path else True
            if path in scanned or gone:
                stale.append(StaleEntry(fp, path))
                break
    summary = replace(report.summary, baselined=sum(1 for f in findings if f.baselined))
    return replace(
        report,
        summary=summary,
        findings=findings,
        health=health,
        stale_baseline=tuple(sorted(stale, key=lambda s: (s.path, s.fingerprint))),
    )
