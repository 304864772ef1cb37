"""`scan --state` / `--incremental`: same report, exit code and baseline handling as a full scan."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.telemetry import sessions
from thinkfix.cli import main

OLD_NS = 1_600_000_000_000_000_000


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.chdir(tmp_path)


def session(root: Path, name: str, data: bytes) -> Path:
    path = root / name
    with open(path, "ab") as fp:
        fp.write(data)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", "--isolated", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("spelling", ["absolute", "relative"])
def test_same_json_and_exit_code_as_a_full_scan(tmp_path: Path, spelling: str) -> None:
    root = tmp_path / "s"
    root.mkdir()
    session(root, "a.jsonl", b"".join(sessions.claude_code(i, leak=i == 2) for i in range(6)))
    session(root, "b.jsonl", b"".join(sessions.claude_code(i, leak=False) for i in range(6)))
    name = str(root) if spelling == "absolute" else "s"
    for _ in range(2):
        code, out, err = run("--state", "st.json", "--output-format", "json", name)
        full_code, full_out, _ = run("--output-format", "json", name)
        assert (code, json.loads(out)) == (full_code, json.loads(full_out)) and code == 1
    assert "2 unchanged" in err
    session(root, "b.jsonl", sessions.claude_code(9, leak=True))
    code, out, err = run("--state", "st.json", "--output-format", "json", name)
    assert "1 appended, 1 unchanged" in err
    assert json.loads(out) == json.loads(run("--output-format", "json", name)[1])
    assert json.loads(out)["summary"]["leaking_messages"] == 2


def test_baselines_behave_as_in_a_full_scan(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    session(root, "a.jsonl", b"".join(sessions.claude_code(i, leak=i == 1) for i in range(4)))
    assert run("--incremental", "--write-baseline", "base.json", str(root))[0] == 0
    assert run("--incremental", "--baseline", "base.json", str(root))[0] == 0
    session(root, "a.jsonl", sessions.claude_code(7, leak=True))
    code, out, _ = run(
        "--incremental", "--baseline", "base.json", "--output-format", "json", str(root)
    )
    full_code, full_out, _ = run("--baseline", "base.json", "--output-format", "json", str(root))
    assert code == full_code == 1
    assert json.loads(out) == json.loads(full_out)
    assert (tmp_path / "xdg-state/thinkfix/scan-state.json").is_file()


def test_a_bad_line_still_exits_2(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    session(root, "a.jsonl", sessions.claude_code(0, leak=False) + b'{"type": "assistant", ,\n')
    assert run("--incremental", str(root))[0] == 2
    assert run("--incremental", str(root))[0] == 2


def test_state_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    session(root, "a.jsonl", sessions.claude_code(0, leak=False))
    (tmp_path / "file").write_text("x")
    code, _, err = run("--state", str(tmp_path / "file" / "state.json"), str(root))
    assert code == 2 and "state file" in err


def test_a_state_in_another_layout_is_named_on_stderr(tmp_path: Path) -> None:
    """#22 item 10: an older thinkfix's state is not reused, and the run says so once."""
    root = tmp_path / "s"
    root.mkdir()
    session(root, "a.jsonl", sessions.claude_code(0, leak=True))
    (tmp_path / "st.json").write_bytes(b'{"version": 1, "files": {}}')
    code, _, err = run("--state", "st.json", str(root))
    assert code == 1
    assert "thinkfix: note: the state file st.json is in layout 1" in err
    assert "1 read whole" in err
    code, _, err = run("--state", "st.json", str(root))
    assert code == 1 and "note:" not in err
