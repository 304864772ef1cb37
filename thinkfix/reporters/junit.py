"""JUnit XML, so CI test views (GitLab, Jenkins, Azure) list leaks as failed tests per file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from thinkfix.engine.report import InputError, LeakFinding, Report
from thinkfix.engine.report.health import HealthFinding
from thinkfix.reporters.base import (
    TOOL_NAME,
    OutputFormat,
    RenderOptions,
    Reporter,
    error_message,
    finding_message,
    finding_title,
    health_message,
    health_title,
    location,
    scanned_paths,
    skipped_message,
)
from thinkfix.reporters.controls import visible_strings

# Characters XML 1.0 cannot carry even escaped, that remain once the controls are shown
# (`visible_strings`): noncharacters and lone surrogates, which leaked text can hold.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _visible_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(text: str) -> str:
    """Text with every character XML 1.0 forbids shown as a visible `\\xNN` or `\\uNNNN` escape."""
    return _NOT_XML.sub(_visible_escape, text)


def _element(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    child = ET.SubElement(parent, tag, {k: xml_safe(v) for k, v in attrs.items()})
    if text is not None:
        # A parser turns a raw CR into LF anyway; doing it here keeps the file free of bare CRs.
        child.text = xml_safe(text.replace("\r\n", "\n").replace("\r", "\n"))
    return child


def _finding_details(f: LeakFinding) -> str:
    fields = [
        ("location", location(f.path, f.line)),
        ("json path", f.json_path),
        ("format", f.format),
        ("kind", f.kind),
        ("tag", f.tag),
        ("model", f.model),
        ("session", f.session_id),
        ("message", f.message_id),
        ("message index", str(f.message_index)),
        ("leaked chars", str(f.leaked_chars)),
        ("fingerprint", f.fingerprint),
    ]
    lines = [f"{name}: {value}" for name, value in fields if value]
    if f.snippet:
        lines += ["", f.snippet]
    return "\n".join(lines)


def _finding_case(suite: ET.Element, f: LeakFinding) -> None:
    case = _element(
        suite, "testcase", classname=f.path, name=f"line {f.line}: {f.json_path} ({f.kind})"
    )
    if f.baselined:
        # A baselined leak does not fail the run, so it must not fail the test view either.
        # The Jenkins/Surefire schema gives <skipped> text content and no attributes.
        _element(case, "skipped", finding_message(f))
    else:
        _element(
            case, "failure", _finding_details(f), message=finding_message(f), type=finding_title(f)
        )


def _health_case(suite: ET.Element, h: HealthFinding) -> None:
    name = f"line {h.line}: {h.json_path or 'record'} ({h.problem.value})"
    case = _element(suite, "testcase", classname=h.path, name=name)
    if h.baselined:
        _element(case, "skipped", health_message(h))
    else:
        details = (
            f"{location(h.path, h.line)}\ncheck: {h.check.value}\nfingerprint: {h.fingerprint}"
        )
        _element(case, "failure", details, message=health_message(h), type=health_title(h))


def _error_case(suite: ET.Element, e: InputError) -> None:
    name = f"line {e.line}: {e.kind}" if e.line else e.kind
    case = _element(suite, "testcase", classname=e.path, name=name)
    _element(case, "error", location(e.path, e.line), message=error_message(e), type=e.kind)


def _counts(element: ET.Element) -> dict[str, int]:
    cases = element.iter("testcase")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for case in cases:
        totals["tests"] += 1
        for outcome, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            totals[key] += len(case.findall(outcome))
    return totals


def _set_counts(element: ET.Element, keys: tuple[str, ...]) -> None:
    for key, value in _counts(element).items():
        if key in keys:
            element.set(key, str(value))
    # Readers (Jenkins, GitLab) sum `time`; a scan times no test, so each is zero seconds.
    element.set("time", "0")


# The attributes the Jenkins/Surefire XSD allows: <testsuites> has no `skipped`.
_SUITE_COUNTS = ("tests", "failures", "errors", "skipped")
_ROOT_COUNTS = ("tests", "failures", "errors")


class JunitReporter(Reporter):
    """One testsuite per file, one testcase per finding or error; a clean file passes one test,
    a skipped file is one skipped test."""

    format = OutputFormat.JUNIT
    media_type = "application/xml"
    suffix = ".xml"

    def document(self, report: Report, options: RenderOptions) -> str:
        report = visible_strings(report)  # names on one line; CI logs show the text raw
        findings: dict[str, list[LeakFinding]] = defaultdict(list)
        errors: dict[str, list[InputError]] = defaultdict(list)
        for f in report.findings:
            findings[f.path].append(f)
        for e in report.errors:
            errors[e.path].append(e)
        health: dict[str, list[HealthFinding]] = defaultdict(list)
        for h in report.health.findings if report.health is not None else ():
            health[h.path].append(h)
        skipped = {s.path: s for s in report.skipped}

        root = ET.Element("testsuites", {"name": TOOL_NAME})
        for path in scanned_paths(report):
            suite = _element(root, "testsuite", name=path)
            for f in findings[path]:
                _finding_case(suite, f)
            for h in health[path]:
                _health_case(suite, h)
            for e in errors[path]:
                _error_case(suite, e)
            if path in skipped:
                # A file that was not read neither passes nor fails: it is a skipped test.
                case = _element(suite, "testcase", classname=path, name="not scanned")
                _element(case, "skipped", skipped_message(skipped[path]))
            elif not findings[path] and not errors[path] and not health[path]:
                _element(suite, "testcase", classname=path, name="no leaked reasoning")
            _set_counts(suite, _SUITE_COUNTS)
        _set_counts(root, _ROOT_COUNTS)
        ET.indent(root, space="  ")
        body = ET.tostring(root, encoding="unicode", short_empty_elements=True)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
