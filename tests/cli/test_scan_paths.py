"""Every machine-readable output spells a file the same way (issue 14 #1): with the Action's
default `paths: "."`, annotations must say `sessions/a.jsonl`, never `./sessions/a.jsonl`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.engine.conftest import claude_line
from thinkfix.cli import main


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "a.jsonl").write_bytes(
        claude_line("<think>plan</think>Answer.", uuid="a1")
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scan(*args: str) -> str:
    result = CliRunner().invoke(main, ["scan", "--isolated", *args])
    assert result.exit_code == 1, result.output
    return result.stdout


@pytest.mark.parametrize("given", [".", "./sessions", "sessions/", "ABS"])
def test_github_annotation_path_is_workspace_relative(repo: Path, given: str) -> None:
    first = scan(str(repo) if given == "ABS" else given, "--output-format", "github")
    assert first.splitlines()[0].startswith("::error file=sessions/a.jsonl,line=1,")


def test_json_junit_markdown_and_sarif_agree_on_the_path(repo: Path) -> None:
    doc = json.loads(scan(".", "--output-format", "json"))
    assert [f["path"] for f in doc["findings"]] == ["sessions/a.jsonl"]
    assert list(doc["summary"]["by_file"]) == ["sessions/a.jsonl"]
    junit = ET.fromstring(scan(".", "--output-format", "junit"))
    assert {s.get("name") for s in junit.iter("testsuite")} == {"sessions/a.jsonl"}
    assert "./sessions" not in scan(".", "--output-format", "markdown")
    run = json.loads(scan(".", "--output-format", "sarif"))["runs"][0]
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "sessions/a.jsonl", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"


def test_a_file_outside_the_working_folder_keeps_its_absolute_path(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = tmp_path_factory.mktemp("elsewhere") / "b.jsonl"
    other.write_bytes(claude_line("<think>x</think>y", uuid="b1"))
    run = json.loads(scan(str(other), "--output-format", "sarif"))["runs"][0]
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": other.as_uri()}
