"""A state file that is not a regular file (review10). `--state /dev/null` (a natural way to
keep no state) was read (a note), then saved by renaming a temporary file over it: run as
root, /dev/null became a regular file holding the state, for every process on the machine.
`--state` naming a FIFO waited forever on its read. Now a device is written into, never
replaced (as `-o` and `--report` already do, `safewrite.write_output`), and a FIFO or socket
is neither opened to read nor written: the run says it cannot write its state (exit 2)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.processes import run_thinkfix
from tests.telemetry import sessions
from thinkfix.engine.telemetry import state as state_module
from thinkfix.engine.telemetry.state import State, StateError, write_document
from thinkfix.io import safewrite


def test_a_device_as_the_state_is_written_into_never_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def replace(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"would rename a file over {args[0]}")

    # the guard first: whatever the code does, nothing may be renamed over /dev/null here
    monkeypatch.setattr(safewrite, "atomic_write", replace)
    monkeypatch.setattr(state_module, "atomic_write", replace, raising=False)

    write_document(os.devnull, {})

    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert State.load(os.devnull).entries == {}


@pytest.mark.parametrize("option", ["--state", "--baseline"])
def test_a_fifo_named_as_a_file_scan_reads_is_refused_not_waited_on(
    tmp_path: Path, option: str
) -> None:
    """`--baseline` (or `baseline =` in a config) naming a FIFO waited for a writer forever
    too (tests/telemetry/test_review10_baseline.py has its other cases)."""
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    (tmp_path / "a.jsonl").write_bytes(sessions.claude_code(0, leak=False))

    done = run_thinkfix(
        "scan", "--isolated", option, str(fifo), str(tmp_path / "a.jsonl"), timeout=30
    )

    assert done.returncode == 2, done.stdout + done.stderr
    assert "a FIFO, not a regular file" in done.stderr
    assert "internal error" not in done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_write_document_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    with pytest.raises(StateError, match="a FIFO, not a regular file"):
        write_document(str(fifo), {})
