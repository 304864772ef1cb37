"""Repair holds a repaired record a bounded number of times (#22 item 9): within 10x its size.

A record that is repaired is read, parsed, normalized, rewritten, proven and (with `--out`)
written. Each step once made copies of its own that all lived at the peak: the spliced text
and its pieces beside the original's text, both records parsed at once to prove the splice,
the new record joined to its line end, then read back and parsed again beside the plan's
own copies. An 8 MB record of prose with one leak at its start took 13x its size over a small
record's run, in the dry run and with `--out` alike.

Memory is the peak resident size of a fresh process (tests/engine/memory_probe.py), never
time, less a run on a small record of the same shape (the interpreter's share). Not
tracemalloc: orjson reserves ~12x what it parses and ~15x what it serializes from the
allocator and touches little of it, so tracemalloc reports 13-15x for one `loads` that
costs ~1x in resident memory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.engine.memory_probe import thinkfix_peak
from tests.engine.test_repair_memory import _line

pytestmark = pytest.mark.memory

RECORD_MB = 8
LEAK = "<think>Weigh the cart's rounding before the tax.</think>"
PROSE = "The total is rounded half-up at the cent, then the tax is added. "


def _session(folder: Path, mb: float) -> Path:
    """A prompt and one answer of `mb` MB: a leak, then prose (the answer is repaired)."""
    folder.mkdir()
    text = LEAK + PROSE * int(mb * 1e6 / len(PROSE))
    answer = {
        "model": "claude-opus-4-5-20251101",
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
    }
    path = folder / "7c41d2e0-long-answer.jsonl"
    prompt = _line(0, "user", {"role": "user", "content": "Why is the cart total off?"})
    path.write_bytes(prompt + b"\n" + _line(1, "assistant", answer) + b"\n")
    os.utime(path, (1e9, 1e9))  # not a live session
    return path


def _peak(mode: tuple[str, ...], session: Path, tmp_path: Path) -> float:
    env = {**os.environ, "THINKFIX_STATE_DIR": str(tmp_path / "state")}
    args = ("repair", "--isolated", "--no-progress", "--jobs", "1", *mode, str(session))
    code, peak, output = thinkfix_peak(*args, env=env)
    assert "would repair 1 message" in output or "repaired 1 message" in output, output
    assert code == (1 if "--dry-run" in mode else 0), output
    return peak


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
@pytest.mark.parametrize("mode", ["--dry-run", "--out"])
def test_a_repaired_record_is_held_within_ten_times_its_size(mode: str, tmp_path: Path) -> None:
    small, big = _session(tmp_path / "small", 0.01), _session(tmp_path / "big", RECORD_MB)
    record_mb = big.stat().st_size / 2**20  # ru_maxrss counts KiB: compare in MiB
    flags = ("--dry-run",) if mode == "--dry-run" else ("--out", str(tmp_path / "out"))
    base = _peak(flags, small, tmp_path)
    peak = _peak(flags, big, tmp_path)
    assert peak - base < 10 * record_mb, f"{(peak - base) / record_mb:.1f}x the record"
    if mode == "--out":
        repaired = (tmp_path / "out" / big.name).read_bytes()
        assert b"<think>" not in repaired and PROSE.encode() in repaired
