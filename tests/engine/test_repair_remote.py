"""`repair --out URL` and repair of URL inputs write what a local `--out` writes (#13 item 6).

fsspec's memory filesystem (this process only, so without Dask) and its local filesystem
(`file://`) stand in for a bucket. The repaired bytes and the report must be the ones a local
`--out` gives; a write that fails at any step leaves nothing at the final name (and no
temporary object); a URL is never written in place nor overwritten, and a URL without
fsspec installed is an error naming the extra.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import memory_tree
from tests.engine.test_repair_properties import TEXTS, _claude
from tests.formats.support import is_store
from thinkfix.cli import main
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.io import filestate, urlwrite

fsspec = pytest.importorskip("fsspec")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: OpenCode keeps a session as a folder of linked files that its reader finds by local path.
LOCAL_ONLY = ("opencode", "kilo", "cursor")  # Cursor: a SQLite store, opened by local path


def _local_only(folder: str, names: list[str]) -> list[str]:
    """OpenCode's file stores, and every database store (SQLite reads a local file only; a
    store's --out to a URL is tested in tests/formats/test_zed.py)."""
    return [n for n in names if n in LOCAL_ONLY or is_store(Path(folder) / n)]


@pytest.fixture
def local(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    shutil.copytree(FIXTURES, root, ignore=_local_only)
    return root


def repair(*args: str) -> Result:
    return CliRunner().invoke(main, ["repair", "--isolated", "--no-progress", *args])


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def upload(fs: object, local: Path, root: str) -> None:
    for path in local.rglob("*"):
        if path.is_file():
            fs.pipe(f"{root}/{path.relative_to(local).as_posix()}", path.read_bytes())  # type: ignore[attr-defined]


def local_run(local: Path, tmp_path: Path) -> tuple[Result, dict[str, bytes]]:
    out = tmp_path / "local-out"
    result = repair("--jobs", "1", str(local), "--out", str(out), "--manifest", str(tmp_path / "m"))
    assert result.exit_code == 1, result.output  # the fixtures hold leaks repair refuses
    assert "repaired" in result.stderr
    return result, tree(out)


def lines(result: Result, *spellings: tuple[str, str]) -> list[str]:
    """The report on stderr, each spelling of a place replaced (the manifest line left out)."""
    text = result.stderr
    for old, new in spellings:
        text = text.replace(old, new)
    return [line for line in text.splitlines() if not line.startswith("undo with:")]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_memory_url_repaired_to_a_memory_url_writes_what_a_local_out_does(
    local: Path, tmp_path: Path, memory: object, jobs: str
) -> None:
    """With --jobs 2 too: a worker process would write its own, empty memory filesystem, and
    the files reported written would not be there."""
    expected, files = local_run(local, tmp_path)
    upload(memory, local, "/thinkfix-in")
    got = repair("--jobs", jobs, "memory://thinkfix-in", "--out", "memory://thinkfix-out")
    assert got.exit_code == expected.exit_code, got.output
    assert memory_tree(memory, "/thinkfix-out") == files
    assert lines(got, ("memory://thinkfix-in", "IN"), ("memory://thinkfix-out", "OUT")) == lines(
        expected, (str(local), "IN"), (str(tmp_path / "local-out"), "OUT")
    )


def test_local_inputs_repaired_to_a_memory_url(local: Path, tmp_path: Path, memory: object) -> None:
    _, files = local_run(local, tmp_path)
    got = repair("--jobs", "1", str(local), "--out", "memory://thinkfix-out/")
    assert got.exit_code == 1, got.output
    assert memory_tree(memory, "/thinkfix-out") == files


@pytest.mark.parametrize("spell_in", ["path", "url"])
def test_a_file_url_output_holds_the_bytes_of_a_local_out(
    local: Path, tmp_path: Path, spell_in: str
) -> None:
    _, files = local_run(local, tmp_path)
    out = tmp_path / "url-out"
    source = local.as_uri() if spell_in == "url" else str(local)
    got = repair("--jobs", "2", source, "--out", out.as_uri())
    assert got.exit_code == 1, got.output
    assert tree(out) == files
    assert not [p for p in out.rglob("*") if filestate.TEMP_SUFFIX in p.name]


def test_an_existing_object_is_never_overwritten(local: Path, memory: object) -> None:
    target = "/thinkfix-out/pi/" + next(p.name for p in (local / "pi").glob("*.jsonl"))
    memory.pipe(target, b"someone else's bytes\n")  # type: ignore[attr-defined]
    got = repair("--jobs", "1", str(local), "--out", "memory://thinkfix-out")
    assert got.exit_code == 2, got.output
    assert "already exists; not overwritten" in got.stderr
    assert memory.cat(target) == b"someone else's bytes\n"  # type: ignore[attr-defined]
    assert len(memory.find("/thinkfix-out")) > 1  # the other files were written  # type: ignore[attr-defined]


def test_in_place_on_a_url_is_refused_and_the_file_left_as_it_is(local: Path) -> None:
    before = tree(local)
    got = repair("--in-place", "--include-active", local.as_uri())
    assert got.exit_code == 2, got.output
    assert "not repaired in place: a URL's filesystem has no atomic rename" in got.stderr
    assert tree(local) == before


def test_a_url_without_fsspec_names_the_extra(
    local: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)  # `import fsspec` raises ImportError
    out = repair(str(local), "--out", "memory://thinkfix-out")
    assert out.exit_code == 2, out.output
    assert "pip install 'thinkfix[remote]'" in out.stderr
    source = repair(local.as_uri(), "--out", str(tmp_path / "out"))
    assert source.exit_code == 2, source.output
    assert "pip install 'thinkfix[remote]'" in source.stderr
    assert "internal error" not in out.stderr + source.stderr  # said, not crashed
    assert not (tmp_path / "out").exists()


def test_an_unreachable_url_is_an_error_and_nothing_is_written(local: Path, tmp_path: Path) -> None:
    missing = repair((tmp_path / "missing").as_uri(), "--out", str(tmp_path / "out"))
    assert missing.exit_code == 2, missing.output
    unknown = repair(str(local), "--out", "nosuchfs://bucket/out")
    assert unknown.exit_code == 2, unknown.output
    assert "--out nosuchfs://bucket/out: Protocol not known" in unknown.stderr
    # /proc takes no new files, even from root: every write fails, each an error, none partial
    unwritable = repair("--jobs", "1", str(local), "--out", "file:///proc/thinkfix-out")
    assert unwritable.exit_code == 2, unwritable.output
    assert "cannot write" in unwritable.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("step", ["produce", "verify", "journal", "move", "after-move"])
def test_a_failed_write_leaves_nothing_at_the_final_name_nor_a_temporary_object(
    local: Path, memory: object, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    from thinkfix.engine.repair import write as repair_write

    def fail(*_: object, **__: object) -> None:
        raise filestate.VerifyError("injected failure")

    if step == "produce":
        monkeypatch.setattr(repair_write.compression, "wrap_writer", fail)
        monkeypatch.setattr(repair_write.FilePlan, "blocks", fail)
        monkeypatch.setattr(repair_write.safewrite, "copy_into", fail)  # the original's runs
        monkeypatch.setattr(repair_write.New, "write_to", fail)  # the new records
        monkeypatch.setattr(repair_write, "planned", fail)  # or both, from the bytes kept
    elif step == "verify":
        monkeypatch.setattr(repair_write, "verify", fail)
    elif step == "journal":
        monkeypatch.setattr(repair_write.ledger_journal, "journal", fail)
    elif step == "move":
        monkeypatch.setattr(urlwrite, "_move", fail)
    else:  # the moved object reads back other bytes than were written
        real = urlwrite._move

        def corrupt(fs: object, temp: str, path: str, local: bool) -> None:
            real(fs, temp, path, local)
            fs.pipe(path, b"not what was written\n")  # type: ignore[attr-defined]

        monkeypatch.setattr(urlwrite, "_move", corrupt)
    got = repair("--jobs", "1", str(local), "--out", "memory://thinkfix-out")
    assert got.exit_code == 2, got.output
    left = memory.find("/thinkfix-out") if memory.exists("/thinkfix-out") else []  # type: ignore[attr-defined]
    assert not [p for p in left if filestate.TEMP_SUFFIX in p]
    repaired = {p for p in left if not p.endswith((".thinkfix.json",))}
    # only files copied unchanged (no repair to verify) may be there, never a failed one
    for path in repaired:
        rel = path[len("/thinkfix-out/") :]
        assert memory.cat(path) == (local / rel).read_bytes(), path  # type: ignore[attr-defined]


def test_undo_removes_the_objects_a_url_output_created_unless_changed(
    local: Path, tmp_path: Path
) -> None:
    out = tmp_path / "url-out"
    manifest = tmp_path / "manifest.json"
    got = repair("--jobs", "1", str(local), "--out", out.as_uri(), "--manifest", str(manifest))
    assert got.exit_code == 1, got.output
    changed = next(out.rglob("*.jsonl"))
    changed.write_bytes(changed.read_bytes() + b"\n")
    runner = CliRunner()
    refused = runner.invoke(main, ["undo", str(manifest)])
    assert refused.exit_code == 2, refused.output
    assert "changed since the repair" in refused.stderr
    assert changed.exists()
    undone = runner.invoke(main, ["undo", "--skip-changed", str(manifest)])
    assert undone.exit_code == 2, undone.output  # the changed one is reported, kept
    assert [p for p in out.rglob("*") if p.is_file()] == [changed]


def test_a_file_error_and_its_bad_lines_sort_together() -> None:
    """A file with bad lines whose write was refused has errors with and without a line;
    sorting them crashed the run (None < int) after its files were written."""
    from thinkfix.engine.repair.model import FileResult, FileStatus, RepairResult, WriteMode
    from thinkfix.engine.report import InputError
    from thinkfix.io.errors import ErrorKind

    refused = InputError("a.jsonl", None, ErrorKind.WRITE_FAILED, "a.jsonl: already exists")
    bad = InputError("a.jsonl", 3, ErrorKind.BAD_LINE, "line 3: not JSON")
    result = RepairResult(
        WriteMode.OUT, (FileResult("a.jsonl", "pi", FileStatus.FAILED, errors=(bad, refused)),)
    )
    assert result.all_errors == (refused, bad)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sessions=st.lists(
        st.tuples(st.lists(TEXTS, min_size=1, max_size=4), TEXTS, st.booleans()),
        min_size=1,
        max_size=4,
    )
)
def test_a_url_output_always_holds_the_bytes_of_a_local_out(
    sessions: list[tuple[list[str], str, bool]],
) -> None:
    """Whatever the sessions hold (leaking, clean, refused, compressed or not), repairing
    them to a URL writes, file for file, what a local --out writes, and leaves no temporary
    object."""
    fs = fsspec.filesystem("memory")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = root / "in"
        source.mkdir()
        for n, (texts, user, gz) in enumerate(sessions):
            data = _claude(texts, user)
            name = f"{n}.jsonl" + (".gz" if gz else "")
            (source / name).write_bytes(gzip.compress(data, mtime=0) if gz else data)
        try:
            local = RepairOptions(mode=WriteMode.OUT, out_dir=str(root / "out"), run_dir=tmp)
            url = replace(local, out_dir="memory://thinkfix-out", run_dir=str(root / "run2"))
            expected = repair_paths([str(source)], local)
            got = repair_paths([str(source)], url)
            assert [(f.path, f.status, f.changes) for f in got.files] == [
                (f.path, f.status, f.changes) for f in expected.files
            ]
            written = tree(root / "out")
            assert memory_tree(fs, "/thinkfix-out") == written
        finally:
            if fs.exists("/thinkfix-out"):
                fs.rm("/thinkfix-out", recursive=True)


def test_a_file_url_output_sweeps_a_dead_runs_temporary_files(local: Path, tmp_path: Path) -> None:
    out = tmp_path / "url-out"
    (out / "pi").mkdir(parents=True)
    dead = filestate.temp_name(str(out / "pi" / "x.jsonl"))
    # this host's name, a pid no process has (past any pid_max)
    stale = out / "pi" / Path(dead).name.replace(f".{os.getpid()}.", ".999999999.")
    stale.write_bytes(b"half a session")
    got = repair("--jobs", "1", str(local), "--out", out.as_uri())
    assert got.exit_code == 1, got.output
    assert not stale.exists()
