"""Every golden case validates against the schemas CI services read (issue 14 #9): JUnit against
the Jenkins/Surefire XSD (JUnit 5's `jenkins-junit.xsd`), SARIF against the OASIS 2.1.0 schema.
Both schema files are shipped under tests/reporters/schemas/ so these tests need no network."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from thinkfix.reporters.base import OutputFormat
from thinkfix.reporters.registry import REPORTERS

from .cases import clean_report, empty_report, full_report

SCHEMAS = Path(__file__).parent / "schemas"
FIXTURES = Path(__file__).parents[2] / "fixtures"
OASIS_SARIF_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
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


def _sarif_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def _sarif_errors(log: object) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in _sarif_validator().iter_errors(log)]


def test_the_shipped_sarif_schema_is_the_oasis_file() -> None:
    # The OASIS 2.1.0 (errata01) schema, byte for byte: provenance in schemas/README.md.
    data = (SCHEMAS / "sarif-schema-2.1.0.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == OASIS_SARIF_SHA256
    assert json.loads(data)["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")


@pytest.mark.parametrize("case", sorted(REPORTS))
def test_sarif_validates_against_the_official_oasis_schema(case: str) -> None:
    log = json.loads(REPORTERS[OutputFormat.SARIF].render(REPORTS[case]()))
    assert _sarif_errors(log) == []


def test_sarif_of_a_real_scan_validates_against_the_official_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Through the command line, on every shipped fixture (leaks, skipped files, input errors).
    from click.testing import CliRunner

    from thinkfix.cli import main

    monkeypatch.chdir(FIXTURES.parent)
    result = CliRunner().invoke(main, ["scan", "fixtures", "--output-format", "sarif"])
    assert result.exit_code in (1, 2), result.output
    log = json.loads(result.stdout)
    assert log["runs"][0]["results"], "the fixtures leak: the log must carry results"
    assert _sarif_errors(log) == []


def test_the_sarif_schema_catches_what_a_broken_log_would_carry() -> None:
    # The check is real: the mistakes upload services reject are rejected here too.
    log = json.loads(REPORTERS[OutputFormat.SARIF].render(full_report()))
    run = log["runs"][0]
    run["results"][0]["level"] = "fatal"
    run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    del run["tool"]["driver"]["name"]
    errors = " ".join(_sarif_errors(log))
    assert "'fatal' is not one of" in errors
    assert "0 is less than the minimum of 1" in errors
    assert "'name' is a required property" in errors
