"""Wall-clock linearity of the normalizer on hostile floods: the timing half of the checks
whose operation-count half runs in the test suite (tests/normalizer/test_properties.py).

    python bench/linearity.py

Times each flood at one size and at a multiple of it (best of a few runs, since a loaded
machine slows runs and never speeds one up) and exits 1 when a ratio looks quadratic. It
lives here, not in pytest, because a timing bound fails on a busy CI host (#27 item 12);
the suite counts executed Python lines instead, which no load can change.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from tests.normalizer.conftest import stream
from tests.normalizer.test_properties import HOSTILE, STREAM_FLOODS, TOKEN_FLOODS
from thinkfix import normalize


def best_seconds(run: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def check(name: str, make: Callable[[int], Callable[[], object]], size: int, factor: int) -> bool:
    """One row: the time at `size` and at `factor` times it; quadratic would be factor**2."""
    small, large = best_seconds(make(size)), best_seconds(make(size * factor))
    ok = large < 2 * factor * small + 0.05
    ratio = large / small if small else float("inf")
    print(
        f"{'ok ' if ok else 'BAD'} {name:<40} x{factor}: {small:8.4f} s -> {large:8.4f} s ({ratio:.1f}x)"
    )
    return ok


def chunks_of(text: str, every: int) -> list[str]:
    return [text[i : i + every] for i in range(0, len(text), every)]


def main() -> int:
    results = []
    for unit in HOSTILE:
        make = lambda n, u=unit: functools.partial(normalize, u * (n // len(u)))
        results.append(check(f"normalize {unit!r}", make, 1_000_000, 2))
    for unit in TOKEN_FLOODS:
        make = lambda n, u=unit: functools.partial(normalize, u * (n // len(u)))
        results.append(check(f"normalize {unit!r}", make, 12_000, 4))
    for holdback in (None, 0):
        for unit in STREAM_FLOODS:
            make = lambda n, u=unit, h=holdback: functools.partial(
                stream, chunks_of(u * (n // len(u)), 5), holdback=h
            )
            results.append(check(f"stream {unit[:12]!r} holdback={holdback}", make, 6_000, 4))
    for unit in ("<", "<think"):
        seconds = best_seconds(functools.partial(normalize, unit * (10_000_000 // len(unit))))
        print(f"    normalize a 10 MB line of {unit!r}: {seconds:.3f} s")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
