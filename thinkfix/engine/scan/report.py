"""Many files' results -> one `Report`: `build_report` merges and sorts them, so processing
order never shows, and `require_sessions` turns a run that read no session into an error.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from thinkfix.engine.inputs.files import DISABLED, UNKNOWN
from thinkfix.engine.report import (
    InputError,
    LeakFinding,
    MessageCounts,
    Report,
    SkippedFile,
    Summary,
)
from thinkfix.engine.report.checks import Check
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.formats import registry
from thinkfix.io.errors import ErrorKind
from thinkfix.io.paths import display_path

if TYPE_CHECKING:  # a scan that ran no check loads no health value (`_health_section`)
    from thinkfix.engine.report.health import HealthFinding, HealthSection


class _Tally:
    """Messages, leaking messages and findings of one format, model or day (a plain class:
    a dataclass costs ~1 ms of every start-up to define)."""

    __slots__ = ("assistant", "findings", "leaking")

    def __init__(self) -> None:
        self.assistant = self.leaking = self.findings = 0


def error_key(e: InputError) -> tuple[str, int, str, str]:
    return (e.path, -1 if e.line is None else e.line, e.kind, e.message)


def build_report(
    results: Iterable[ScannedFile], tool_version: str = "", *, checks: tuple[Check, ...] = ()
) -> Report:
    """Merge per-file results into one `Report`, sorted so processing order never shows;
    with `checks` (`scan --check`), their findings and bytes by type too."""
    files = records = assistant = leaking = 0
    findings: list[LeakFinding] = []
    health: list[HealthFinding] = []
    type_bytes: dict[str, dict[str, list[int]]] = {}
    errors: list[InputError] = []
    skipped: list[SkippedFile] = []
    by_format: dict[str, _Tally] = {}
    by_model: dict[str, _Tally] = {}
    by_file: dict[str, MessageCounts] = {}
    by_day: dict[str, dict[str, _Tally]] = {}
    by_format_and_model: dict[str, dict[str, _Tally]] = {}
    for r in results:
        errors.extend(r.errors)
        if r.skipped is not None:
            skipped.append(SkippedFile(r.path, r.skipped))
            continue
        if r.format is None:
            continue
        files += 1
        records += r.records
        assistant += r.assistant_messages
        leaking += r.leaking_messages
        findings.extend(r.findings)
        health.extend(r.health)
        for kind, n, size in r.bytes_by_type:
            row = type_bytes.setdefault(r.format, {}).setdefault(kind, [0, 0])
            row[0], row[1] = row[0] + n, row[1] + size
        fmt = by_format.setdefault(r.format, _Tally())
        fmt.assistant += r.assistant_messages
        fmt.leaking += r.leaking_messages
        fmt.findings += len(r.findings)
        for model, a, lk, n in r.by_model:
            for tally in (
                by_model.setdefault(model, _Tally()),
                by_format_and_model.setdefault(r.format, {}).setdefault(model, _Tally()),
            ):
                tally.assistant, tally.leaking, tally.findings = (
                    tally.assistant + a,
                    tally.leaking + lk,
                    tally.findings + n,
                )
        by_file[r.path] = MessageCounts(
            r.assistant_messages, r.leaking_messages, len(r.findings), r.format
        )
        for day, model, a, lk, n in r.by_day:
            tally = by_day.setdefault(day, {}).setdefault(model, _Tally())
            tally.assistant, tally.leaking, tally.findings = (
                tally.assistant + a,
                tally.leaking + lk,
                tally.findings + n,
            )
    findings.sort()
    summary = Summary(
        files=files,
        records=records,
        assistant_messages=assistant,
        leaking_messages=leaking,
        findings=len(findings),
        leaked_chars=sum(f.leaked_chars for f in findings),
        baselined=sum(1 for f in findings if f.baselined),
        by_kind=dict(sorted(Counter(f.kind for f in findings).items())),
        by_format={
            k: MessageCounts(t.assistant, t.leaking, t.findings)
            for k, t in sorted(by_format.items())
        },
        by_model={
            k: MessageCounts(t.assistant, t.leaking, t.findings)
            for k, t in sorted(by_model.items())
        },
        by_file=dict(sorted(by_file.items())),
        by_day=_nested(by_day),
        by_format_and_model=_nested(by_format_and_model),
    )
    return Report(
        summary=summary,
        findings=tuple(findings),
        errors=tuple(sorted(errors, key=error_key)),
        skipped=tuple(sorted(skipped)),
        tool_version=tool_version,
        health=_health_section(checks, health, type_bytes) if checks else None,
    )


def _health_section(
    checks: tuple[Check, ...],
    found: list[HealthFinding],
    type_bytes: dict[str, dict[str, list[int]]],
) -> HealthSection:
    """`scan --check`'s section: the checks, their findings sorted, the bytes by type."""
    from thinkfix.engine.report.health import HealthSection, TypeBytes

    return HealthSection(
        checks,
        tuple(sorted(found)),
        {
            fmt: {k: TypeBytes(n, b) for k, (n, b) in sorted(kinds.items())}
            for fmt, kinds in sorted(type_bytes.items())
        },
    )


def _nested(tallies: dict[str, dict[str, _Tally]]) -> dict[str, dict[str, MessageCounts]]:
    """Two levels of tallies (day or format, then model) as counts, both levels sorted."""
    return {
        key: {
            m: MessageCounts(t.assistant, t.leaking, t.findings) for m, t in sorted(inner.items())
        }
        for key, inner in sorted(tallies.items())
    }


def require_sessions(report: Report, paths: Sequence[str], options: ScanOptions) -> Report:
    """A run that read no session file is an error, not a clean run (unless allowed).

    Green must mean "read and found nothing": when the paths hold no file any format
    claims (all unknown JSON, only empty files, an empty folder), the report gets a
    `no_sessions` error that says what was found and what to do. Files a format
    claimed but the configuration disables count as claimed: the user chose that.
    """
    claimed = report.summary.files or any(s.reason == DISABLED for s in report.skipped)
    if claimed or report.errors or options.allow_no_sessions:
        return report
    where = ", ".join(paths) or "."
    return replace(
        report,
        errors=(
            InputError(where, None, ErrorKind.NO_SESSIONS, no_sessions_message(report, options)),
        ),
    )


def no_sessions_message(report: Report, options: ScanOptions, shown: int = 3) -> str:
    """What the paths held, and the ways out: --format, --exclude, --allow-no-sessions."""
    cwd = os.getcwd()
    by_reason: dict[str, list[str]] = {}
    for s in report.skipped:
        by_reason.setdefault(s.reason, []).append(display_path(s.path, cwd))
    if not by_reason:
        include = ", ".join(options.inputs.include) or "*.jsonl, *.json"
        return (
            "no session file to check: no file is named like one ("
            + include
            + ", compressed or archived copies too) once excludes and ignore files apply. "
            "Name the files, widen --include, or pass --allow-no-sessions where a run "
            "with nothing to check is expected"
        )
    parts = [
        f"{len(files)} {reason}: {name_some(files, shown)}"
        for reason, files in sorted(by_reason.items())
    ]
    n = len(report.skipped)
    text = (
        f"no session file to check: {n} file{'' if n == 1 else 's'} found, none in a "
        f"known session format ({'; '.join(parts)}). "
    )
    if UNKNOWN in by_reason:
        text += (
            "If they are sessions, name their format with --format NAME ("
            + ", ".join(registry.names())
            + "); otherwise leave them out with --exclude "
            "GLOB, or pass"
        )
    else:
        text += "Pass"
    return text + " --allow-no-sessions where a run with nothing to check is expected"


def name_some(paths: Sequence[str], shown: int = 3) -> str:
    """`a, b, c and 4 more`: enough names to find the files, never a wall of them."""
    names = ", ".join(paths[:shown])
    return names + (f" and {len(paths) - shown} more" if len(paths) > shown else "")


def with_display_paths(report: Report, cwd: str | None = None) -> Report:
    """The report with every file path spelled by `display_path`, and `root` set to `cwd`."""
    cwd = os.path.abspath(cwd if cwd is not None else os.getcwd())

    def show(path: str) -> str:
        return display_path(path, cwd)

    summary = replace(
        report.summary, by_file={show(k): v for k, v in report.summary.by_file.items()}
    )
    return replace(
        report,
        summary=replace(summary, by_file=dict(sorted(summary.by_file.items()))),
        findings=tuple(sorted(f._replace(path=show(f.path)) for f in report.findings)),
        errors=tuple(
            sorted(
                (e._replace(path=show(e.path)) for e in report.errors),
                key=lambda e: (e.path, -1 if e.line is None else e.line, e.kind, e.message),
            )
        ),
        skipped=tuple(sorted(s._replace(path=show(s.path)) for s in report.skipped)),
        root=cwd,
        health=None
        if report.health is None
        else replace(
            report.health,
            findings=tuple(sorted(replace(f, path=show(f.path)) for f in report.health.findings)),
        ),
    )
