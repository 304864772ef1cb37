"""Incremental scans: what verifying the part already scanned costs, and the state's size.

    python bench/incremental.py hash [--mb 60] [--repeat 5]
        hash one Claude Code session with each stdlib hash (xxhash too when installed),
        beside parsing it (a first `scan --incremental`) and an incremental run after an
        append (the committed part hashed again, the new records parsed);
    python bench/incremental.py state [--files 100000] [--leaky 100]
        the state file an incremental scan writes for that many one-record sessions.

Generated files go to a temporary folder, removed afterwards.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from typing import Any

import orjson

from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.telemetry.incremental import scan_incremental

LEAK = "<think>the user wants a list, so I will reason first</think>Here is the list."
CLEAN = "Here is the list."


def line(n: int, *, leak: bool) -> bytes:
    """One Claude Code assistant record."""
    message = {
        "id": f"msg_{n:08d}",
        "type": "message",
        "role": "assistant",
        "model": "qwen3-32b",
        "content": [{"type": "text", "text": LEAK if leak else CLEAN}],
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    record = {
        "parentUuid": None,
        "sessionId": "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48",
        "cwd": "/home/u/proj",
        "version": "1.0.98",
        "message": message,
        "type": "assistant",
        "uuid": f"5a0c{n:08x}-7d3e-4a21-9b5f-3c8e2d1f6a47",
        "timestamp": f"2026-03-02T10:21:{n % 60:02d}.000Z",
    }
    return orjson.dumps(record) + b"\n"


class _Crc32:
    def __init__(self) -> None:
        self.value = 0

    def update(self, data: bytes) -> None:
        self.value = zlib.crc32(data, self.value)


def _hashes() -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {
        "sha1": lambda: hashlib.sha1(usedforsecurity=False),
        "sha256": hashlib.sha256,
        "blake2b": hashlib.blake2b,
        "md5": lambda: hashlib.md5(usedforsecurity=False),
        "zlib.crc32": _Crc32,
    }
    try:
        import xxhash  # type: ignore[import-not-found]

        out["xxh3_128"] = xxhash.xxh3_128
    except ImportError:
        print("(xxhash not installed: not measured)")
    return out


def _best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_hash(mb: int, repeat: int) -> None:
    tmp = tempfile.mkdtemp()
    try:
        path = os.path.join(tmp, "session.jsonl")
        n = 0
        with open(path, "wb") as fp:
            while fp.tell() < mb * 1_000_000:
                fp.write(line(n, leak=n % 50 == 0))
                n += 1
        size = os.path.getsize(path)

        def hash_file(make: Callable[[], Any]) -> None:
            digest = make()
            with open(path, "rb") as fp:
                while block := fp.read(1 << 20):
                    digest.update(block)

        print(f"one Claude Code session: {size / 1e6:.1f} MB, {n} records (page cache warm)")
        for name, make in _hashes().items():
            best = _best(lambda make=make: hash_file(make), repeat)  # type: ignore[misc]
            print(f"  {name:11s} {best * 1000:7.1f} ms  {size / best / 1e6:6.0f} MB/s")
        state = os.path.join(tmp, "state.json")
        start = time.perf_counter()
        scan_incremental([path], ScanOptions(), state)
        first = time.perf_counter() - start
        print(f"  parse (first scan --incremental): {first:.2f} s, {size / first / 1e6:.0f} MB/s")
        times = []
        for k in range(repeat):
            with open(path, "ab") as fp:
                fp.write(b"".join(line(n + 10 * k + j, leak=True) for j in range(10)))
            start = time.perf_counter()
            _, stats = scan_incremental([path], ScanOptions(), state)
            times.append(time.perf_counter() - start)
        print(
            f"  after appending 10 records: best {min(times) * 1000:.0f} ms, median "
            f"{statistics.median(times) * 1000:.0f} ms ({stats.bytes_read:,} bytes read)"
        )
    finally:
        shutil.rmtree(tmp)


def bench_state(files: int, leaky: int) -> None:
    tmp = tempfile.mkdtemp()
    try:
        root = os.path.join(tmp, "projects")
        for i in range(files):
            folder = os.path.join(root, f"-home-u-proj{i // 1000}")
            if i % 1000 == 0:
                os.makedirs(folder)
            with open(os.path.join(folder, f"{i:08x}-7d3e-4a21-9b5f.jsonl"), "wb") as fp:
                fp.write(line(i, leak=i < leaky))
        state = os.path.join(tmp, "state.json")
        start = time.perf_counter()
        report, _ = scan_incremental([root], ScanOptions(), state, jobs=1)
        took = time.perf_counter() - start
        size = os.path.getsize(state)
        print(
            f"{files} one-record sessions ({report.summary.leaking_messages} leaking): state "
            f"{size:,} bytes ({size / files:.0f} per file), first run {took:.1f} s"
        )
        start = time.perf_counter()
        scan_incremental([root], ScanOptions(), state, jobs=1)
        print(f"second run (load, check, save): {time.perf_counter() - start:.1f} s")
    finally:
        shutil.rmtree(tmp)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    h = sub.add_parser("hash")
    h.add_argument("--mb", type=int, default=60)
    h.add_argument("--repeat", type=int, default=5)
    s = sub.add_parser("state")
    s.add_argument("--files", type=int, default=100_000)
    s.add_argument("--leaky", type=int, default=100)
    args = parser.parse_args(argv)
    if args.what == "hash":
        bench_hash(args.mb, args.repeat)
    else:
        bench_state(args.files, args.leaky)


if __name__ == "__main__":
    main(sys.argv[1:])
