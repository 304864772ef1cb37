"""What any scan built on #26's plan still pays in CPython: the bound behind its targets.

The issue's plan is one native pass over a file's bytes, Python only for the records it
finds, and clean messages counted from the matches. This measures, on the same files and
in one run, the three costs that plan cannot remove, each at its best:

- the native pass: one hyperscan scan of every file for the assistant lines and every
  delimiter of the grammar, each reported to Python (an empty callback: the least a count
  by model and day can cost once the pass finds each message);
- the suspects: the scan's own `_FileScan._record` (parse, normalize, snippet) on every
  record the delimiter test sends it, timed inside a real scan.

Their sum, against the orjson floor measured beside them, is the best ratio such a scan can
reach here; the issue asks for 2.0x in-process. Needs hyperscan (`pip install '.[fast]'`).

    python bench/bound.py                         # the dense corpus (bench/dense.py)
    python bench/bound.py /path/to/sessions       # any folder of JSONL sessions
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

import hyperscan
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dense

from thinkfix.engine.scan import one_file
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import delimiter_sources
from thinkfix.engine.scan.runner import scan
from thinkfix.normalizer.policy import DEFAULT

#: The assistant markers of the dense corpus's three formats.
MARKERS = (rb'"type":"assistant"', rb'"role":"assistant"')


def _best(repeat: int, run: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def corpus(argv: list[str]) -> Path:
    """The folder named, else the dense corpus (written on first use)."""
    if argv:
        return Path(argv[0])
    root = Path(tempfile.gettempdir()) / "thinkfix-bench-dense"
    if not root.exists():
        dense.generate(root, 100, 7)
    return root


def floor(files: list[Path]) -> None:
    """The orjson floor: read every file and parse every line."""
    for f in files:
        with open(f, "rb") as fp:
            for line in fp:
                orjson.loads(line)


def print_rows(size_mb: float, rows: list[tuple[str, float]]) -> None:
    """Each row's seconds and throughput over `size_mb`, labels aligned."""
    width = max(len(label) for label, _ in rows)
    for label, seconds in rows:
        print(f"  {label:{width}s} {seconds:7.3f} s  {size_mb / seconds:7.1f} MB/s")


def suspect_seconds(root: Path) -> tuple[float, int]:
    """The time a real scan of `root` spends in `_FileScan._record` (parse, normalize, snippet
    of each suspected leak), and how many it made: the part no pass over the bytes removes."""
    spent = [0.0, 0]
    record = one_file._FileScan._record

    def timed(self: object, *args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        try:
            return record(self, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            spent[0] += time.perf_counter() - start
            spent[1] += 1

    scan([str(root)], ScanOptions(), jobs=1)  # warm: compiled patterns, caches
    with patch.object(one_file._FileScan, "_record", timed):
        scan([str(root)], ScanOptions(), jobs=1)
    return spent[0], int(spent[1])


def main(argv: list[str]) -> int:
    root = corpus(argv)
    files = sorted(root.rglob("*.jsonl"))
    data = [f.read_bytes() for f in files]
    size = sum(map(len, data)) / 1e6

    sources = [b"(?:" + b"|".join(MARKERS) + rb")[^\n]*\n", *delimiter_sources(DEFAULT)]
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=sources, ids=list(range(len(sources))), elements=len(sources))
    reported = [0]

    def native_pass() -> None:
        """One scan of every file; each assistant line and each delimiter hit is reported to
        Python, which does nothing with it but count."""

        def on(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
            reported[0] += 1

        reported[0] = 0
        for buf in data:
            db.scan(buf, match_event_handler=on)

    suspects, count = suspect_seconds(root)
    best_floor = _best(3, lambda: floor(files))
    best_pass = _best(3, native_pass)
    whole = _best(3, lambda: scan([str(root)], ScanOptions(), jobs=1))
    bound = best_pass + suspects

    print(f"{root}: {size:.1f} MB, {len(files)} files")
    print_rows(
        size,
        [
            ("orjson floor (read and parse every line)", best_floor),
            (f"native pass, one empty Python call per report ({reported[0]:,})", best_pass),
            (f"suspects: _FileScan._record x {count:,}, inside a scan", suspects),
            ("sum: the plan's bound in CPython", bound),
            ("thinkfix scan in-process (--jobs 1)", whole),
        ],
    )
    print(
        f"best ratio any such scan reaches: {best_floor / bound:.2f}x the floor "
        f"(the issue's target in-process: 2.0x; the scan today: {best_floor / whole:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
