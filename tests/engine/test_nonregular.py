"""Issue 11 item 9: a FIFO (or device) named on the command line is refused with a clear
message, never read: reading a FIFO hung scan and repair forever."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.processes import run_python, run_thinkfix

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

CODE = """
import sys
from thinkfix.io import filestate
from thinkfix.engine.inputs import files
from thinkfix.io.compression import open_read
path = sys.argv[1]
try:
    filestate.read_snapshot(path)
except filestate.WriteError as exc:
    print("snapshot:", exc)
found = files.resolve(files.Candidate(path, path, True, 0))
print("resolve:", found.error.message if found.error else None)
try:
    open_read(path)
except OSError as exc:
    print("open_read:", exc.strerror)
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, THINKFIX_STATE_DIR=str(cwd / "state"))
    return run_thinkfix(*args, cwd=cwd, env=env, timeout=60)


@pytest.mark.parametrize(
    "args",
    [
        ["scan"],
        ["scan", "--format", "codex"],
        ["repair", "--in-place"],
        ["repair", "--check"],
        ["diff"],
        ["show"],
    ],
)
def test_cli_fifo_named_is_refused_not_read(tmp_path: Path, args: list[str]) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    extra = ["--no-pager"] if args[0] == "show" else ["--isolated"]
    result = run(*args, *extra, str(fifo), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "a FIFO, not a regular file" in result.stdout + result.stderr


def test_fifo_swapped_in_after_walk_is_refused_by_every_reader(tmp_path: Path) -> None:
    """The readers themselves refuse a FIFO too (it may appear after the walk listed a file)."""
    fifo = tmp_path / "late.jsonl"
    os.mkfifo(fifo)
    result = run_python(CODE, str(fifo), check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("a FIFO, not a regular file") == 3, result.stdout


def test_walk_never_lists_thinkfix_temporary_files(tmp_path: Path) -> None:
    """A killed run's temporary file of an OpenClaw archive (`.x.jsonl.reset.<ts>.<host>.
    <pid>.<hex>.thinkfix-tmp`) looked like a session name to the walk; the kill harness
    caught the next run reporting it unreadable once it had swept it."""
    from thinkfix.engine.inputs.walk import walk

    (tmp_path / "a.jsonl.reset.2026-03-24T19-52-10.004Z").write_bytes(b"{}\n")
    (tmp_path / ".a.jsonl.reset.2026-03-24T19-52-10.004Z.vm.123.ab12cd34.thinkfix-tmp").write_bytes(
        b"{}\n"
    )
    names = [Path(c.path).name for c in walk([str(tmp_path)])]
    assert names == ["a.jsonl.reset.2026-03-24T19-52-10.004Z"]
