"""The junit reporter: one testsuite per file, one testcase per finding or error."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

from thinkfix.engine.report import Report
from thinkfix.reporters.base import OutputFormat
from thinkfix.reporters.junit import xml_safe
from thinkfix.reporters.registry import REPORTERS


def _root(report: Report) -> ET.Element:
    text = REPORTERS[OutputFormat.JUNIT].render(report)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(text.encode("utf-8"))


def _count(element: ET.Element, key: str) -> int:
    return int(element.attrib[key])


def test_junit_counts_match_the_report(full: Report) -> None:
    root = _root(full)
    new = len(full.new_findings)
    baselined = len(full.findings) - new
    clean_files = len(
        set(full.summary.by_file) - {f.path for f in full.findings} - {e.path for e in full.errors}
    )
    skipped = len(full.skipped)
    assert skipped  # skipped files are skipped test cases (#10)
    assert _count(root, "tests") == len(full.findings) + len(full.errors) + clean_files + skipped
    assert _count(root, "failures") == new == len(root.findall(".//failure"))
    # The Jenkins/Surefire schema has no `skipped` on <testsuites> (issue 14 #9): per suite.
    assert "skipped" not in root.attrib
    per_suite = sum(_count(suite, "skipped") for suite in root.findall("testsuite"))
    assert per_suite == baselined + skipped == len(root.findall(".//skipped"))
    assert _count(root, "errors") == len(full.errors) == len(root.findall(".//error"))


def test_junit_has_one_suite_per_file_with_consistent_counts(full: Report) -> None:
    root = _root(full)
    names = [suite.attrib["name"] for suite in root.findall("testsuite")]
    expected = (
        set(full.summary.by_file)
        | {f.path for f in full.findings}
        | {e.path for e in full.errors}
        | {s.path for s in full.skipped}
    )
    assert names == sorted(expected)
    for suite in root.findall("testsuite"):
        assert _count(suite, "tests") == len(suite.findall("testcase")) >= 1
        assert _count(suite, "failures") == len(suite.findall("testcase/failure"))
        assert all(
            case.attrib["classname"] == suite.attrib["name"] for case in suite.findall("testcase")
        )


def test_junit_clean_file_is_one_passing_testcase(clean: Report) -> None:
    root = _root(clean)
    assert _count(root, "failures") == _count(root, "errors") == 0
    for suite in root.findall("testsuite"):
        (case,) = suite.findall("testcase")
        assert list(case) == []


def test_junit_failure_carries_the_leaked_text_with_illegal_characters_made_visible(
    full: Report,
) -> None:
    root = _root(full)
    bodies = [failure.text or "" for failure in root.iter("failure")]
    assert any("bell ␇ <script>&amp;</script>" in body for body in bodies)


def test_junit_survives_control_characters_in_names(full: Report) -> None:
    finding = full.findings[0]._replace(path="a\x00b.jsonl", json_path="x\x1by")
    root = _root(replace(full, findings=(finding,), errors=()))
    assert root.find(".//testsuite[@name='a␀b.jsonl']") is not None


def test_junit_skipped_file_is_one_skipped_testcase_saying_why(full: Report) -> None:
    root = _root(full)
    for s in full.skipped:
        (suite,) = [x for x in root.findall("testsuite") if x.attrib["name"] == s.path]
        (case,) = suite.findall("testcase")
        (skipped,) = list(case)
        # The Jenkins/Surefire XSD gives <skipped> text, not attributes (issue 14 #9).
        assert skipped.tag == "skipped" and s.reason in (skipped.text or "")
        assert _count(suite, "skipped") == 1 and _count(suite, "failures") == 0


def test_junit_of_an_empty_report_has_no_suites(empty: Report) -> None:
    root = _root(empty)
    assert root.findall("testsuite") == [] and _count(root, "tests") == 0


def test_xml_safe_keeps_legal_text_and_escapes_the_rest() -> None:
    assert xml_safe("tab\tnew\nline ◁ \U0001f600") == "tab\tnew\nline ◁ \U0001f600"
    assert xml_safe("\x00\x1f\ufffe\ud800") == "\\x00\\x1f\\ufffe\\ud800"
