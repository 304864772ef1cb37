"""Python in a process of its own, the one way the tests start it: a script (`python -c`),
the command line (`python -m thinkfix.cli`), or a long-lived helper process read line by line.

A test needs its own process where the interpreter's state is the point (which modules an
import loads, a kill, a lock held by another process); everything else runs in-process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

#: How long a child run may take before the test fails instead of waiting on it: a run here
#: takes seconds; one that waits for input or a lock for ever must not hold the suite.
TIMEOUT = 300.0


def run_python(
    script: str,
    *args: str,
    check: bool = True,
    timeout: float | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -c SCRIPT ARGS` to its end, its output captured as text; `check` raises on a
    non-zero exit (with the output in the error)."""
    return _run([sys.executable, "-c", script, *args], check, timeout, cwd, env)


def run_thinkfix(
    *args: str,
    check: bool = False,
    timeout: float | None = None,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -m thinkfix.cli ARGS` to its end, its output captured as text; the exit code is
    the test's to check unless `check`."""
    return _run([sys.executable, "-m", "thinkfix.cli", *args], check, timeout, cwd, env)


def start_python(
    script: str, *args: str, stdin: bool = True, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """`python -c SCRIPT ARGS` left running, its stdout a text pipe to read (a helper that
    holds a file or a lock prints a line when it does); with `stdin`, a pipe the test writes
    or closes to let it go."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        text=True,
        env=None if env is None else dict(env),
    )


@contextmanager
def held(script: str, *args: str, ready: str = "ready") -> Iterator[subprocess.Popen[str]]:
    """While the block runs, so does `python -c SCRIPT ARGS`: from the line `ready` it prints
    once it holds what it holds (a lock, a transaction) until the block ends, closing its
    stdin, which the script waits on."""
    proc = start_python(script, *args)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == ready
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


def start_thinkfix(
    *args: str,
    env: Mapping[str, str] | None = None,
    new_session: bool = False,
    output: bool = False,
) -> subprocess.Popen[str]:
    """`python -m thinkfix.cli ARGS` left running (a run to kill, a `watch` to stop), its
    output dropped, or with `output` its stdout and stderr text pipes; `new_session` puts it
    (and its workers) in a process group of its own."""
    pipe = subprocess.PIPE if output else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "-m", "thinkfix.cli", *args],
        env=None if env is None else dict(env),
        stdout=pipe,
        stderr=pipe,
        text=True,
        start_new_session=new_session,
    )


def _run(
    argv: list[str],
    check: bool,
    timeout: float | None,
    cwd: str | Path | None,
    env: Mapping[str, str] | None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,  # never the test runner's: a child that reads it waits no one
        capture_output=True,
        text=True,
        check=check,
        timeout=TIMEOUT if timeout is None else timeout,
        cwd=cwd,
        env=None if env is None else dict(env),
    )
