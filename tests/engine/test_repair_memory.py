"""Repair streams: a session much larger than the memory repair may use is repaired anyway.

Each mode (and the undo of the in-place run) runs in a fresh process on a generated Claude Code session of
`THINKFIX_BIG_MB` megabytes (default 130) with a few leaking records, and the
process's peak resident memory must stay under `LIMIT_MB`, well below the file's
size: holding the file (let alone the copies the old repair made: ~4-5x) cannot
pass. Set THINKFIX_BIG_MB=1000 for the 1 GB run docs/performance.md quotes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import orjson
import pytest

from tests.engine.memory_probe import thinkfix_peak

pytestmark = pytest.mark.memory

BIG_MB = float(os.environ.get("THINKFIX_BIG_MB", "130"))
LIMIT_MB = 100  # the interpreter, click, orjson and rich take ~45 MB of it
LEAKS = (3, 5_000, -4)  # which blocks of the session get a leaking record


def _line(n: int, kind: str, message: dict[str, object]) -> bytes:
    return orjson.dumps(
        {
            "parentUuid": f"u-{n - 1}",
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/shop-api",
            "sessionId": "big",
            "version": "2.1.32",
            "type": kind,
            "message": message,
            "uuid": f"u-{n}",
            "timestamp": "2026-02-11T09:14:02.118Z",
        }
    )


def _block(n: int, leak: bool) -> bytes:
    """One turn: a prompt, an answer (leaking, if asked), a tool call and its big result."""
    text = (
        "<think>The user wants the cart total; check the rounding first.</think>"
        "The total is rounded half-up."
        if leak
        else "The total is rounded half-up."
    )
    body = "def total(items):\n    return round(sum(i.price for i in items), 2)\n" * 120
    return (
        b"\n".join(
            [
                _line(
                    n, "user", {"role": "user", "content": "Why is the cart total off by a cent?"}
                ),
                _line(
                    n + 1,
                    "assistant",
                    {
                        "model": "claude-opus-4-5-20251101",
                        "id": f"msg_{n}",
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": text}],
                    },
                ),
                _line(
                    n + 2,
                    "assistant",
                    {
                        "model": "claude-opus-4-5-20251101",
                        "id": f"msg_{n}b",
                        "type": "message",
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"toolu_{n}",
                                "name": "Read",
                                "input": {"file_path": "/src/cart.py"},
                            }
                        ],
                    },
                ),
                _line(
                    n + 3,
                    "user",
                    {
                        "role": "user",
                        "content": [
                            {"tool_use_id": f"toolu_{n}", "type": "tool_result", "content": body}
                        ],
                    },
                ),
            ]
        )
        + b"\n"
    )


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "4f1c0d2e-big.jsonl"
    clean = _block(0, leak=False)
    blocks = int(BIG_MB * 1e6 / len(clean))
    leaking = {b % blocks for b in LEAKS}
    with open(path, "wb") as fp:
        fp.writelines(_block(0, leak=True) if b in leaking else clean for b in range(blocks))
    os.utime(path, (1e9, 1e9))  # not a live session
    return path


def _repair(*args: str, env: dict[str, str], command: str = "repair") -> tuple[int, float]:
    """Exit code and peak RSS (MB) of `thinkfix repair ARGS` in a fresh process."""
    more = ("--isolated", "--jobs", "1") if command == "repair" else ()
    code, peak, _ = thinkfix_peak(command, *more, *args, env=env)
    return code, peak


def test_repair_streams_a_session_larger_than_its_memory(big: Path, tmp_path: Path) -> None:
    env = {**os.environ, "THINKFIX_STATE_DIR": str(tmp_path / "state")}
    size_mb = big.stat().st_size / 1e6
    assert size_mb > 1.2 * LIMIT_MB  # holding the file alone would break the limit

    code, peak = _repair("--dry-run", "--report", str(tmp_path / "dry.json"), str(big), env=env)
    assert code == 1 and peak < LIMIT_MB, (code, peak)  # a dry run leaves every leak
    report = json.loads((tmp_path / "dry.json").read_bytes())
    assert report["totals"]["messages"] == len(LEAKS), report["totals"]

    out = tmp_path / "out"
    code, peak = _repair("--out", str(out), str(big), env=env)
    assert code == 0 and peak < LIMIT_MB, (code, peak)
    repaired = out / big.name
    assert 0 < big.stat().st_size - repaired.stat().st_size < 1000  # three think blocks gone

    work = tmp_path / "work" / big.name
    work.parent.mkdir()
    subprocess.run(["cp", str(big), str(work)], check=True)
    os.utime(work, (1e9, 1e9))
    code, peak = _repair("--in-place", "--run-dir", str(tmp_path / "run"), str(work), env=env)
    assert code == 0 and peak < LIMIT_MB, (code, peak)
    assert _same(work, repaired)
    backups = list((tmp_path / "run").rglob(big.name))
    assert len(backups) == 1 and _same(backups[0], big)

    code, peak = _repair(str(tmp_path / "run" / "manifest.json"), env=env, command="undo")
    assert code == 0 and peak < LIMIT_MB, (code, peak)
    assert _same(work, big)


def _same(a: Path, b: Path) -> bool:
    return subprocess.run(["cmp", "-s", str(a), str(b)], check=False).returncode == 0
