"""Path walking, ignore rules and per-file format detection."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import shutil
from pathlib import Path

import pytest
import zstandard

from thinkfix.engine.inputs.files import InputFile, InputOptions, UnknownPolicy, resolve
from thinkfix.engine.inputs.ignore import glob_match, ignored, parse_ignore
from thinkfix.engine.inputs.walk import is_session_name, walk
from thinkfix.formats import registry
from thinkfix.io.compression import Compression

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CLAUDE = next((FIXTURES / "claude-code").glob("7f3c*.jsonl"))


def collect(
    paths: list[str], options: InputOptions | None = None, *, stdin: io.BytesIO | None = None
) -> list[InputFile]:
    """Walk and detect in this process, as a scan does per file: every file in order."""
    options = options or InputOptions()
    return [resolve(c, options) for c in walk(paths, options, stdin=stdin)]


def _rel(files, root):
    return [os.path.relpath(f.path, root).replace(os.sep, "/") for f in files]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    data = CLAUDE.read_bytes()
    for rel in (
        "b/s2.jsonl",
        "a.jsonl",
        "b/a/s1.jsonl",
        "node_modules/x.jsonl",
        ".git/y.jsonl",
        "ignored/z.jsonl",
        "keep.jsonl.reset.2026-03-24T19-52-10.004Z",
        "notes.md",
        "c.jsonl.lock",
        "deep/__pycache__/q.jsonl",
    ):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (tmp_path / "z.jsonl.gz").write_bytes(gzip.compress(data))
    (tmp_path / "y.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    (tmp_path / ".gitignore").write_text("# comment\nignored/\n")
    return tmp_path


def test_inputs_walk_is_sorted_and_skips_noise(tree: Path) -> None:
    files = collect([str(tree)])
    assert _rel(files, tree) == [
        "a.jsonl",
        "keep.jsonl.reset.2026-03-24T19-52-10.004Z",
        "y.jsonl.zst",
        "z.jsonl.gz",
        "b/s2.jsonl",
        "b/a/s1.jsonl",
    ]
    assert all(f.ok and f.format == "claude-code" for f in files)
    assert not any(f.explicit for f in files)


def test_inputs_compressed_files_are_detected(tree: Path) -> None:
    by_name = {os.path.basename(f.path): f for f in collect([str(tree)])}
    assert by_name["z.jsonl.gz"].compression is Compression.GZIP
    assert by_name["y.jsonl.zst"].compression is Compression.ZSTD
    with by_name["y.jsonl.zst"].open() as fp:
        assert fp.read() == CLAUDE.read_bytes()


def test_inputs_thinkfixignore_negation_and_exclude(tree: Path) -> None:
    (tree / "b" / ".thinkfixignore").write_text("*.jsonl\n!s2.jsonl\n")
    files = collect([str(tree)], InputOptions(exclude=("keep*", "*.gz")))
    assert _rel(files, tree) == ["a.jsonl", "y.jsonl.zst", "b/s2.jsonl"]


def test_inputs_respect_ignore_off(tree: Path) -> None:
    files = collect([str(tree)], InputOptions(respect_ignore=False))
    assert "ignored/z.jsonl" in _rel(files, tree)
    assert "node_modules/x.jsonl" not in _rel(files, tree)  # always skipped


def test_inputs_include_replaces_default(tree: Path) -> None:
    files = collect([str(tree)], InputOptions(include=("b/**",)))
    assert _rel(files, tree) == ["b/s2.jsonl", "b/a/s1.jsonl"]


def test_inputs_duplicates_are_dropped(tree: Path) -> None:
    files = collect([str(tree / "a.jsonl"), str(tree), str(tree / "a.jsonl")])
    assert _rel(files, tree).count("a.jsonl") == 1
    assert files[0].explicit


def test_inputs_missing_and_unknown(tree: Path) -> None:
    (tree / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    (tree / "notes.md").write_text("# notes\n")
    files = collect([str(tree / "missing.jsonl"), str(tree / "notes.md"), str(tree)])
    assert files[0].error is not None and files[0].error.kind == "unreadable"
    assert files[1].error is not None and files[1].error.kind == "unknown_format"
    walked = {os.path.basename(f.path): f for f in files[2:]}
    assert walked["package.json"].skipped and walked["package.json"].error is None
    strict = collect([str(tree)], InputOptions(unknown=UnknownPolicy.ERROR))
    assert any(f.error is not None and f.error.kind == "unknown_format" for f in strict)


def test_inputs_forced_format_and_stdin() -> None:
    files = collect(
        ["-"], InputOptions(format="claude-code"), stdin=io.BytesIO(CLAUDE.read_bytes())
    )
    assert files[0].path == "-" and files[0].format == "claude-code"
    with files[0].open() as fp:
        assert fp.read() == CLAUDE.read_bytes()


def test_inputs_corrupt_compression_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "s.jsonl.gz"
    bad.write_bytes(gzip.compress(CLAUDE.read_bytes())[:40])
    (f,) = collect([str(bad)])
    assert f.error is not None and f.error.kind == "unreadable"


def test_inputs_empty_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_bytes(b"")
    (f,) = collect([str(tmp_path / "e.jsonl")])
    assert f.skipped == "empty" and f.error is None


def test_inputs_broken_symlink_is_an_error(tmp_path: Path) -> None:
    shutil.copy(CLAUDE, tmp_path / "a.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "gone.jsonl")
    files = collect([str(tmp_path)])
    assert [f.ok for f in files] == [True, False]
    assert files[1].error is not None and files[1].error.kind == "unreadable"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_inputs_unreadable_file(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    shutil.copy(CLAUDE, p)
    p.chmod(0)
    (f,) = collect([str(tmp_path)])
    assert f.error is not None and f.error.kind == "unreadable"


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("datasets/**", "datasets/a/b.jsonl", True),
        ("datasets/**", "other/datasets/b.jsonl", False),
        ("archive", "a/archive/b.jsonl", True),
        ("*.json", "a/b.jsonl", False),
        ("**/x/*.jsonl", "x/s.jsonl", True),
        ("**/x/*.jsonl", "a/b/x/s.jsonl", True),
        ("s?.jsonl", "s1.jsonl", True),
        ("s[0-9].jsonl", "sa.jsonl", False),
    ],
)
def test_inputs_glob_match(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


def test_inputs_gitignore_rules() -> None:
    rules = parse_ignore("/top.jsonl\nlogs/\n*.tmp\n!keep.tmp\nsub/**/deep.jsonl\n")
    assert ignored(rules, "top.jsonl", False)
    assert not ignored(rules, "x/top.jsonl", False)
    assert ignored(rules, "a/logs", True) and not ignored(rules, "a/logs", False)
    assert ignored(rules, "a/b.tmp", False) and not ignored(rules, "a/keep.tmp", False)
    assert ignored(rules, "sub/p/q/deep.jsonl", False)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("s.jsonl", True),
        ("s.json", True),
        ("s.jsonl.zst", True),
        ("s.jsonl.gz", True),
        ("s.jsonl.deleted.2026-01-01T00-00-00.000Z", True),
        ("README.md", False),
        ("x.sse", False),
        ("x.ndjson", False),
    ],
)
def test_inputs_session_names(name: str, expected: bool) -> None:
    assert is_session_name(name) is expected


def test_detection_carries_the_format_object_and_workers_get_its_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#12 item 7: the format detection chose travels as the object (no second lookup by id);
    a worker process receives its id, the wire form, and gets the registry's own object back."""
    (file,) = collect([str(CLAUDE)])
    assert file.fmt is registry.get("claude-code") and file.format == "claude-code"
    monkeypatch.setattr(registry, "get", _no_lookup)
    assert file.session_format() is file.fmt  # readers use the object it carries
    monkeypatch.undo()
    wire = pickle.dumps(file)
    assert b"claude-code" in wire and type(file.fmt).__name__.encode() not in wire
    back = pickle.loads(wire)
    assert back == file and back.fmt is file.fmt
    undetected = InputFile("x", "x", skipped="empty")
    assert pickle.loads(pickle.dumps(undetected)) == undetected


def _no_lookup(name: str) -> None:
    raise AssertionError(f"format {name!r} looked up again by its id")
