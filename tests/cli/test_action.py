"""The GitHub Action's inputs reach `thinkfix scan` split as a shell would (issue 14 #5): the
documented `--exclude 'archive/**'` excludes archive/, and a pattern that matches nothing
is a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.conftest import claude_line
from thinkfix.cli.action import main, scan_arguments

ROOT = Path(__file__).resolve().parents[2]


def test_arguments_are_split_with_quotes_honoured() -> None:
    argv = scan_arguments(
        "sessions 'my sessions'",
        "--select block,unclosed --exclude 'archive/**'",
        "base.json",
        "/tmp/s.md",
    )
    assert argv == [
        "scan",
        "--output-format",
        "github",
        "--report",
        "markdown=/tmp/s.md",
        "--baseline",
        "base.json",
        "--select",
        "block,unclosed",
        "--exclude",
        "archive/**",
        "sessions",
        "my sessions",
    ]
    assert scan_arguments("", "")[-1] == "."


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "old.jsonl").write_bytes(claude_line("<think>x</think>y", uuid="o"))
    (tmp_path / "new.jsonl").write_bytes(claude_line("clean answer", uuid="n"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_documented_exclude_example_works(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = workspace / "summary.md"
    code = main(
        {"PATHS": ".", "ARGS": "--isolated --exclude 'archive/**'", "SUMMARY": str(summary)}
    )
    out, err = capsys.readouterr()
    assert code == 0, err  # the leaking archive was left out
    assert "::error" not in out and summary.is_file()
    assert "matched nothing" not in err


def test_an_exclude_that_matches_nothing_is_a_warning(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main({"PATHS": ".", "ARGS": "--isolated --exclude 'archives/**'"})
    _, err = capsys.readouterr()
    assert code == 1
    assert "thinkfix: warning: exclude pattern 'archives/**' matched nothing" in err


def test_unbalanced_quotes_are_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main({"PATHS": ".", "ARGS": "--exclude 'archive"}) == 2
    assert capsys.readouterr().err.startswith("thinkfix: error: ")


def test_the_action_runs_the_python_entry_not_an_unquoted_args() -> None:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    script = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "python -m thinkfix.cli.action" in script
    assert "$ARGS" not in script and "$PATHS" not in script
