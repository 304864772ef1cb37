"""Where `--jobs` pays (#26 item 5): the CLI scan at --jobs 1, N and the default, by input size.

For each size, the first files of the dense corpus (bench/dense.py) up to that many MB are
hard-linked into a folder of their own, and `thinkfix scan -q --output-format json` runs on
it with `--jobs 1`, each `--jobs N` asked for, and no `--jobs` (the default: every core from
`engine.scan.runner.POOL_MIN_BYTES` of input). Then one big Claude Code session (split into
byte ranges by the pool) the same way, beside the parallel floor (a forked pool parsing the
same files, or the big file's line-aligned ranges). Every report is checked byte-identical
with `--jobs 1`'s. Wall seconds, best of `--repeat` interleaved rounds.

    python bench/jobs.py                                  # sizes 2..64 MB, N up to the cores
    python bench/jobs.py --sizes 4,16,64 --jobs 1,2,4,8,16 --big-mb 200
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
from itertools import pairwise
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dense
from run import TMP, best, big_session, cli, floor

from thinkfix.engine.scan.runner import POOL_MIN_BYTES


def subset(corpus: Path, size_mb: float, into: Path) -> list[Path]:
    """The corpus's first files (sorted by path) up to `size_mb`, hard-linked into `into`."""
    files = sorted(p for p in corpus.rglob("*.jsonl"))
    into.mkdir(parents=True)
    taken: list[Path] = []
    total = 0
    for f in files:
        if total >= size_mb * 1e6:
            break
        target = into / f"{f.parent.name}-{f.name}"
        try:
            os.link(f, target)
        except OSError:
            shutil.copyfile(f, target)
        taken.append(target)
        total += f.stat().st_size
    return taken


def _range_floor(args: tuple[str, int, int]) -> int:
    path, lo, hi = args
    with open(path, "rb") as fp:
        fp.seek(lo)
        data = fp.read(hi - lo)
    loads = orjson.loads
    return sum(1 for line in data.splitlines() if loads(line) is not None)


def big_floor(path: Path, jobs: int) -> int:
    """The floor of one file split into `jobs` line-aligned byte ranges."""
    data = path.read_bytes()
    cuts = [0]
    for i in range(1, jobs):
        at = data.find(b"\n", len(data) * i // jobs)
        cuts.append(len(data) if at < 0 else at + 1)
    cuts.append(len(data))
    parts = [(str(path), lo, hi) for lo, hi in pairwise(cuts) if hi > lo]
    if jobs == 1:
        return _range_floor(parts[0])
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return sum(pool.map(_range_floor, parts, chunksize=1))


def measure(
    label: str,
    root: Path,
    files: list[Path],
    ns: list[int],
    args: argparse.Namespace,
    big: Path | None = None,
) -> None:
    size = sum(f.stat().st_size for f in files) / 1e6
    runs = {
        f"--jobs {n}": (
            lambda n=n: cli("scan", "-q", "--jobs", str(n), "--output-format", "json", str(root))
        )
        for n in ns
    }
    runs["default"] = lambda: cli("scan", "-q", "--output-format", "json", str(root))
    floors = {
        n: (lambda n=n: big_floor(big, n)) if big is not None else (lambda n=n: floor(files, n))
        for n in ns
    }
    t = best(args.repeat, {**runs, **{f"floor {n}": fn for n, fn in floors.items()}})
    one = runs["--jobs 1"]().stdout
    same = all(fn().stdout == one for name, fn in runs.items() if name != "--jobs 1")
    base, fbase = t["--jobs 1"], t[f"floor {ns[0]}"]
    cells = "  ".join(
        f"N={n} {base / t[f'--jobs {n}']:.2f}x (floor {fbase / t[f'floor {n}']:.2f}x)" for n in ns
    )
    print(
        f"{label:>10} {size:7.1f} MB  --jobs 1 {base:6.3f} s  default {t['default']:6.3f} s "
        f"({base / t['default']:.2f}x)  {cells}  identical={same}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2,4,8,16,32,64", help="MB of the dense corpus")
    cores = os.cpu_count() or 1
    parser.add_argument(
        "--jobs",
        default=",".join(str(n) for n in (1, 2, 4, 8, 16) if n <= cores),
        help="the N to time (1 first)",
    )
    parser.add_argument("--big-mb", type=float, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dense-corpus", type=Path, default=TMP / "thinkfix-bench-dense")
    parser.add_argument("--corpus-mb", type=float, default=100)
    args = parser.parse_args(argv)
    ns = [int(n) for n in args.jobs.split(",")]
    corpus: Path = args.dense_corpus
    stamp = corpus / f"SIZE-{args.corpus_mb}-{args.seed}"
    if not stamp.exists():
        dense.generate(corpus, args.corpus_mb, args.seed)
        stamp.write_text("")
    print(
        f"{cores} CPUs; pool from {POOL_MIN_BYTES / 1e6:.0f} MB by default; "
        f"best of {args.repeat}; speed-up against --jobs 1 (the floor's against its N=1)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (float(s) for s in args.sizes.split(",")):
            root = Path(tmp) / f"s{mb:g}"
            measure(f"{mb:g} MB", root, subset(corpus, mb, root), ns, args)
        if args.big_mb:
            big = Path(tmp) / "big" / "big.jsonl"
            big.parent.mkdir()
            big_session(big, args.big_mb, args.seed)
            measure("one file", big, [big], ns, args, big=big)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
