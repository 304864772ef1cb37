"""A checkout's ignore patterns are matched in linear time, with git's answers (hostile10,
finding 14: `*a*a*a*a*a*a*a*a*b` in a `.gitignore` made the walk's `re` backtrack for minutes
over one long name, at full CPU)."""

from __future__ import annotations

import re
from pathlib import Path

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.inputs.ignore import _git_line, _posix, glob_match, linear
from thinkfix.engine.scan.runner import scan

PIECES = ["a", "b", "*", "?", "/", "[ab]", "[!a]", "**", "\\*", ".", "[+-0]"]


def _pathspec(pattern: str, path: str) -> bool:
    """pathspec's own answer, with its own expression (backtracking and all)."""
    spec = pathspec.GitIgnoreSpec.from_lines([_git_line(pattern)], backend="simple")
    return bool(spec.match_file(path))


@settings(max_examples=600, deadline=None)
@given(
    pattern=st.lists(st.sampled_from(PIECES), min_size=1, max_size=7).map("".join),
    path=st.lists(st.sampled_from(["a", "b", "/", "*", ".", "+"]), min_size=1, max_size=12).map(
        "".join
    ),
)
def test_the_linear_expression_answers_as_pathspec_does(pattern: str, path: str) -> None:
    path = path.strip("/") or "a"
    assert glob_match(pattern, path) == _pathspec(pattern, _posix(path))


def _bare_stars(expression: str) -> int:
    """The wildcards left to backtrack (outside an atomic lookahead)."""
    bare = re.sub(r"\(\?=\(\?P<tf\d+>\[\^/\]\*\?.*?\)\)\(\?P=tf\d+\)", "", expression)
    return bare.count("[^/]*")


def test_a_pattern_of_many_wildcards_backtracks_one_of_them_at_most() -> None:
    for pattern in ["*a*a*a*a*a*a*a*a*b", "x*****************y", "a*?*?*?*?*?*b", "*[ab]*a*b*c"]:
        expression = pathspec.GitIgnoreSpec.from_lines([pattern], backend="simple")
        safe = linear(expression.patterns[0].regex.pattern)  # type: ignore[attr-defined]
        assert _bare_stars(safe) == 1, safe  # each pattern is one name
    assert not glob_match("*a*a*a*a*a*a*a*a*b", "x/" + "a" * 300 + "/s.jsonl")


def test_a_checkouts_gitignore_of_many_wildcards_is_walked_as_git_would(tmp_path: Path) -> None:
    """The probe of the report: a folder of a long name beside the hostile `.gitignore`;
    the session in it is scanned (the pattern does not match it), the run ends."""
    (tmp_path / ".git").mkdir()
    folder = tmp_path / ("a" * 200)
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(
        b'{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user",'
        b'"content":"hi"},"uuid":"u1","sessionId":"s","timestamp":"2026-03-02T10:21:19.004Z"}\n'
    )
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*b\n")
    report = scan([str(tmp_path)])
    assert report.summary.files == 1
