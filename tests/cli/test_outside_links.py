"""A symlink found in a walked folder whose target lies outside every path named is not read
by any command unless asked (hostile10's request 1): a checkout's `planted.jsonl ->
~/.claude/projects/x/session.jsonl` put a session of the runner's into the report (its leaked
reasoning as snippets), which CI may publish. Each is an error for that path (exit 2); the
rest is read; naming the link itself, or `--follow-links`, reads it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
CLEAN_ONE = FIXTURES / "claude-code" / "7f3c2a91-5d4e-4b8a-9c1f-2e6d8a0b4c37.jsonl"

pytestmark = pytest.mark.usefixtures("isolated_cli")


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`t/own.jsonl`, and `t/planted.jsonl` linked to a session outside `t`."""
    outside = tmp_path / "private" / "session.jsonl"
    outside.parent.mkdir()
    shutil.copy(LEAKY, outside)
    (tmp_path / "t").mkdir()
    shutil.copy(CLEAN_ONE, tmp_path / "t" / "own.jsonl")
    (tmp_path / "t" / "planted.jsonl").symlink_to(outside)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _scan(*args: str) -> tuple[int, dict[str, list[dict[str, object]]]]:
    result = CliRunner().invoke(main, ["scan", "--output-format", "json", *args])
    return result.exit_code, json.loads(result.stdout)


def test_scan_refuses_a_link_that_leads_outside_the_paths_named(checkout: Path) -> None:
    code, report = _scan("t")
    assert code == 2
    [error] = report["errors"]
    assert error["kind"] == "linked" and "outside the paths named" in str(error["message"])
    assert {f["path"] for f in report["findings"]} == {"t/own.jsonl"}  # the rest is read
    assert "--follow-links" in str(error["message"])


def test_scan_reads_the_link_when_asked_or_named(checkout: Path) -> None:
    code, report = _scan("--follow-links", "t")
    assert code == 1 and not report["errors"]
    assert {f["path"] for f in report["findings"]} == {"t/own.jsonl", "t/planted.jsonl"}
    code, report = _scan("t/planted.jsonl")  # named itself: its target is asked for
    assert code == 1 and not report["errors"]
    code, report = _scan("t", "private")  # its target's folder named too: inside
    assert code == 1 and not report["errors"]


def test_a_link_inside_the_paths_named_is_read(checkout: Path) -> None:
    (checkout / "t" / "planted.jsonl").unlink()
    (checkout / "t" / "sub").mkdir()
    shutil.copy(LEAKY, checkout / "t" / "sub" / "real.jsonl")
    (checkout / "t" / "inner.jsonl").symlink_to(checkout / "t" / "sub" / "real.jsonl")
    code, report = _scan("t")
    assert code == 1 and not report["errors"]


def test_a_folder_link_that_leads_outside_is_refused_too(checkout: Path) -> None:
    (checkout / "t" / "planted.jsonl").unlink()
    (checkout / "t" / "more").symlink_to(checkout / "private")
    code, report = _scan("t")
    assert code == 2 and [e["kind"] for e in report["errors"]] == ["linked"]


@pytest.mark.parametrize("command", [["diff"], ["repair", "--dry-run"]])
def test_diff_and_a_dry_run_refuse_it_as_scan_does(checkout: Path, command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "t"])
    assert result.exit_code == 2
    assert "outside the paths named" in result.output + result.stderr
    assert "<think>" not in result.stdout  # nothing of the private session shown
