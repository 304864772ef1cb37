"""Repair's memory on a record of many tokens and few findings (#22 item 9, its caveat).

The findings cap bounds a message of many findings (test_repair_record_memory.py); a message
of one leak followed by millions of prose mentions (`<think>step</think>answer `, repeated)
stays under it and is normalized whole. `normalize` fed the whole text to the pipeline at
once, so the scanner's raw spans and the pipeline's pieces (one per token, each with its
text) all lived together before they were merged into a few spans: ~14x the text (a 64 MB
record took 1.46 GB). It now feeds the pipeline 64 KB at a time and merges the pieces into
spans as they come.

What was left was repair's own copies of the record (read, parsed, rewritten, proven: ~13x
the record at 8 MB); they are now made one after another (test_repair_copy_memory.py), and
this record takes ~8.5x (1 MB; 2 MB ~9x, an 8 MB one ~6.6x, where the interpreter's and the
read blocks' fixed share weighs less). A cost per token is the same multiple of the record at
any size (a copy of every token's text, added on purpose: 14.8x at 1 MB, 14.9x at 2 MB), so
a 1 MB record tells it from the fixed code as well as 2 MB did, in half the time. Memory is the peak RSS of a fresh process
(tests/engine/memory_probe.py), never time; the interpreter's own share is taken out by a
run on a small record of the same shape.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.engine.memory_probe import thinkfix_peak
from tests.engine.test_repair_record_memory import _session

pytestmark = pytest.mark.memory

UNIT = "<think>step</think>answer "
RECORD_MB = 1
#: The issue asks for 10x. The whole took ~28x (57 MB for a 2 MB record) before the
#: normalizer streamed, ~14.6x before repair's copies were made one at a time, ~8.5x now.
PER_RECORD_MB = 12 * RECORD_MB


def _record(folder: Path, mb: float) -> Path:
    folder.mkdir()
    return _session(folder, mb, UNIT)


def _dry_run(session: Path, tmp_path: Path) -> tuple[float, str]:
    env = {**os.environ, "THINKFIX_STATE_DIR": str(tmp_path / "state")}
    args = ("repair", "--isolated", "--no-progress", "--dry-run")
    code, peak, output = thinkfix_peak(*args, str(session), env=env)
    assert code == 1, output  # leaks remain: nothing was written
    return peak, output


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
def test_repair_of_a_record_of_many_tokens_and_one_leak_is_bounded_by_the_record(
    tmp_path: Path,
) -> None:
    base, small = _dry_run(_record(tmp_path / "small", 0.01), tmp_path)
    peak, big = _dry_run(_record(tmp_path / "big", RECORD_MB), tmp_path)
    for output in (small, big):  # both leaks found, none capped
        assert "would repair 2 messages in 1 file (1 file read)." in output, output
        assert "too many findings" not in output
    assert peak - base < PER_RECORD_MB, (peak, base)
