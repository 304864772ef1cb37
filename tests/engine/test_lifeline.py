"""Issue 11 item 4: killing the main process of a `--jobs 2` run leaves no worker alive
(they went on rewriting 40 files after the kill, then hung), and the files are whole."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.engine.repair_helpers import temp_files
from tests.processes import run_python, run_thinkfix, start_python, start_thinkfix
from thinkfix.io import lifeline

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"


def children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is `pid`."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"


def corpus(root: Path, files: int = 240) -> bytes:
    root.mkdir()
    data = LEAKY.read_bytes() * 15  # ~100 KB per file: the run takes seconds
    for i in range(files):
        (root / f"s{i:03d}.jsonl").write_bytes(data)
    return data


@pytest.mark.crash
@pytest.mark.parametrize("command", [["repair", "--in-place"], ["scan"]])
def test_killed_parent_takes_its_workers_along(tmp_path: Path, command: list[str]) -> None:
    root = tmp_path / "t"
    # A repair spends far longer a file than a scan: fewer files keep it killed mid-run
    # without making the finishing run below (one process, in place) take most of a minute.
    original = corpus(root, files=80 if command[0] == "repair" else 240)
    env = dict(os.environ, THINKFIX_STATE_DIR=str(tmp_path / "state"))
    proc = start_thinkfix(*command, "--isolated", "--jobs", "2", str(root), env=env)
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        workers = children(proc.pid)
        time.sleep(0.02)
    assert len(workers) >= 2, "the run ended before its workers were seen"
    time.sleep(0.3)  # let them get into the work
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.0)
    assert [w for w in workers if alive(w)] == []
    # Every file is as it was or fully repaired; the next run sweeps the temporary files.
    repaired = {p.read_bytes() for p in root.iterdir() if p.suffix == ".jsonl"}
    assert len(repaired - {original}) <= 1
    if command[0] == "repair":
        result = run_thinkfix(
            "repair", "--in-place", "--isolated", "--jobs", "1", str(root), env=env, timeout=300
        )
        assert result.returncode == 1, result.stderr  # leaks remain: refused, or left as read
        assert temp_files(root) == []
        assert len({p.read_bytes() for p in root.iterdir()}) == 1


@pytest.mark.crash
def test_die_with_parent_ends_a_worker_whose_parent_is_gone(tmp_path: Path) -> None:
    """The start-up check: a parent already gone (or never ours) ends the worker at once."""
    code = (
        "import sys; from thinkfix.io.lifeline import die_with_parent; "
        "die_with_parent(int(sys.argv[1])); print('survived')"
    )
    gone = start_python("pass", stdin=False)
    gone.wait()
    result = run_python(code, str(gone.pid), check=False, timeout=60)
    assert result.returncode == 1 and "survived" not in result.stdout
    assert lifeline.alive(os.getpid())
