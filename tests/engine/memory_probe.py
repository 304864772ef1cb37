"""Peak memory of a command in a fresh process: what the memory tests bound (never time)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

_PROBE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(done.stdout + done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def thinkfix_peak(*args: str, env: Mapping[str, str]) -> tuple[int, float, str]:
    """Exit code, peak RSS (MB) and output (stdout then stderr) of `thinkfix ARGS`."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, sys.executable, "-m", "thinkfix.cli", *args],
        capture_output=True,
        text=True,
        env=dict(env),
        check=True,
    )
    code, peak = done.stdout.split()
    return int(code), int(peak) / 1024, done.stderr  # Linux: KiB
