"""A baseline file that is not one (review10). `--baseline` (or `baseline =` in a config,
which a checked-out project may hold) naming a FIFO waited for a writer forever, and one
naming a device (`/dev/zero`) would read without end; an entry whose `leaked_chars` is text,
a list or null ended the run with an internal error. Each is now the baseline's own error (exit 2,
one `thinkfix: error:` line), as a baseline that is not JSON already was. (The FIFO case is
tests/telemetry/test_review10_state_special.py's, beside `--state`.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.telemetry import sessions
from thinkfix.cli import main
from thinkfix.engine.telemetry.baseline import BaselineError, load


def test_a_device_named_as_the_baseline_is_refused() -> None:
    with pytest.raises(BaselineError, match="not a regular file"):
        load(os.devnull)


@pytest.mark.parametrize("value", ["x", [1], {"a": 1}, None])
def test_an_entry_whose_count_is_no_number_is_a_baseline_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: object
) -> None:
    monkeypatch.chdir(tmp_path)
    entry = {"format": "claude-code", "message": "m", "kind": "block", "leaked_chars": value}
    doc = {"schema_version": 1, "tool": "thinkfix", "findings": {"abc": entry}}
    (tmp_path / "b.json").write_text(json.dumps(doc))
    (tmp_path / "a.jsonl").write_bytes(sessions.claude_code(0, leak=True))

    result = CliRunner().invoke(
        main, ["scan", "--isolated", "--baseline", "b.json", "a.jsonl"], catch_exceptions=False
    )

    assert result.exit_code == 2
    assert "internal error" not in result.output
    assert "b.json: entry 'abc'" in result.stderr
