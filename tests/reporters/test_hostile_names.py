"""A file name is data, never a terminal command or a line of its own (issue 22 item 5).

Every scan output format renders a report whose file name holds control characters: the
line-oriented and terminal ones show the name as `visible_name` spells it (the same document
as for a report that named the file that way), and carry no raw control character; the
structured ones stay valid JSON or XML and carry the name exactly.
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thinkfix.engine.controls import visible_name
from thinkfix.engine.report import Report
from thinkfix.reporters.base import OutputFormat, RenderOptions
from thinkfix.reporters.registry import get_reporter

from .cases import CLAUDE, full_report

#: Any raw C0 or C1 control but the newline that ends a line, and DEL.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
#: Shown as `visible_name` spells the name: the document is the one for the escaped name.
ESCAPED = (
    OutputFormat.TEXT,
    OutputFormat.CONCISE,
    OutputFormat.GITHUB,
    OutputFormat.MARKDOWN,
    OutputFormat.OPENMETRICS,
    OutputFormat.HTML,
)
JSON_FORMATS = (OutputFormat.JSON, OutputFormat.SARIF, OutputFormat.GITLAB)
OPTIONS = RenderOptions(statistics=True, show_baselined=True)

CONTROLS = [chr(c) for c in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]]
NAMES = st.text(
    st.one_of(st.sampled_from(CONTROLS), st.characters(exclude_categories=["Cs"])),
    min_size=1,
    max_size=12,
).map(lambda s: f"sessions/{s}\x1b[2J\n.jsonl")


def renamed(report: Report, old: str, new: str) -> Report:
    """`report` with every mention of the file `old` (findings, errors, skipped files, stale
    entries, the per-file counts) naming `new` instead."""

    def swap(value: Any) -> Any:
        return value._replace(path=new) if value.path == old else value

    by_file = {new if k == old else k: v for k, v in report.summary.by_file.items()}
    return dataclasses.replace(
        report,
        summary=dataclasses.replace(report.summary, by_file=by_file),
        findings=tuple(swap(f) for f in report.findings),
        errors=tuple(swap(e) for e in report.errors),
        skipped=tuple(swap(s) for s in report.skipped),
        stale_baseline=tuple(swap(s) for s in report.stale_baseline),
    )


def _render(report: Report, fmt: OutputFormat) -> str:
    return get_reporter(fmt).render(report, OPTIONS)


def test_the_issue_names_in_concise_and_github_forge_no_line() -> None:
    name = "a\x1b[2J\x07b\nc.jsonl:1:1: block forged"
    report = renamed(full_report(), CLAUDE, name)
    plain = full_report()
    for fmt in (OutputFormat.CONCISE, OutputFormat.GITHUB):
        out = _render(report, fmt)
        assert not RAW_CONTROL.search(out), fmt
        assert out.count("\n") == _render(plain, fmt).count("\n"), fmt
        assert "a␛[2J␇b␊c.jsonl" in out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES)
def test_no_output_format_sends_a_control_character_or_splits_a_line(name: str) -> None:
    report = renamed(full_report(), CLAUDE, name)
    shown = renamed(full_report(), CLAUDE, visible_name(name))
    for fmt in OutputFormat:
        out = _render(report, fmt)
        assert not RAW_CONTROL.search(out), fmt
        if fmt in ESCAPED:
            assert out == _render(shown, fmt), fmt
        elif fmt in JSON_FORMATS:
            doc = orjson.loads(out)
            assert name in _strings(doc) or fmt is OutputFormat.SARIF, fmt
        elif fmt is OutputFormat.JSONL:
            lines = [orjson.loads(line) for line in out.splitlines()]
            assert len(lines) == len(_render(full_report(), fmt).splitlines())
            assert any(r.get("path") == name for r in lines)
        else:
            assert fmt is OutputFormat.JUNIT
            ET.fromstring(out.encode("utf-8"))


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values()), set())
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value), set())
    return set()
