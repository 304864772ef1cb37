"""SARIF 2.1.0, for code-scanning dashboards (GitHub code scanning, GitLab, Azure DevOps)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from thinkfix.engine.report import SCHEMA_VERSION, InputError, LeakFinding, Report, SkippedFile
from thinkfix.engine.report.health import HealthFinding
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    describe_kind,
    error_message,
    finding_message,
    health_message,
    health_rule,
    health_title,
    pretty_json,
    report_kinds,
    skipped_message,
)

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"  # the uriBaseId relative artifact URIs are relative to
FINGERPRINT_KEY = "thinkfix/v1"  # versioned so a new fingerprint scheme is not matched with old

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:/")


def artifact_uri(path: str) -> str:
    """A URI reference for a report path: relative paths stay relative, absolute ones get file://.

    Code-scanning services resolve relative URIs against the checkout, which is what a scan of a
    repository produces; the reporter never touches the file system to make paths relative.
    """
    posix = path.replace("\\", "/")
    if _WINDOWS_DRIVE.match(posix):
        return "file:///" + quote(posix, safe="/:")
    if posix.startswith("/"):
        return "file://" + quote(posix, safe="/")
    return quote(posix, safe="/")


def root_uri(root: str) -> str:
    """The `file:` URI of a folder, ending in `/` as SARIF requires of a base URI."""
    uri = artifact_uri(root.rstrip("/\\") + "/")
    return uri if uri.startswith("file:") else "file:///" + uri.lstrip("/")


def _artifact(path: str) -> dict[str, Any]:
    uri = artifact_uri(path)
    # A relative URI names its base, so a viewer away from the checkout can still resolve it.
    return (
        {"uri": uri}
        if uri.startswith("file:") or path == "-"
        else {"uri": uri, "uriBaseId": SRCROOT}
    )


def _physical(path: str, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(path)}
    if line and line > 0:
        physical["region"] = {"startLine": line}
    return physical


def _rule(kind: str) -> dict[str, Any]:
    return {
        "id": kind,
        "name": "".join(part.capitalize() for part in kind.split("_")) + "ReasoningLeak",
        "shortDescription": {"text": f"Leaked reasoning: {kind.replace('_', ' ')}"},
        "fullDescription": {"text": describe_kind(kind)},
        "defaultConfiguration": {"level": "error"},
    }


def _result(f: LeakFinding, rule_index: dict[str, int]) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": _physical(f.path, f.line)}
    if f.json_path:
        location["logicalLocations"] = [{"fullyQualifiedName": f.json_path, "kind": "member"}]
    result: dict[str, Any] = {
        "ruleId": f.kind,
        "ruleIndex": rule_index[f.kind],
        # A baselined finding stays visible but does not fail the run, like the exit code.
        "level": "note" if f.baselined else "error",
        "baselineState": "unchanged" if f.baselined else "new",
        "message": {"text": finding_message(f)},
        "locations": [location],
    }
    if f.fingerprint:
        result["partialFingerprints"] = {FINGERPRINT_KEY: f.fingerprint}
    properties = {
        "format": f.format,
        "tag": f.tag,
        "leakedChars": f.leaked_chars,
        "model": f.model,
        "sessionId": f.session_id,
        "messageId": f.message_id,
        "messageIndex": f.message_index,
    }
    result["properties"] = {k: v for k, v in properties.items() if v is not None}
    return result


def _health_rule(problem: str, check: str) -> dict[str, Any]:
    return {
        "id": f"health/{problem}",
        "name": "".join(part.capitalize() for part in problem.split("-")) + "SessionHealth",
        "shortDescription": {"text": f"Session health: {problem} ({check})"},
        "fullDescription": {
            "text": f"A `{check}` problem (`scan --check`) a runtime may refuse to load or "
            "replay; docs/health.md says what it means."
        },
        "defaultConfiguration": {"level": "error"},
    }


def _health_result(h: HealthFinding, rule_index: dict[str, int]) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": _physical(h.path, h.line)}
    if h.json_path:
        location["logicalLocations"] = [{"fullyQualifiedName": h.json_path, "kind": "member"}]
    properties = {"format": h.format, "check": h.check.value, "detail": h.detail or None}
    return {
        "ruleId": health_rule(h),
        "ruleIndex": rule_index[health_rule(h)],
        "level": "note" if h.baselined else "error",
        "baselineState": "unchanged" if h.baselined else "new",
        "message": {"text": health_message(h)},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: h.fingerprint},
        "properties": {k: v for k, v in properties.items() if v is not None}
        | ({"sessionId": h.session_id} if h.session_id else {})
        | {"title": health_title(h)},
    }


def _notification(e: InputError) -> dict[str, Any]:
    return {
        "level": "error",
        "message": {"text": error_message(e)},
        "descriptor": {"id": e.kind},
        "locations": [{"physicalLocation": _physical(e.path, e.line)}],
    }


def _skipped_notification(s: SkippedFile) -> dict[str, Any]:
    # A note, not an error: a walked folder holds other JSON. But it is in the log, so a
    # dashboard shows which files were never read.
    return {
        "level": "note",
        "message": {"text": skipped_message(s)},
        "descriptor": {"id": "skipped_file"},
        "locations": [{"physicalLocation": _physical(s.path, None)}],
    }


def to_sarif(report: Report) -> dict[str, Any]:
    """The SARIF log as a dict, for callers that merge runs or add to it."""
    kinds = report_kinds(report)
    rule_index = {kind: i for i, kind in enumerate(kinds)}
    driver: dict[str, Any] = {"name": TOOL_NAME, "rules": [_rule(k) for k in kinds]}
    health = report.health.findings if report.health is not None else ()
    problems = sorted({(h.problem.value, h.check.value) for h in health})
    for problem, check in problems:  # `scan --check`: one rule per problem found
        rule_index[f"health/{problem}"] = len(driver["rules"])
        driver["rules"].append(_health_rule(problem, check))
    if report.tool_version:
        driver["version"] = report.tool_version
    invocation: dict[str, Any] = {
        # Any input error means some text went unread, so the run did not fully succeed.
        "executionSuccessful": not report.errors,
        "toolExecutionNotifications": [_notification(e) for e in report.errors]
        + [_skipped_notification(s) for s in report.skipped],
    }
    if report.stale_baseline:
        invocation["toolConfigurationNotifications"] = [
            {
                "level": "note",
                "message": {
                    "text": f"baseline entry {s.fingerprint} for {s.path} matches no finding"
                },
                "descriptor": {"id": "stale_baseline"},
            }
            for s in report.stale_baseline
        ]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "results": [_result(f, rule_index) for f in report.findings]
        + [_health_result(h, rule_index) for h in health],
        "properties": {"schema_version": SCHEMA_VERSION, "summary": report.summary.to_dict()},
    }
    if report.root:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": root_uri(report.root)}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


class SarifReporter(Reporter):
    """One run, one rule per leak kind, one result per finding; input errors as notifications."""

    format = OutputFormat.SARIF
    media_type = "application/sarif+json"
    suffix = ".sarif"

    def document(self, report: Report, options: RenderOptions) -> bytes:
        return pretty_json(to_sarif(report))
