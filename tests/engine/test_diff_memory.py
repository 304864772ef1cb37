"""`thinkfix diff` over many small files (#22 item 10): 100,000 one-record sessions (100
leaking) took 766 MB, nearly all of it the text view's table of every file, clean ones
included (rich lays out a table whole: ~7 KB a row). The memory a file adds is measured as
the difference of two runs' peaks, each in a fresh process (never time)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.engine.conftest import claude_line
from tests.engine.memory_probe import thinkfix_peak

pytestmark = pytest.mark.memory

SMALL, LARGE = 1_000, 7_000
PER_FILE_KB = 2.5  # what the run keeps a file (its job, result and row); the table took ~7


def _folder(root: Path, count: int) -> Path:
    """`count` one-record Claude Code sessions, one in a thousand leaking."""
    for i in range(count):
        folder = root / f"p{i // 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = "<think>plan</think>Answer" if i % 1000 == 0 else "Answer"
        path = folder / f"{i:08x}-0000-4000-8000-000000000000.jsonl"
        path.write_bytes(claude_line(text, uuid=f"u{i}", session=f"s{i}"))
        os.utime(path, (1e9, 1e9))
    return root


@pytest.mark.parametrize("view", ["text", "json"])
def test_diff_adds_a_bounded_amount_of_memory_per_clean_file(tmp_path: Path, view: str) -> None:
    env = {**os.environ, "THINKFIX_STATE_DIR": str(tmp_path / "state")}
    peaks = []
    for count in (SMALL, LARGE):
        folder = _folder(tmp_path / str(count), count)
        code, peak, out = thinkfix_peak(
            "diff", "--isolated", "--jobs", "1", "--output-format", view, str(folder), env=env
        )
        assert code == 1, out[-2000:]
        changed = count // 1000
        said = (
            rf"\b{changed} messages? in {changed} files? would change|\"files_changed\": {changed},"
        )
        assert re.search(said, out), out[-2000:]
        peaks.append(peak)
    per_file_kb = (peaks[1] - peaks[0]) * 1024 / (LARGE - SMALL)
    assert per_file_kb < PER_FILE_KB, (peaks, per_file_kb)
