"""Any file name is a name on an fsspec filesystem, never a URL chain nor a glob (#22 item 10).

`repair --out file://…` wrote the file `a::memory:.jsonl` as `out/a` (fsspec read `::` as a
chain of URLs, the rest naming a memory file), and `--out memory://…` failed on names holding
`*`, `?` or `[x]` ("cannot move into place": fsspec's `mv` and `rm` expand globs, so the move
found no file or another one, and the failed write's cleanup left its temporary object). A
name is now taken literally: only a `::` followed by a URL (`scheme://`, which no file name
can hold) chains filesystems, and single files are moved and removed by their literal paths.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import memory_tree
from thinkfix.cli import main

fsspec = pytest.importorskip("fsspec")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKING = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
THE_ISSUE_S = ("a::memory:.jsonl", "b*.jsonl", "c?.jsonl", "d[x].jsonl", "e[!x]::s3:.jsonl")
#: Characters a file name may hold on every system fsspec serves (no `/`, no NUL), with
#: those fsspec once read as a chain or a glob.
NAME_CHARS = st.sampled_from("ab09 -_.,+=@#%&!~'()[]{}*?:^$")
NAMES = st.text(NAME_CHARS, min_size=1, max_size=12).map(lambda s: f"n{s}.jsonl")


def repair(*args: str) -> Result:
    return CliRunner().invoke(main, ["repair", "--isolated", "--no-progress", "--jobs", "1", *args])


def sessions(folder: Path, names: tuple[str, ...]) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy(LEAKING, folder / name)
    return folder


def expected(folder: Path, tmp_path: Path) -> dict[str, bytes]:
    """What a local `--out` holds for `folder` (the fixture has a leak repair refuses)."""
    out = tmp_path / "local-out"
    if out.exists():
        shutil.rmtree(out)
    got = repair(str(folder), "--out", str(out))
    assert got.exit_code == 1, got.output
    return {p.name: p.read_bytes() for p in out.iterdir()}


def local_files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir()}


def test_the_issue_s_names_are_written_as_named_and_undone(tmp_path: Path, memory: Any) -> None:
    folder = sessions(tmp_path / "in", THE_ISSUE_S)
    files = expected(folder, tmp_path)
    assert sorted(files) == sorted(THE_ISSUE_S)

    manifest = tmp_path / "m.json"
    got = repair(str(folder), "--out", "memory://thinkfix-out", "--manifest", str(manifest))
    assert got.exit_code == 1, got.output
    assert memory_tree(memory, "/thinkfix-out") == files

    out = tmp_path / "url-out"
    got = repair(str(folder), "--out", out.as_uri())
    assert got.exit_code == 1, got.output
    assert local_files(out) == files
    assert not (out / "a").exists()

    undone = CliRunner().invoke(main, ["undo", str(manifest)])
    assert undone.exit_code == 0, undone.output
    assert not memory.find("/thinkfix-out")


def test_the_issue_s_names_are_read_from_a_memory_url(tmp_path: Path, memory: Any) -> None:
    folder = sessions(tmp_path / "in", THE_ISSUE_S)
    files = expected(folder, tmp_path)
    for name in THE_ISSUE_S:
        memory.pipe_file(f"/thinkfix-in/{name}", LEAKING.read_bytes())
    got = repair("memory://thinkfix-in", "--out", "memory://thinkfix-out")
    assert got.exit_code == 1, got.output
    assert memory_tree(memory, "/thinkfix-out") == files


def test_a_failed_write_of_a_glob_name_leaves_no_temporary_object(
    tmp_path: Path, memory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cleanup removed with `fs.rm`: for `d[x]` the glob matched nothing, and the
    temporary object stayed."""
    folder = sessions(tmp_path / "in", ("d[x].jsonl", "b*.jsonl"))

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("refused by the test")

    monkeypatch.setattr("thinkfix.io.urlwrite._move", refuse)
    got = repair(str(folder), "--out", "memory://thinkfix-out")
    assert got.exit_code == 2, got.output
    assert memory.find("/thinkfix-out") == []


@settings(
    max_examples=25,
    deadline=None,
    # each example replaces its folders and clears the memory filesystem
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(name=NAMES)
def test_any_file_name_round_trips_repair_out_to_memory_and_file_urls(
    tmp_path: Path, memory: Any, name: str
) -> None:
    folder = sessions(tmp_path / "in", (name,))
    files = expected(folder, tmp_path)
    if memory.exists("/thinkfix-out"):
        memory.rm("/thinkfix-out", recursive=True)
    got = repair(str(folder), "--out", "memory://thinkfix-out")
    assert got.exit_code == 1, got.output
    assert memory_tree(memory, "/thinkfix-out") == files

    out = tmp_path / "url-out"
    if out.exists():
        shutil.rmtree(out)
    got = repair(str(folder), "--out", out.as_uri())
    assert got.exit_code == 1, got.output
    assert local_files(out) == files
