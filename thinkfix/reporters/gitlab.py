"""GitLab Code Quality (a JSON array of issues), so merge requests show new leaks inline.

GitLab compares the report of the merge request with the target branch's by `fingerprint`,
so each issue's fingerprint must be stable across runs and unique within the report: it is
derived from the finding's own fingerprint (format, session, message, leaked text) and its path.
See https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format.
"""

from __future__ import annotations

import hashlib
from typing import Any

from thinkfix.engine.report import Report
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    error_message,
    finding_message,
    health_message,
    health_rule,
    pretty_json,
)


def _issue_fingerprint(*parts: object) -> str:
    """GitLab's identity of an issue (derived from, not the same as, a finding's baseline
    `fingerprint`)."""
    return hashlib.md5(
        "\0".join(str(p) for p in parts).encode("utf-8"), usedforsecurity=False
    ).hexdigest()


def _location(path: str, line: int | None) -> dict[str, Any]:
    return {"path": path, "lines": {"begin": line or 1}}


def to_code_quality(report: Report) -> list[dict[str, Any]]:
    """The issues: new findings are major, baselined ones info, unreadable input critical."""
    issues: list[dict[str, Any]] = []
    seen: set[str] = set()
    for f in report.findings:
        fingerprint = _issue_fingerprint(f.fingerprint or f.json_path, f.path, f.line, f.start)
        if fingerprint in seen:  # the same leak twice in one record: keep the first
            continue
        seen.add(fingerprint)
        issues.append(
            {
                "type": "issue",
                "check_name": f"{TOOL_NAME}/{f.kind}",
                "description": finding_message(f),
                "categories": ["Security"],
                "severity": "info" if f.baselined else "major",
                "fingerprint": fingerprint,
                "location": _location(f.path, f.line),
            }
        )
    for h in report.health.findings if report.health is not None else ():
        issues.append(
            {
                "type": "issue",
                "check_name": f"{TOOL_NAME}/{health_rule(h)}",
                "description": health_message(h),
                "categories": ["Security"] if h.check.value == "secrets" else ["Bug Risk"],
                "severity": "info" if h.baselined else "major",
                "fingerprint": _issue_fingerprint("health", h.fingerprint, h.path, h.line),
                "location": _location(h.path, h.line),
            }
        )
    for e in report.errors:
        issues.append(
            {
                "type": "issue",
                "check_name": f"{TOOL_NAME}/{e.kind}",
                "description": error_message(e),
                "categories": ["Bug Risk"],
                "severity": "critical",
                "fingerprint": _issue_fingerprint("error", e.path, e.line, e.kind, e.message),
                "location": _location(e.path, e.line),
            }
        )
    return issues


class GitlabReporter(Reporter):
    """The array GitLab's `artifacts: reports: codequality:` reads."""

    format = OutputFormat.GITLAB
    media_type = "application/json"
    suffix = ".json"

    def document(self, report: Report, options: RenderOptions) -> bytes:
        return pretty_json(to_code_quality(report))
