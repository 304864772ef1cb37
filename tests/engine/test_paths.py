"""One spelling of a file in every report: relative to the working folder, POSIX, no `./`
(issue 14 #1: GitHub only attaches annotations whose path is workspace-relative)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.engine.report import InputError, LeakFinding, MessageCounts, Report, Summary
from thinkfix.engine.scan.report import with_display_paths
from thinkfix.io.paths import display_path

CWD = "/work/repo"


def test_dot_prefix_is_dropped() -> None:
    assert display_path("./fixtures/a.jsonl", CWD) == "fixtures/a.jsonl"
    assert display_path("fixtures/./x/../a.jsonl", CWD) == "fixtures/a.jsonl"


def test_absolute_inside_the_working_folder_becomes_relative() -> None:
    assert display_path("/work/repo/sub/a.jsonl", CWD) == "sub/a.jsonl"


def test_outside_the_working_folder_stays_absolute() -> None:
    assert display_path("/tmp/a.jsonl", CWD) == "/tmp/a.jsonl"
    assert display_path("../other/a.jsonl", CWD) == "/work/other/a.jsonl"
    assert display_path("/work/repository/a.jsonl", CWD) == "/work/repository/a.jsonl"


def test_stdin_stays_a_dash() -> None:
    assert display_path("-", CWD) == "-"


segment = st.sampled_from(["a", "b.jsonl", ".", "..", "x y", "ü", ".hidden"])


@given(st.lists(segment, min_size=1, max_size=6), st.booleans())
def test_display_paths_are_canonical(parts: list[str], absolute: bool) -> None:
    path = ("/" if absolute else "") + "/".join(parts)
    shown = display_path(path, CWD)
    assert not shown.startswith("./") and "/./" not in shown and "\\" not in shown
    assert display_path(shown, CWD) == shown  # one spelling: showing twice changes nothing
    assert os.path.normpath(os.path.join(CWD, shown)) == os.path.normpath(os.path.join(CWD, path))


def test_every_path_of_a_report_is_respelled(tmp_path: Path) -> None:
    finding = LeakFinding(
        path=f"{tmp_path}/s/a.jsonl",
        line=1,
        json_path="t",
        format="f",
        kind="block",
        tag="think",
        start=0,
        end=1,
        leaked_chars=1,
    )
    report = Report(
        summary=Summary(by_file={f"{tmp_path}/./s/a.jsonl": MessageCounts(1, 1, 1)}),
        findings=(finding,),
        errors=(InputError(f"{tmp_path}/s/b.jsonl", 3, "bad_line", "x"),),
    )
    shown = with_display_paths(report, str(tmp_path))
    assert shown.findings[0].path == "s/a.jsonl"
    assert shown.errors[0].path == "s/b.jsonl"
    assert list(shown.summary.by_file) == ["s/a.jsonl"]
    assert shown.root == str(tmp_path)
