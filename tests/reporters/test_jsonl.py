"""The jsonl reporter: a header line, then one typed object per finding, error and stale entry."""

from __future__ import annotations

import json
from collections import Counter

from thinkfix.engine.report import SCHEMA_VERSION, Report
from thinkfix.reporters.base import OutputFormat
from thinkfix.reporters.registry import REPORTERS


def _lines(report: Report) -> list[dict[str, object]]:
    text = REPORTERS[OutputFormat.JSONL].render(report)
    assert text.endswith("\n") and "\n\n" not in text
    return [json.loads(line) for line in text.splitlines()]


def test_jsonl_header_carries_schema_version_and_summary(any_report: Report) -> None:
    header = _lines(any_report)[0]
    assert header["type"] == "header"
    assert header["schema_version"] == SCHEMA_VERSION
    assert header["summary"] == any_report.summary.to_dict()


def test_jsonl_has_one_typed_line_per_finding_error_and_stale_entry(full: Report) -> None:
    lines = _lines(full)
    assert all(next(iter(line)) == "type" for line in lines)
    assert Counter(line["type"] for line in lines) == {
        "header": 1,
        "finding": len(full.findings),
        "error": len(full.errors),
        "stale_baseline": len(full.stale_baseline),
    }
    findings = [
        {k: v for k, v in line.items() if k != "type"}
        for line in lines
        if line["type"] == "finding"
    ]
    assert findings == [f.to_dict() for f in full.findings]
    errors = [
        {k: v for k, v in line.items() if k != "type"} for line in lines if line["type"] == "error"
    ]
    assert errors == [e.to_dict() for e in full.errors]


def test_jsonl_of_an_empty_report_is_the_header_alone(empty: Report) -> None:
    assert [line["type"] for line in _lines(empty)] == ["header"]
