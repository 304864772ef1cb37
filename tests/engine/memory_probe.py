"""Peak memory of a command in a fresh process: what the memory tests bound (never time)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from tests.processes import run_python

_PROBE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(done.stdout + done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def thinkfix_peak(*args: str, env: Mapping[str, str]) -> tuple[int, float, str]:
    """Exit code, peak RSS (MB) and output (stdout then stderr) of `thinkfix ARGS`."""
    done = run_python(_PROBE, sys.executable, "-m", "thinkfix.cli", *args, env=env)
    code, peak = done.stdout.split()
    return int(code), int(peak) / 1024, done.stderr  # Linux: KiB
