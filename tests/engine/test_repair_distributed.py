"""`repair --dask ADDRESS --out …` writes the files and prints the report a local run does
(#13 item 6).

A real `distributed.LocalCluster` with three worker processes: each file's repair is pickled
to another process, written there, and its result comes back in completion order, so equal
bytes and an equal report show the merge does not depend on where or in what order files
were repaired. Outputs go to a local folder and to a `file://` URL (memory:// lives in one
process: tests/engine/test_repair_remote.py covers it without Dask).
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from thinkfix.cli import main

distributed = pytest.importorskip("distributed")
pytest.importorskip("fsspec")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every fixture, and every JSONL fixture again under several names, some repeated."""
    root = tmp_path_factory.mktemp("corpus") / "sessions"
    shutil.copytree(FIXTURES, root)
    rng = random.Random(13)
    for n, source in enumerate(sorted(FIXTURES.rglob("*.jsonl"))):
        folder = root / "generated" / source.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{n:03d}-{source.name}").write_bytes(
            source.read_bytes() * rng.choice((1, 3, 20))
        )
    return root


def repair(*args: str) -> Result:
    return CliRunner().invoke(main, ["repair", "--isolated", "--no-progress", *args])


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def run_to(out: Path, spelled: str, *args: str) -> tuple[Result, dict[str, bytes], bytes]:
    """A repair into `out` (spelt as a path or a URL), from scratch; what it printed, wrote,
    and its diff report. Same output names every time, so the reports may be compared."""
    for leftover in (out, out.parent / "manifest.json", out.parent / "report.json"):
        if leftover.is_dir():
            shutil.rmtree(leftover)
        leftover.unlink(missing_ok=True)
    target = out.as_uri() if spelled == "url" else str(out)
    manifest, report = out.parent / "manifest.json", out.parent / "report.json"
    result = repair(*args, "--out", target, "--manifest", str(manifest), "--report", str(report))
    return result, tree(out), report.read_bytes()


@pytest.mark.parametrize("spelled", ["path", "url"])
@pytest.mark.parametrize("which", ["fixtures", "corpus"])
def test_dask_repair_writes_and_reports_what_one_process_does(
    dask_address: str, corpus: Path, tmp_path: Path, which: str, spelled: str
) -> None:
    root = str(FIXTURES if which == "fixtures" else corpus)
    if spelled == "url":  # a SQLite store is written by local path: Cursor's is left out
        copy = tmp_path / "in" / "sessions"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("state.vscdb"))
        root = str(copy)
    out = tmp_path / "out"
    local, local_files, local_report = run_to(out, spelled, "--jobs", "1", root)
    assert local.exit_code == 1, local.output  # the fixtures hold leaks repair refuses
    assert "repaired" in local.stderr and local_files
    got, files, report = run_to(out, spelled, "--dask", dask_address, root)
    assert got.exit_code == local.exit_code, got.output
    assert got.stderr == local.stderr
    assert files == local_files
    assert report == local_report


def test_dask_repair_of_file_urls_writes_what_a_local_run_does(
    dask_address: str, corpus: Path, tmp_path: Path
) -> None:
    """The workers read the inputs through fsspec too (OpenCode's linked files are found by
    local path only, and a store in its place is read from the disk only, an error through a
    URL: their folders are left out)."""
    sessions = tmp_path / "sessions"
    shutil.copytree(corpus, sessions, ignore=shutil.ignore_patterns("opencode", "kilo", "crush"))
    out = tmp_path / "out"
    local, local_files, _ = run_to(out, "url", "--jobs", "1", sessions.as_uri())
    assert local.exit_code == 1, local.output  # the refused leaks remain
    got, files, _ = run_to(out, "url", "--dask", dask_address, sessions.as_uri())
    assert got.exit_code == local.exit_code, got.output
    assert (got.stderr, files) == (local.stderr, local_files)


def test_dask_repair_never_replaces_an_existing_output(dask_address: str, tmp_path: Path) -> None:
    """A cluster's run keeps no backups, so an output that exists is refused, left as it is."""
    out = tmp_path / "out"
    first = repair("--jobs", "1", str(FIXTURES), "--out", str(out))
    assert first.exit_code == 1, first.output  # the refused leaks remain
    before = tree(out)
    again = repair("--dask", dask_address, str(FIXTURES), "--out", str(out))
    assert again.exit_code == 2, again.output
    assert "already exists; not overwritten" in again.stderr
    assert tree(out) == before


def test_dask_repair_in_place_is_refused(dask_address: str, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(FIXTURES, sessions)
    got = repair("--dask", dask_address, "--in-place", str(sessions))
    assert got.exit_code == 2, got.output
    assert "--dask cannot repair --in-place" in got.stderr
    assert tree(sessions) == tree(FIXTURES)


def test_dask_repair_without_a_scheduler_is_an_error(tmp_path: Path) -> None:
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        got = repair("--dask", "tcp://127.0.0.1:9", str(FIXTURES), "--out", str(tmp_path / "o"))
    assert got.exit_code == 2, got.output
    assert "cannot reach the scheduler" in got.stderr
    assert not (tmp_path / "o").exists()


def test_dask_repair_without_the_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    got = repair("--dask", "tcp://127.0.0.1:9", str(FIXTURES), "--out", str(tmp_path / "o"))
    assert got.exit_code == 2, got.output
    assert "pip install 'thinkfix[dask]'" in got.stderr


def test_dask_cannot_reach_a_memory_url(dask_address: str) -> None:
    got = repair("--dask", dask_address, str(FIXTURES), "--out", "memory://thinkfix-out")
    assert got.exit_code == 2, got.output
    assert "lives in this process only" in got.stderr


def test_a_task_the_cluster_lost_is_an_error_for_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers that died under a task (distributed's KilledWorker) fail that file, exit 2;
    the others' results are kept in job order."""
    from thinkfix.engine.parallel import dask as cluster

    def run_tasks(fn, tasks, dask_address, sizes=()):  # type: ignore[no-untyped-def]
        for i in reversed(range(len(tasks))):
            yield i, (RuntimeError("KilledWorker: all workers died") if i == 0 else fn(tasks[i]))

    monkeypatch.setattr(cluster, "run_tasks", run_tasks)
    got = repair("--dask", "tcp://nowhere:1", str(FIXTURES), "--out", str(tmp_path / "o"))
    assert got.exit_code == 2, got.output
    lost = [line for line in got.stderr.splitlines() if "the cluster lost this file's task" in line]
    assert len(lost) == 1 and "(KilledWorker: all workers died)" in lost[0]
    assert "repaired" in got.stderr  # the other files were written and reported


@pytest.mark.parametrize("mode", ["--dry-run", "--check"])
def test_dask_preview_prints_what_one_process_does(
    dask_address: str, corpus: Path, mode: str
) -> None:
    local = repair(mode, "--jobs", "1", str(corpus))
    assert local.exit_code in (0, 1), local.output
    assert "would repair" in local.stderr
    got = repair(mode, "--dask", dask_address, str(corpus))
    assert (got.exit_code, got.stderr) == (local.exit_code, local.stderr)
