"""A state file that cannot be written for a reason the safe writer names (review10): its
temporary file's name too long for the folder's file system, or the folder not writable by
this user. `atomic_write` raises its own `WriteError`, which is no `OSError`, and
`write_document` caught only `OSError`: `scan --incremental` ended in a traceback and
"internal error" instead of its `cannot write the state file` error, and `watch` likewise."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.telemetry import sessions
from tests.telemetry.test_cli_incremental import _plain_env  # noqa: F401 (autouse)
from thinkfix.cli import main
from thinkfix.engine.telemetry.state import StateError, write_document


def _unwritable(tmp_path: Path) -> Path:
    """A state path whose temporary file's name (`.NAME.<host>.<pid>.<token>.thinkfix-tmp`)
    no file system takes: the name itself is allowed."""
    return tmp_path / ("s" * 240 + ".json")


def test_a_state_the_safe_writer_refuses_is_a_state_error(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="cannot write the state file"):
        write_document(str(_unwritable(tmp_path)), {})


def test_scan_says_the_state_cannot_be_written_without_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    (root / "a.jsonl").write_bytes(sessions.claude_code(0, leak=False))

    result = CliRunner().invoke(
        main, ["scan", "--isolated", "--state", str(_unwritable(tmp_path)), str(root)]
    )

    assert result.exit_code == 2
    assert "internal error" not in result.output
    assert "Traceback" not in result.output
    assert "cannot write the state file" in result.stderr
