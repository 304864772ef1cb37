"""The progress bar shows only where someone watches, and never breaks a scan."""

from __future__ import annotations

import io
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from thinkfix.cli.progress import progress_for, wanted
from thinkfix.cli.richbar import RichProgress
from thinkfix.engine.progress import NULL_PROGRESS
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import WriteMode


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_outside_ci() -> None:
    assert wanted(_Tty(), None, environ={})
    assert not wanted(_Tty(), None, environ={"CI": "true"})
    assert not wanted(io.StringIO(), None, environ={})
    assert wanted(io.StringIO(), True, environ={"CI": "1"})
    assert not wanted(_Tty(), False, environ={})
    assert progress_for(io.StringIO(), None) is NULL_PROGRESS


def test_progress_bar_draws_files_and_megabytes() -> None:
    stream = _Tty()
    bar = RichProgress(stream)
    bar.start(2, 3_000_000)
    bar.advance("a.jsonl", 1_000_000)
    bar.advance("b.jsonl", 2_000_000)
    bar.finish()
    drawn = stream.getvalue()
    assert "2/2" in drawn and "3.0/3.0 MB" in drawn and "MB/s" in drawn


def test_the_bar_draws_without_a_thread_of_its_own() -> None:
    """Before: rich's refresh thread ran while the bar showed, so the pool's workers of every
    run on a terminal were spawned, not forked (`pool.start_method`: fork only where no other
    thread runs)."""
    before = {t.ident for t in threading.enumerate()}
    stream = _Tty()
    bar = RichProgress(stream)
    bar.start(3, 3_000_000)
    try:
        assert {t.ident for t in threading.enumerate()} == before
        assert "0/3" in stream.getvalue()  # drawn at once, not by a thread later
        bar.advance("a.jsonl", 1_000_000)
        assert {t.ident for t in threading.enumerate()} == before
    finally:
        bar.finish()


class _Recorder:
    """A Progress sink that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def start(self, files: int, total_bytes: int) -> None:
        self.calls.append(("start", files, total_bytes))

    def advance(self, path: str, nbytes: int) -> None:
        self.calls.append(("advance", path, nbytes))

    def finish(self) -> None:
        self.calls.append(("finish",))


@pytest.mark.parametrize("jobs", [1, 2])
def test_repair_reports_each_file_to_the_progress_sink(tmp_path: Path, jobs: int) -> None:
    from tests.engine.repair_helpers import copy_fixtures, options

    tree = copy_fixtures(tmp_path)
    sink = _Recorder()
    result = repair_paths(
        [str(tree)], replace(options(WriteMode.DRY_RUN, tmp_path), jobs=jobs), progress=sink
    )
    start, *advances, finish = sink.calls
    files = sorted(p for p in tree.rglob("*") if p.is_file())
    assert start == ("start", len(files), sum(p.stat().st_size for p in files))
    assert sorted(a[1] for a in advances) == sorted(str(p) for p in files)
    assert sum(a[2] for a in advances) == start[2]
    assert finish == ("finish",) and len(result.files) == len(files)


@pytest.mark.parametrize(
    ("args", "setting", "verb", "code"),
    [
        (["repair", "--dry-run", "--progress"], True, "Checking", 1),
        (["repair", "--check", "--no-progress"], False, "Checking", 1),
        (["diff"], None, "Checking", 1),
    ],
)
def test_repair_and_diff_pass_the_progress_flag_to_the_engine(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    setting: bool | None,
    verb: str,
    code: int,
) -> None:
    from click.testing import CliRunner

    import thinkfix.cli.repairing as cli_repairing
    from tests.engine.repair_helpers import copy_fixtures
    from thinkfix.cli import main

    asked: list[tuple] = []
    sink = _Recorder()

    def fake_progress_for(
        stream: object, wanted_setting: bool | None, wanted_verb: str
    ) -> _Recorder:
        asked.append((wanted_setting, wanted_verb))
        return sink

    monkeypatch.setattr(cli_repairing, "progress_for", fake_progress_for)
    tree = copy_fixtures(tmp_path)
    result = CliRunner().invoke(main, [*args, "--isolated", str(tree)])
    assert result.exit_code == code, result.output  # the fixtures leak on purpose
    assert asked == [(setting, verb)]
    assert sink.calls[0][0] == "start" and sink.calls[-1] == ("finish",)
