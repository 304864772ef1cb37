"""The json reporter is exactly `Report.to_dict()`."""

from __future__ import annotations

import json

from thinkfix.engine.report import SCHEMA_VERSION, Report
from thinkfix.reporters.base import OutputFormat, RenderOptions
from thinkfix.reporters.registry import REPORTERS


def test_json_parses_to_report_to_dict(any_report: Report) -> None:
    document = json.loads(REPORTERS[OutputFormat.JSON].render(any_report))
    assert document == any_report.to_dict()
    assert document["schema_version"] == SCHEMA_VERSION


def test_json_keeps_schema_version_first(full: Report) -> None:
    assert REPORTERS[OutputFormat.JSON].render(full).startswith('{\n  "schema_version": 1,')


def test_json_writes_raw_utf8_not_escapes(full: Report) -> None:
    assert "◁/think▷" in REPORTERS[OutputFormat.JSON].render(full)


def test_json_ignores_human_options(full: Report) -> None:
    reporter = REPORTERS[OutputFormat.JSON]
    assert reporter.render(
        full, RenderOptions(statistics=True, color=True, max_findings=1)
    ) == reporter.render(full)
