"""A run started with stdin closed (`thinkfix scan - <&-`, as a service manager or `nohup ...
<&-` may start it) reads stdin as empty: `-` is an empty input, reported as one, never an
internal error (review10's request: `AttributeError: 'NoneType' object has no attribute
'buffer'`, a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("command", [["scan", "-"], ["diff", "-"], ["normalize"]])
def test_a_run_with_stdin_closed_reads_it_as_empty(command: list[str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "thinkfix.cli", *command],
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.close(0),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert run.returncode in (0, 2)
