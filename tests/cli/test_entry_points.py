"""How the command line starts (#27 item 7): `python -m thinkfix` runs it, and a bare
`thinkfix` prints its help once and exits 2 (it printed the usage, an error line holding
the whole help with its newlines shown as ␊, and exited 0)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from thinkfix._version import __version__

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "thinkfix", *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )


def test_python_dash_m_thinkfix_runs_the_command_line() -> None:
    result = _run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"thinkfix, version {__version__}"


def test_bare_thinkfix_prints_the_help_once_and_exits_2() -> None:
    result = _run()
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("Usage: thinkfix") == 1
    assert result.stderr.count("Commands:") == 1
    assert "␊" not in result.stderr and "error" not in result.stderr
