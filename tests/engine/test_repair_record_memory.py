"""Repair's memory per record is bounded as scan's is (#22 item 9): a message of thousands of
`</think><think>` blocks once took ~100x its size (a 5 MB line: 531 MB and 25 s), because
repair normalized it whole, keeping a span, a piece, a finding and a token per block. Now a
message with more findings than the `max-findings` setting (1,000 by default, as for scan)
is not repaired: the normalizer streams it and stops at the cap, the record is copied through
untouched and reported (`too_many_findings`), and the file's other records are repaired.

Memory is measured in a fresh process (as test_repair_memory.py does), never time.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.engine.repair_helpers import run
from tests.engine.test_repair_memory import _line, _repair
from thinkfix.engine.repair.model import WriteMode

pytestmark = pytest.mark.memory

LINE_MB = 8
# The interpreter, click, orjson and rich take ~45 MB; the record is read, parsed and held
# a few times over. The old repair took ~100x the line (~800 MB here).
LIMIT_MB = 60 + 10 * LINE_MB


def _answer(n: int, text: str) -> bytes:
    message = {
        "model": "claude-opus-4-5-20251101",
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
    }
    return _line(n, "assistant", message)


def _session(folder: Path, mb: float, unit: str = "</think><think>") -> Path:
    """A prompt, one ordinary leaking answer, and one answer of `mb` MB of `unit`s."""
    flood = unit * int(mb * 1e6 / len(unit))
    path = folder / "5e2d1c0b-flood.jsonl"
    lines = [
        _line(0, "user", {"role": "user", "content": "Why is the cart total off by a cent?"}),
        _answer(1, "<think>Check the rounding.</think>The total is rounded half-up."),
        _answer(2, flood),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    os.utime(path, (1e9, 1e9))  # not a live session
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
def test_repair_memory_on_a_flood_of_blocks_stays_within_ten_times_the_record(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "THINKFIX_STATE_DIR": str(tmp_path / "state")}
    session = _session(tmp_path, LINE_MB)
    report = tmp_path / "dry.json"
    code, peak = _repair("--dry-run", "--report", str(report), str(session), env=env)
    assert peak < LIMIT_MB, peak
    doc = json.loads(report.read_bytes())
    assert doc["totals"]["messages"] == 1, doc["totals"]  # the ordinary leak
    errors = [(e["line"], e["kind"]) for e in doc["errors"]]
    assert errors == [(3, "too_many_findings")], doc["errors"]
    assert code == 2  # an input error, as scan's

    out = tmp_path / "out"
    code, peak = _repair("--out", str(out), str(session), env=env)
    assert peak < LIMIT_MB, peak
    before = session.read_bytes().split(b"\n")
    after = (out / session.name).read_bytes().split(b"\n")
    assert after[2] == before[2]  # the flood is copied through untouched
    assert after[1] != before[1] and b"<think>" not in after[1]


def test_repair_under_the_cap_repairs_every_block(tmp_path: Path) -> None:
    """The cap is the `max-findings` setting: raised past a message's count, it is repaired."""
    session = _session(tmp_path, 0.003, "<think>r</think>a")  # 187 blocks
    out = tmp_path / "out"
    result = run([session], WriteMode.OUT, tmp_path, out_dir=str(out))
    assert not [e for f in result.files for e in f.errors]
    repaired = (out / session.name).read_bytes().split(b"\n")[2]
    assert b"think>" not in repaired
