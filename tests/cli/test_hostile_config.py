"""A checkout's config file is untrusted (issue 22 item 4): it may not name a write outside its
own project root (the folder holding it, symlinks and `..` resolved), nor weaken redaction; a
flag or a `THINKFIX_*` variable, which come from whoever runs thinkfix, may."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.engine.conftest import claude_line
from thinkfix.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKING = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
SECRET = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checked-out repository with a session in it; the run's working folder."""
    for key in [k for k in os.environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)
    for key in ("GITHUB_ACTIONS", "CI"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "state"))
    repo = tmp_path / "repo"
    (repo / "sessions").mkdir(parents=True)
    shutil.copy(LEAKING, repo / "sessions" / "s.jsonl")
    monkeypatch.chdir(repo)
    return repo


def _pyproject(repo: Path, body: str) -> Path:
    path = repo / "pyproject.toml"
    path.write_text(f"[tool.thinkfix]\n{body}\n")
    return path


def _scan(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["scan", *args, "sessions"], env=env)


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("output", "{outside}/stolen.txt"),
        ("output", "../stolen.txt"),
        ("output", "sub/../../stolen.txt"),
        ("output", "escape/stolen.txt"),  # a folder in the checkout linking out
        ("output", "link.txt"),  # a file in the checkout linking out
        ("write-baseline", "{outside}/baseline.json"),
        ("report", '["json={outside}/r.json"]'),
        ("report", '["sarif=../r.sarif"]'),
    ],
)
def test_config_cannot_write_outside_its_project(
    checkout: Path, tmp_path: Path, key: str, value: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "link-target.txt").write_text("keep")
    (checkout / "escape").symlink_to(outside)
    (checkout / "link.txt").symlink_to(outside / "link-target.txt")
    text = value.format(outside=outside)
    config = _pyproject(checkout, f"{key} = {text if text.startswith('[') else repr(text)}")
    before = _files(tmp_path)
    result = _scan()
    assert result.exit_code == 2, result.output
    assert key.replace("-", "_") in result.stderr and str(config) in result.stderr
    assert "Traceback" not in result.output
    assert _files(tmp_path) - before == set()  # nothing written anywhere
    assert (outside / "link-target.txt").read_text() == "keep"


def test_the_issue_repro_writes_nothing_and_names_setting_and_file(
    checkout: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "some" / "outside" / "file"
    victim.parent.mkdir(parents=True)
    victim.write_text("mine")
    config = _pyproject(checkout, f'output = "{victim}"')
    result = _scan()
    assert result.exit_code == 2
    assert victim.read_text() == "mine"
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("thinkfix: error: ")
    assert "output" in error and str(config) in error


def test_config_may_write_inside_its_project(checkout: Path) -> None:
    _pyproject(
        checkout,
        'output = "out/report.txt"\nwrite-baseline = "baseline.json"\nreport = ["json=r.json"]',
    )
    result = _scan()
    assert result.exit_code in (0, 1), result.output
    assert (checkout / "out" / "report.txt").is_file()
    assert (checkout / "baseline.json").is_file() and (checkout / "r.json").is_file()


def test_a_flag_or_the_environment_may_write_anywhere(checkout: Path, tmp_path: Path) -> None:
    _pyproject(checkout, f'output = "{tmp_path / "from-config.txt"}"')
    result = _scan("-o", str(tmp_path / "flag.txt"))
    assert result.exit_code == 1, result.output
    assert (tmp_path / "flag.txt").is_file() and not (tmp_path / "from-config.txt").exists()
    result = _scan(env={"THINKFIX_OUTPUT": str(tmp_path / "env.txt")})
    assert result.exit_code == 1, result.output
    assert (tmp_path / "env.txt").is_file()


def _secret_session(repo: Path) -> None:
    line = claude_line(f"<think>the key is {SECRET}</think>Done.", uuid="a1")
    (repo / "sessions" / "s.jsonl").write_bytes(line)


def test_config_cannot_unmask_secrets_but_may_mask_more(checkout: Path) -> None:
    _secret_session(checkout)
    config = _pyproject(checkout, 'redact = "none"')
    result = _scan("--output-format", "json")
    assert result.exit_code == 2
    assert SECRET not in result.output
    assert "redact" in result.stderr and str(config) in result.stderr
    _pyproject(checkout, 'redact = "all"')
    result = _scan("--output-format", "json")
    assert result.exit_code == 1, result.output
    assert SECRET not in result.stdout


def test_a_flag_or_the_environment_may_unmask(checkout: Path) -> None:
    _secret_session(checkout)
    _pyproject(checkout, 'redact = "all"')
    for args, env in (
        (["--redact", "none"], None),
        ([], {"THINKFIX_REDACT": "none"}),
    ):
        result = _scan("--output-format", "json", *args, env=env)
        assert result.exit_code == 1, result.output
        assert SECRET in result.stdout


@pytest.mark.parametrize("command", ["repair", "diff"])
def test_repair_and_diff_refuse_the_same_config(checkout: Path, command: str) -> None:
    config = _pyproject(checkout, 'redact = "none"')
    args = [command, "--dry-run", "sessions"] if command == "repair" else [command, "sessions"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "redact" in result.stderr and str(config) in result.stderr


@pytest.mark.parametrize(
    "target",
    [
        ".git/hooks/pre-commit",
        ".GIT/hooks/pre-commit",  # case-insensitive file systems
        ".git./config",  # NTFS drops trailing dots and spaces
        "git~1/config",  # NTFS's short name of .git
        ".g\u200cit/config",  # HFS+ ignores the zero-width non-joiner
        "vendor/lib/.git/modules/x/hooks/post-checkout",  # a submodule's git folder
        "hook-link",  # a link in the checkout to the git folder's hook
        "tool.sh",  # an executable file
        "fifo",  # not a regular file
    ],
)
def test_config_cannot_write_into_what_is_not_the_checkouts_content(
    checkout: Path, target: str
) -> None:
    """A git folder is not a checkout's content (git checks none of its paths out, under any
    spelling a file system folds to `.git`): a hook there runs on the next commit, with
    the report's session-controlled strings (review8, finding 6). Nor is a program or a
    FIFO a report. A config naming one is refused (exit 2), nothing written; a flag may."""
    hooks = checkout / ".git" / "hooks"
    hooks.mkdir(parents=True)
    hook = hooks / "pre-commit"
    hook.write_text("#!/bin/sh\nexec true\n")
    hook.chmod(0o755)
    (checkout / "hook-link").symlink_to(hook)
    (checkout / "tool.sh").write_text("#!/bin/sh\n")
    (checkout / "tool.sh").chmod(0o755)
    os.mkfifo(checkout / "fifo")
    _pyproject(checkout, f"output = {json.dumps(target)}")
    before = {p: p.read_bytes() for p in _files(checkout) if p.name != "fifo"}
    result = _scan()
    assert result.exit_code == 2, result.output
    assert "output" in result.stderr and "Traceback" not in result.output
    assert {p: p.read_bytes() for p in _files(checkout) if p.name != "fifo"} == before
    # not vacuous: the same name from a flag is the runner's choice, and is written
    (checkout / "pyproject.toml").unlink()
    if target == "tool.sh":
        assert _scan("--output", target).exit_code == 1
        assert "sessions/s.jsonl" in (checkout / "tool.sh").read_text()
