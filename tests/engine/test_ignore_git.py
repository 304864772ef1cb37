"""Ignore files mean what git says they mean (issue 14 #6): the walker's choice is checked
against `git check-ignore` on a real repository, scanned whole and from a subfolder (the
root .gitignore and .git/info/exclude apply there too)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.inputs.walk import WalkStats, walk

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FILES = [
    "top.jsonl",
    "keep.jsonl",
    "a/top.jsonl",
    "a/b.tmp.jsonl",
    "a/keep.tmp.jsonl",
    "logs/x.jsonl",
    "a/logs/y.jsonl",
    "a/logsfile.jsonl",
    "deep/p/q/deep.jsonl",
    "deep/deep.jsonl",
    "sub/inner.jsonl",
    "sub/local.jsonl",
    "sub/nested/local.jsonl",
    "sub/nested/other.jsonl",
    "private/s.jsonl",
    "archive/2024/s.jsonl",
    "x/archive/s.jsonl",
]
ROOT_IGNORE = "/top.jsonl\nlogs/\n*.tmp.jsonl\n!keep.tmp.jsonl\ndeep/**/deep.jsonl\n"
SUB_IGNORE = "local.jsonl\n!nested/local.jsonl\n"
INFO_EXCLUDE = "private/\n"


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    done = subprocess.run(
        ["git", *args], cwd=repo, input=stdin, capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _repo(tmp_path: Path, root_ignore: str = ROOT_IGNORE) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    for name in FILES:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("{}\n")
    (repo / ".gitignore").write_text(root_ignore)
    (repo / "sub" / ".gitignore").write_text(SUB_IGNORE)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text(INFO_EXCLUDE)
    return repo


def _git_kept(repo: Path, under: str = "") -> set[str]:
    names = [n for n in FILES if n.startswith(under)]
    ignored = set(_git(repo, "check-ignore", "--stdin", stdin="\n".join(names)).split())
    return {n for n in names if n not in ignored}


def _walked(repo: Path, under: str = "", **options: object) -> set[str]:
    root = repo / under if under else repo
    found = {
        os.path.relpath(c.path, repo).replace(os.sep, "/")
        for c in walk([str(root)], InputOptions(**options))
    }  # type: ignore[arg-type]
    return found


def test_walk_keeps_exactly_what_git_keeps(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert _walked(repo) == _git_kept(repo)


@pytest.mark.parametrize("under", ["a/", "sub/", "deep/", "private/"])
def test_a_subfolder_scan_honours_the_root_gitignore_and_info_exclude(
    tmp_path: Path, under: str
) -> None:
    repo = _repo(tmp_path)
    assert _walked(repo, under) == _git_kept(repo, under)


PATTERNS = st.sampled_from(
    [
        "*.tmp.jsonl",
        "!keep.tmp.jsonl",
        "logs/",
        "/logs",
        "logs",
        "**/logs",
        "a/**",
        "a/*",
        "/a/top.jsonl",
        "top.jsonl",
        "deep/**/deep.jsonl",
        "**/deep.jsonl",
        "archive/",
        "!archive/2024",
        "x/",
        "!x/archive/",
        "sub/*.jsonl",
        "*/inner.jsonl",
        "?eep.jsonl",
        "[kt]*.jsonl",
        "*/",
        "!a/",
        "/**",
        "a/**/",
        "!a/logs/",
    ]
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(PATTERNS, min_size=1, max_size=6))
@example(["a/**", "!keep.tmp.jsonl"])  # `a/**` is a's contents, not a: `!` re-includes
@example(["a/**", "!a/keep.tmp.jsonl"])
@example(["a/**/", "!keep.tmp.jsonl"])  # dir-only: a's subfolders, never a or its files
@example(["*/", "!a/"])  # `!a/` re-includes a, not a/logs, which `*/` still names
def test_any_root_gitignore_agrees_with_git(
    tmp_path_factory: pytest.TempPathFactory, patterns: list[str]
) -> None:
    repo = _repo(tmp_path_factory.mktemp("r"), "\n".join(patterns) + "\n")
    assert _walked(repo) == _git_kept(repo)
    assert _walked(repo, "a/") == _git_kept(repo, "a/")


@pytest.mark.parametrize(
    "patterns",
    [
        ["a/**", "!keep.tmp.jsonl"],
        ["a/**", "!a/keep.tmp.jsonl"],
        ["/a/**", "!*.tmp.jsonl"],
        ["**/logs/**", "!y.jsonl"],
        ["a/**/", "!keep.tmp.jsonl"],
        ["/**", "!keep.tmp.jsonl"],
        ["*/", "!a/"],
        ["logs/", "!a/"],
    ],
)
def test_git_ignore_edge_cases_pathspec_alone_gets_wrong(
    tmp_path: Path, patterns: list[str]
) -> None:
    """Regression (issue 14 #6): pathspec lets `a/**` match the folder `a/` itself, so the
    walker pruned `a` and lost `a/keep.tmp.jsonl`, which git re-includes (`a/**` excludes what
    is inside `a`, not `a`, and a `!` can re-include a file whose folder is not excluded).
    Siblings the property found with more examples: a root inside an ignored folder (`/**`)
    keeps nothing; `!a/` re-includes the folder a, not what a pattern names inside it."""
    repo = _repo(tmp_path, "\n".join(patterns) + "\n")
    assert _walked(repo) == _git_kept(repo)
    assert _walked(repo, "a/") == _git_kept(repo, "a/")


def test_exclude_is_anchored_to_its_folder_and_unmatched_patterns_are_known(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "")
    stats = WalkStats()
    options = InputOptions(
        exclude=("archive/", "'archive/**'"), anchor=str(repo), respect_ignore=False
    )
    found = {os.path.relpath(c.path, repo) for c in walk([str(repo / "x")], options, stats=stats)}
    # `archive/` has no inner slash: it matches at any depth, as in .gitignore.
    assert found == set()
    anchored = InputOptions(exclude=("x/archive/**",), anchor=str(repo), respect_ignore=False)
    assert not list(walk([str(repo / "x")], anchored))  # anchored at the config's folder
    assert stats.unmatched(options.exclude) == ["'archive/**'"]
