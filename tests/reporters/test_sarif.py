"""The sarif reporter: a valid SARIF 2.1.0 log with one run, one rule per leak kind."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from thinkfix.engine.report import Report
from thinkfix.normalizer.kinds import LeakKind
from thinkfix.reporters.base import OutputFormat
from thinkfix.reporters.registry import REPORTERS
from thinkfix.reporters.sarif import FINGERPRINT_KEY, artifact_uri

# The parts of the SARIF 2.1.0 schema this reporter uses, with the constraints code-scanning
# services reject uploads for. The full OASIS schema is checked in test_schemas.py; this subset names what services require.
_MESSAGE = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
_PHYSICAL = {
    "type": "object",
    "required": ["artifactLocation"],
    "properties": {
        "artifactLocation": {
            "type": "object",
            "required": ["uri"],
            "properties": {"uri": {"type": "string", "format": "uri-reference"}},
        },
        "region": {
            "type": "object",
            "required": ["startLine"],
            "properties": {"startLine": {"type": "integer", "minimum": 1}},
        },
    },
}
_LOCATION = {"type": "object", "properties": {"physicalLocation": _PHYSICAL}}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
_NOTIFICATION = {
    "type": "object",
    "required": ["message"],
    "properties": {
        "message": _MESSAGE,
        "level": _LEVEL,
        "locations": {"type": "array", "items": _LOCATION},
    },
}
SARIF_SUBSET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string"},
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {
                                                "id": {"type": "string"},
                                                "shortDescription": _MESSAGE,
                                                "fullDescription": _MESSAGE,
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "properties": {"level": _LEVEL},
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "invocations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["executionSuccessful"],
                            "properties": {
                                "executionSuccessful": {"type": "boolean"},
                                "toolExecutionNotifications": {
                                    "type": "array",
                                    "items": _NOTIFICATION,
                                },
                                "toolConfigurationNotifications": {
                                    "type": "array",
                                    "items": _NOTIFICATION,
                                },
                            },
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message", "ruleId"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": 0},
                                "level": _LEVEL,
                                "baselineState": {
                                    "enum": ["new", "unchanged", "updated", "absent"]
                                },
                                "message": _MESSAGE,
                                "locations": {"type": "array", "items": _LOCATION},
                                "partialFingerprints": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                                "properties": {"type": "object"},
                            },
                        },
                    },
                    "properties": {"type": "object"},
                },
            },
        },
    },
}


def _sarif(report: Report) -> dict[str, Any]:
    return json.loads(REPORTERS[OutputFormat.SARIF].render(report))  # type: ignore[no-any-return]


def test_sarif_validates_against_the_schema_subset(any_report: Report) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(
        _sarif(any_report), SARIF_SUBSET_SCHEMA, format_checker=jsonschema.FormatChecker()
    )


def test_sarif_has_one_run_by_thinkfix(full: Report) -> None:
    log = _sarif(full)
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "thinkfix"
    assert run["tool"]["driver"]["version"] == full.tool_version
    assert run["properties"]["schema_version"] == 1


def test_sarif_has_one_rule_per_leak_kind_and_every_result_names_one(full: Report) -> None:
    run = _sarif(full)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids))
    assert set(ids) >= {k.value for k in LeakKind}
    assert len(run["results"]) == len(full.findings)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_adds_a_rule_for_a_kind_it_does_not_know(full: Report) -> None:
    report = replace(full, findings=(full.findings[0]._replace(kind="future_kind"),))
    run = _sarif(report)["runs"][0]
    assert run["tool"]["driver"]["rules"][run["results"][0]["ruleIndex"]]["id"] == "future_kind"


def test_sarif_results_locate_fingerprint_and_grade_each_finding(full: Report) -> None:
    results = _sarif(full)["runs"][0]["results"]
    for finding, result in zip(full.findings, results):
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == artifact_uri(finding.path)
        assert physical["region"] == {"startLine": finding.line}
        assert (
            result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == finding.json_path
        )
        assert result["partialFingerprints"] == {FINGERPRINT_KEY: finding.fingerprint}
        expected = ("note", "unchanged") if finding.baselined else ("error", "new")
        assert (result["level"], result["baselineState"]) == expected


def test_sarif_reports_input_errors_as_failed_execution(full: Report, clean: Report) -> None:
    invocation = _sarif(full)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    errors = [n for n in notes if n["level"] == "error"]
    assert [n["descriptor"]["id"] for n in errors] == [e.kind for e in full.errors]
    # Skipped files are notes: visible in the log, not a failed execution by themselves (#10).
    skipped = [n for n in notes if n["level"] == "note"]
    assert len(errors) + len(skipped) == len(notes)
    assert [n["descriptor"]["id"] for n in skipped] == ["skipped_file"] * len(full.skipped)
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in skipped] == [
        artifact_uri(s.path) for s in full.skipped
    ]
    assert len(invocation["toolConfigurationNotifications"]) == len(full.stale_baseline)

    clean_invocation = _sarif(clean)["runs"][0]["invocations"][0]
    assert clean_invocation["executionSuccessful"] is True
    assert clean_invocation["toolExecutionNotifications"] == []


def test_sarif_leaves_out_what_it_does_not_know(full: Report) -> None:
    finding = full.findings[0]._replace(line=0, fingerprint="", model=None)
    result = _sarif(replace(full, findings=(finding,), tool_version=""))["runs"][0]
    assert "version" not in result["tool"]["driver"]
    (only,) = result["results"]
    assert "region" not in only["locations"][0]["physicalLocation"]
    assert "partialFingerprints" not in only
    assert "model" not in only["properties"]


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("sessions/a.jsonl", "sessions/a.jsonl"),
        ("sessions/pi/odd, name: 100%.jsonl", "sessions/pi/odd%2C%20name%3A%20100%25.jsonl"),
        ("/home/u/.claude/projects/x.jsonl", "file:///home/u/.claude/projects/x.jsonl"),
        ("C:\\Users\\u\\s.jsonl", "file:///C:/Users/u/s.jsonl"),
        ("dir\\s.jsonl", "dir/s.jsonl"),
    ],
)
def test_artifact_uri_is_a_uri_reference(path: str, uri: str) -> None:
    assert artifact_uri(path) == uri
