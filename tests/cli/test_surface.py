"""One CLI surface (issue 14 #10): the same flags and the same error spelling in every command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.engine.conftest import claude_line
from thinkfix import __version__
from thinkfix.cli import main

COMMANDS = sorted(main.commands)
#: Commands whose exit 1 means "found something", so --exit-zero applies.
EXIT_ONE = {"scan", "diff", "repair", "replay", "where"}


def _option_names(command: click.Command) -> set[str]:
    return {
        name
        for p in command.params
        if isinstance(p, click.Option)
        for name in (*p.opts, *p.secondary_opts)
    }


@pytest.fixture(autouse=True)
def _plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(main, list(args))


def test_short_version_flag() -> None:
    result = invoke("-V")
    assert result.exit_code == 0 and __version__ in result.stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_takes_quiet(name: str) -> None:
    assert {"-q", "--quiet"} <= _option_names(main.commands[name])


@pytest.mark.parametrize("name", sorted(EXIT_ONE))
def test_exit_zero_pairs_where_exit_1_means_found(name: str) -> None:
    assert {"--exit-zero", "--no-exit-zero"} <= _option_names(main.commands[name])


@pytest.mark.parametrize("name", COMMANDS)
def test_usage_errors_use_the_one_prefix(name: str) -> None:
    result = invoke(name, "--no-such-flag")
    assert result.exit_code == 2
    assert "thinkfix: error: No such option" in result.stderr
    assert "Error:" not in result.stderr


def test_command_errors_use_the_one_prefix(tmp_path: Path) -> None:
    for args in (
        ("scan", "--isolated", "--output-format", "json", "--report", "nope", "x"),
        ("show", str(tmp_path / "missing.jsonl")),
        ("undo", str(tmp_path / "missing-manifest.json")),
    ):
        result = invoke(*args)
        assert result.exit_code == 2, args
        assert result.stderr.startswith(("thinkfix: error: ", "Usage:")), result.stderr
        assert "thinkfix: error: " in result.stderr


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "a.jsonl").write_bytes(claude_line("<think>p</think>A", uuid="a1"))
    (tmp_path / "s" / "notes.json").write_text('{"not": "a session"}')
    return tmp_path / "s"


def test_scan_quiet_drops_the_notes(leaky: Path) -> None:
    loud = invoke("scan", "--isolated", "s")
    quiet = invoke("scan", "--isolated", "-q", "s")
    assert "skipped" in loud.stderr
    assert quiet.stderr == "" and quiet.exit_code == loud.exit_code == 1


def test_repair_quiet_drops_the_summary(leaky: Path, tmp_path: Path) -> None:
    loud = invoke("repair", "--isolated", "--out", str(tmp_path / "o1"), "s")
    quiet = invoke("repair", "--isolated", "-q", "--out", str(tmp_path / "o2"), "s")
    assert "repaired 1 message in 1 file" in loud.stderr
    assert "repaired" not in quiet.stderr and quiet.exit_code == loud.exit_code == 0


def test_exit_zero_and_its_negation(leaky: Path) -> None:
    assert invoke("diff", "--isolated", "s").exit_code == 1
    assert invoke("diff", "--isolated", "--exit-zero", "s").exit_code == 0
    assert invoke("diff", "--isolated", "--exit-zero", "--no-exit-zero", "s").exit_code == 1
    assert invoke("repair", "--isolated", "--check", "--exit-zero", "s").exit_code == 0


CONCISE = re.compile(r"^(?P<path>.+):(?P<line>\d+):(?P<col>\d+): (?P<kind>[a-z_]+) (?P<msg>.+)$")


def test_concise_lines_are_what_problem_matchers_read(leaky: Path) -> None:
    result = invoke("scan", "--isolated", "--output-format", "concise", "s")
    lines = result.stdout.splitlines()
    match = CONCISE.match(lines[0])
    assert match, lines[0]
    assert (match["path"], match["line"], match["col"], match["kind"]) == (
        "s/a.jsonl",
        "1",
        "1",
        "block",
    )
    assert lines[-1].startswith("thinkfix: ") and len(lines) == 2


def test_gitlab_code_quality_report(leaky: Path) -> None:
    result = invoke("scan", "--isolated", "--output-format", "gitlab", "s")
    issues = json.loads(result.stdout)
    assert [i["location"] for i in issues] == [{"path": "s/a.jsonl", "lines": {"begin": 1}}]
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
    assert len({i["fingerprint"] for i in issues}) == len(issues)
