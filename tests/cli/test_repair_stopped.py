"""A repair that stops early says exactly what it had already changed (#26, helper repair8).

Stopped by Ctrl-C, or by an unexpected exception that is no one file's (a bug in the run's
own code, an OSError or MemoryError between files), a run has replaced some files and not
the others. The user is told which, line by line as a finished run tells it (the same
lines, on stderr, before the summary), with the `thinkfix undo` command that takes them
back; the manifest names exactly the files replaced, and undo restores them byte for byte.
A crash exits 2, the contract's status for an error (the CLI's for any internal error),
never 1 (findings) nor 130 (Ctrl-C).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli import test_repair_sigint as sigint
from tests.commands import invoke
from tests.engine.repair_helpers import temp_files, tree_bytes
from tests.processes import run_python, run_thinkfix
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.repair import driver
from thinkfix.io import safewrite

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"

pytestmark = pytest.mark.usefixtures("isolated_cli")

_IN_PLACE = ("--in-place", "--isolated", "--include-active")  # the files were just written
_REPAIRED = re.compile(r"^repaired (\S+) \((\d+) messages?\)(?: -> (\S+))?$")


def _corpus(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        shutil.copy(LEAKY, root / f"s{i:02d}.jsonl")
    return root


def _lines(stderr: str) -> list[str]:
    """The lines a run gives its files: `repaired ...` and the warnings that follow."""
    return [x for x in stderr.splitlines() if _REPAIRED.match(x) or x.startswith("warning: ")]


def _repaired(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if _REPAIRED.match(line)]


def _told(stderr: str) -> str:
    told = re.findall(r"thinkfix undo (\S+)", stderr)
    assert len(told) == 1, stderr
    return str(told[0])


def _changed(before: dict[str, bytes], root: Path) -> set[str]:
    return {name for name, data in tree_bytes(root).items() if before.get(name) != data}


def _manifest_targets(path: str) -> set[str]:
    doc = json.loads(Path(path).read_text())
    return {e["target"] for e in doc["files"] if e["role"] == "session"}


def _stop_at(monkeypatch: pytest.MonkeyPatch, k: int, failure: BaseException) -> None:
    """Raise `failure` in the run's own code as it is about to start its (k+1)-th file:
    the first k files are done, in the driver and outside any one file's handling."""
    real, seen = driver.repair_file, [0]

    def counted(job: Any) -> Any:
        seen[0] += 1
        if seen[0] == k + 1:
            raise failure
        return real(job)

    monkeypatch.setattr(driver, "repair_file", counted)


def _stop_after(monkeypatch: pytest.MonkeyPatch, k: int, failure: BaseException) -> None:
    """Raise `failure` once the k-th file's result is back, before the run records it."""
    real, seen = driver._done, [0]

    def counted(*args: Any) -> Any:
        seen[0] += 1
        if seen[0] == k:
            raise failure
        return real(*args)

    monkeypatch.setattr(driver, "_done", counted)


def _full_run_lines(tmp: Path, n: int, *extra: str) -> dict[str, list[str]]:
    """What an uninterrupted run prints for each file of an `n`-file corpus (its `repaired`
    line and its warnings), keyed by name, the corpus's folder spelt `ROOT`."""
    root = _corpus(tmp / "full", n)
    where = [a.replace("OUT", str(tmp / "full-out")) for a in extra] or _IN_PLACE
    result = invoke("repair", "--isolated", "--jobs", "1", *where, str(root))
    assert result.exit_code == 1, result.output  # the fixture has a refused message
    blocks: dict[str, list[str]] = {}
    for line in _lines(result.stderr):
        if _REPAIRED.match(line):
            blocks[_name(line)] = []
        blocks[list(blocks)[-1]].append(
            line.replace(str(tmp / "full-out"), "OUT").replace(str(root), "ROOT")
        )
    assert len(blocks) == n, result.stderr
    return blocks


def _expected(blocks: dict[str, list[str]], names: list[str], root: Path, out: Path) -> list[str]:
    return [
        line.replace("ROOT", str(root)).replace("OUT", str(out))
        for name in names
        for line in blocks[name]
    ]


def _name(line: str, group: int = 1) -> str:
    """The file a run's line names (group 1: the input; 3: the output)."""
    match = _REPAIRED.match(line)
    assert match is not None, line
    return Path(match[group]).name


# --- Ctrl-C: the files already replaced, one line each ----------------------------------------


@pytest.mark.parametrize("k", [0, 1, 3])
def test_repair_interrupted_prints_a_line_for_each_file_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    """Failed before the fix: only the `interrupted: N files` line, no file named."""
    expected = _full_run_lines(tmp_path, 5)
    root = _corpus(tmp_path / "in", 5)
    before = tree_bytes(root)
    _stop_at(monkeypatch, k, KeyboardInterrupt())
    run_dir = tmp_path / "run"
    result = invoke("repair", *_IN_PLACE, "--jobs", "1", "--run-dir", str(run_dir), str(root))
    assert result.exit_code == 128 + signal.SIGINT, result.output
    assert result.stdout == ""
    replaced = sorted(_changed(before, root))
    assert len(replaced) == k
    lines = _lines(result.stderr)
    assert lines == _expected(expected, replaced, root, root)
    summary = result.stderr.splitlines()[-1]
    assert summary.startswith("interrupted: ")
    assert result.stderr.index(summary) > max((result.stderr.index(x) for x in lines), default=-1)
    if k:
        assert re.search(rf"\b{k} files? already replaced", summary), summary
        assert _manifest_targets(_told(result.stderr)) == {str(root / n) for n in replaced}
        assert invoke("undo", _told(result.stderr)).exit_code == 0
    assert tree_bytes(root) == before


def test_repair_out_interrupted_names_each_output_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--out: each line names the output, as a finished run's does. Failed before the fix."""
    expected = _full_run_lines(tmp_path, 4, "--out", "OUT")
    root = _corpus(tmp_path / "in", 4)
    out = tmp_path / "out"
    _stop_at(monkeypatch, 2, KeyboardInterrupt())
    result = invoke("repair", "--isolated", "--jobs", "1", "--out", str(out), str(root))
    assert result.exit_code == 128 + signal.SIGINT, result.output
    written = sorted(p.name for p in out.iterdir())
    assert written == ["s00.jsonl", "s01.jsonl"]
    assert _lines(result.stderr) == _expected(expected, written, root, out)
    assert re.search(r"interrupted: 2 files already written; undo with", result.stderr)
    assert invoke("undo", _told(result.stderr)).exit_code == 0
    assert list(out.iterdir()) == []


def test_repair_interrupted_with_a_journal_only_file_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C just after a file's rename (in its folder's sync): the file is replaced but its
    result never came back; the journal names it, and so does the run's line for it."""
    root = _corpus(tmp_path / "in", 3)
    before = tree_bytes(root)
    real, seen = safewrite.fsync_folder, [0]

    def fsync_folder(path: str) -> None:
        real(path)
        if Path(path) == root:
            seen[0] += 1
            if seen[0] == 2:
                raise KeyboardInterrupt

    monkeypatch.setattr(safewrite, "fsync_folder", fsync_folder)
    run_dir = tmp_path / "run"
    result = invoke("repair", *_IN_PLACE, "--jobs", "1", "--run-dir", str(run_dir), str(root))
    assert result.exit_code == 128 + signal.SIGINT, result.output
    replaced = sorted(_changed(before, root))
    assert replaced == ["s00.jsonl", "s01.jsonl"], result.stderr
    assert [_name(x) for x in _repaired(result.stderr)] == replaced
    assert invoke("undo", _told(result.stderr)).exit_code == 0
    assert tree_bytes(root) == before


# --- an unexpected exception: the same lines, the undo, exit 2 -------------------------------


@pytest.mark.parametrize(
    "failure",
    [MemoryError(), OSError(errno.ENOSPC, "No space left on device"), RuntimeError("a bug")],
    ids=["memory", "oserror", "bug"],
)
def test_repair_stopped_by_an_error_says_what_it_replaced_and_how_to_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    """Failed before the fix: a traceback and `internal error`, no file named and no undo
    command, though two files were replaced."""
    expected = _full_run_lines(tmp_path, 5)
    root = _corpus(tmp_path / "in", 5)
    before = tree_bytes(root)
    _stop_at(monkeypatch, 2, failure)
    run_dir = tmp_path / "run"
    result = invoke("repair", *_IN_PLACE, "--jobs", "1", "--run-dir", str(run_dir), str(root))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    replaced = sorted(_changed(before, root))
    assert replaced == ["s00.jsonl", "s01.jsonl"]
    assert _lines(result.stderr) == _expected(expected, replaced, root, root)
    assert re.search(r"\b2 files already replaced; undo with: thinkfix undo ", result.stderr)
    assert f"internal error: {type(failure).__name__}" in result.stderr
    manifest = _told(result.stderr)
    assert manifest == str(run_dir / mf.MANIFEST_NAME)
    assert _manifest_targets(manifest) == {str(root / n) for n in replaced}
    undone = invoke("undo", manifest)
    assert undone.exit_code == 0, undone.output
    assert tree_bytes(root) == before
    assert temp_files(root) == []


def test_repair_stopped_by_an_error_shows_its_whole_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The crash is said as every crash is: its traceback with its cause (a re-raise
    `from None` dropped the cause)."""
    root = _corpus(tmp_path / "in", 3)
    try:
        raise KeyError("where it began")
    except KeyError as exc:
        failure = RuntimeError("a bug")
        failure.__cause__ = exc
    _stop_at(monkeypatch, 1, failure)
    result = invoke("repair", *_IN_PLACE, "--jobs", "1", str(root))
    assert result.exit_code == 2, result.output
    assert "KeyError: 'where it began'" in result.stderr
    assert "direct cause of the following exception" in result.stderr
    assert re.search(r"\b1 file already replaced; undo with", result.stderr)


def test_repair_stopped_by_an_error_before_any_write_is_the_plain_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path / "in", 2)
    before = tree_bytes(root)
    _stop_at(monkeypatch, 0, RuntimeError("a bug"))
    run_dir = tmp_path / "run"
    result = invoke("repair", *_IN_PLACE, "--jobs", "1", "--run-dir", str(run_dir), str(root))
    assert result.exit_code == 2, result.output
    assert "internal error: RuntimeError: a bug" in result.stderr
    assert "thinkfix undo" not in result.stderr
    assert _repaired(result.stderr) == []
    assert tree_bytes(root) == before
    assert not (run_dir / (mf.MANIFEST_NAME + mf.JOURNAL_SUFFIX)).exists()


_FAILURES: list[Callable[[], BaseException]] = [
    MemoryError,
    lambda: OSError(errno.EIO, "Input/output error"),
    lambda: RuntimeError("a bug"),
    KeyboardInterrupt,
]


# Each example runs a repair and an undo; `isolated_cli` only sets the environment.
_RUNS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


@_RUNS
@given(
    n=st.integers(1, 4),
    data=st.data(),
    failure=st.sampled_from(_FAILURES),
    before_file=st.booleans(),
    out=st.booleans(),
)
def test_repair_stopped_after_any_k_files_is_undone_byte_for_byte(
    n: int,
    data: st.DataObject,
    failure: Callable[[], BaseException],
    before_file: bool,
    out: bool,
) -> None:
    """Whichever file the run stops at, by an error or Ctrl-C, in place or --out: the lines
    name exactly the files changed, the manifest holds exactly those, and undo puts every
    one of the n files (and the output folder) back byte for byte."""
    k = data.draw(st.integers(0, n - 1) if before_file else st.integers(1, n), label="k")
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        tmp_path = Path(tmp)
        root = _corpus(tmp_path / "in", n)
        target = tmp_path / "out" if out else root
        target.mkdir(exist_ok=True)
        before = tree_bytes(target)
        inputs = tree_bytes(root)
        (_stop_at if before_file else _stop_after)(mp, k, failure())
        where = ("--out", str(target)) if out else ("--in-place", "--include-active")
        run_dir = tmp_path / "run"
        result = invoke(
            "repair", "--isolated", *where, "--jobs", "1", "--run-dir", str(run_dir), str(root)
        )
        stopped = isinstance(failure(), KeyboardInterrupt)
        assert result.exit_code == (128 + signal.SIGINT if stopped else 2), result.output
        changed = _changed(before, target)
        assert len(changed) == k
        named = {_name(x, 3 if out else 1) for x in _repaired(result.stderr)}
        assert named == changed
        if k:
            manifest = _told(result.stderr)
            assert _manifest_targets(manifest) == {str(target / c) for c in changed}
            assert invoke("undo", manifest).exit_code == 0
        else:
            assert "thinkfix undo" not in result.stderr
        assert tree_bytes(target) == before
        assert tree_bytes(root) == inputs


# --- a real process, its stderr a pipe, at 80 columns -----------------------------------------

# `thinkfix ARGS` whose run fails with MemoryError (or gets SIGINT) as its AT-th file starts.
SCRIPT = r"""
import os, signal, sys, time
from thinkfix.cli import main
from thinkfix.engine.repair import driver
from thinkfix.io import safewrite

at, how, *argv = sys.argv[1:]
real, seen = driver.repair_file, [0]

def counted(job):
    seen[0] += 1
    if seen[0] == int(at):
        if how == "sigint":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)  # the signal's handler raises here
        raise MemoryError
    return real(job)

driver.repair_file = counted
sys.argv = ["thinkfix", *argv]
main()
"""


@pytest.mark.parametrize("how", ["sigint", "memory"])
def test_a_real_run_stopped_names_its_files_on_a_pipe_at_80_columns(
    tmp_path: Path, how: str
) -> None:
    root = _corpus(tmp_path / "in", 5)
    before = tree_bytes(root)
    env = {**os.environ, "COLUMNS": "80", "LINES": "24", "THINKFIX_STATE_DIR": str(tmp_path)}
    proc = run_python(
        SCRIPT,
        "4",
        how,
        "repair",
        *_IN_PLACE,
        "--jobs",
        "1",
        "--run-dir",
        str(tmp_path / "run"),
        str(root),
        check=False,
        timeout=120,
        env=env,
    )
    assert proc.returncode == (128 + signal.SIGINT if how == "sigint" else 2), proc.stderr
    assert proc.stdout == ""
    replaced = sorted(_changed(before, root))
    assert replaced == ["s00.jsonl", "s01.jsonl", "s02.jsonl"]
    assert [_name(x) for x in _repaired(proc.stderr)] == replaced
    assert re.search(r"\b3 files already replaced; undo with: thinkfix undo ", proc.stderr)
    if how == "memory":
        assert "internal error: MemoryError" in proc.stderr
    else:
        assert "Traceback" not in proc.stderr
    undone = run_thinkfix("undo", _told(proc.stderr), timeout=120, env=env)
    assert undone.returncode == 0, undone.stderr
    assert tree_bytes(root) == before
    assert temp_files(root) == []


def test_a_real_run_with_jobs_interrupted_names_the_files_its_workers_replaced(
    tmp_path: Path,
) -> None:
    """--jobs 2: a worker's file may be replaced with its result never back (the journal says
    it); the lines name exactly the files changed, whichever process changed them."""
    root = _corpus(tmp_path / "in", 12)
    before = tree_bytes(root)
    stderr, _ = sigint._interrupted_repair(tmp_path, root, at=3, jobs=2)
    replaced = sorted(_changed(before, root))
    assert replaced
    assert [_name(x) for x in _repaired(stderr)] == replaced
    assert re.search(rf"interrupted: {len(replaced)} files? already replaced", stderr)
    undone = run_thinkfix("undo", _told(stderr), timeout=120)
    assert undone.returncode == 0, undone.stderr
    assert tree_bytes(root) == before
