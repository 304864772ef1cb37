"""The progress bar shows only where someone watches, and never breaks a scan."""

from __future__ import annotations

import io

from thinkfix.cli.progress import RichProgress, progress_for, wanted
from thinkfix.engine.progress import NULL_PROGRESS


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
