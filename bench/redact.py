"""What secret masking costs scan, on bench/run.py's leaky corpus (issue #22 item 11).

Scan masks each finding's snippet (200 characters and a 256-character margin) before it is
cut, so masking runs on findings' text only, never on the whole corpus. Times, interleaved,
best of `--repeat`, wall and CPU:

  (a) `thinkfix scan -q --jobs 1 --output-format json CORPUS` (masking on, the default) with
      this tree's code and, with `--before TREE`, another checkout's (e.g. main before the
      change), each in a fresh process (start-up and the rules' loading included);
  (b) the same with `--redact none`, so (a) - (b) is what masking costs;
  (c) mask_secrets alone over every finding's unmasked snippet, in this process.

    python bench/redact.py [--before /path/to/other/checkout] [--size-mb 40] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench_run

HERE = Path(__file__).resolve().parent
TREE = HERE.parent


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli(tree: Path, corpus: Path, *extra: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one scan in a fresh process running `tree`'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = ["scan", "-q", "--jobs", "1", "--no-respect-gitignore", "--output-format", "json"]
    args += [*extra, str(corpus)]  # the default corpus sits in a gitignored folder
    wall, cpu = time.perf_counter(), _cpu()
    subprocess.run(
        [sys.executable, "-m", "thinkfix.cli", *args],
        env=env,
        cwd=tree,  # `-m` puts the working folder first on sys.path, before PYTHONPATH
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - wall, _cpu() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--size-mb", type=float, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus-run")
    args = parser.parse_args(argv)
    corpus: Path = args.corpus
    stamp = corpus / f"SIZE-{args.size_mb}-{args.seed}"
    if not stamp.exists():
        bench_run.generate(corpus, args.size_mb, args.seed)
        stamp.write_text("")
    mb = sum(f.stat().st_size for f in corpus.rglob("*.jsonl")) / 1e6

    runs: dict[str, tuple[Path, tuple[str, ...]]] = {"after: masking on": (TREE, ())}
    runs["after: --redact none"] = (TREE, ("--redact", "none"))
    if args.before:
        runs["before: masking on"] = (args.before, ())
        runs["before: --redact none"] = (args.before, ("--redact", "none"))
    best = {name: (float("inf"), float("inf")) for name in runs}
    for _ in range(args.repeat):
        for name, (tree, extra) in runs.items():
            wall, cpu = cli(tree, corpus, *extra)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))

    from thinkfix.engine.scan.options import ScanOptions
    from thinkfix.engine.scan.runner import scan
    from thinkfix.engine.secrets.rules import SNIPPET_MARGIN, Redaction, mask_secrets

    opts = ScanOptions(redaction=Redaction.NONE, snippet_chars=200 + SNIPPET_MARGIN)
    texts = [f.snippet for f in scan([str(corpus)], opts, jobs=1).findings]
    t0 = time.perf_counter()
    mask_secrets(texts[0] if texts else "")
    first = time.perf_counter() - t0
    alone = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        masked = sum(mask_secrets(t) != t for t in texts)
        alone = min(alone, time.perf_counter() - t0)

    print(
        f"corpus {corpus}: {mb:.1f} MB, {(corpus / 'LEAKS').read_text().strip()} leaking "
        f"messages, {len(texts)} findings; best of {args.repeat}, wall and CPU"
    )
    for name, (wall, cpu) in best.items():
        print(f"  scan CLI --jobs 1, {name:<22} {wall:7.3f} s wall {cpu:7.3f} s CPU")
    print(
        f"  mask_secrets alone: first call {first * 1000:.1f} ms (loads the rules, compiles the "
        f"ones it needs), then all {len(texts)} snippets {alone * 1000:.1f} ms ({masked} changed)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
