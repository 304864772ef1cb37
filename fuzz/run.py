"""Run the fuzz targets with atheris, seeded from the fixtures and the crash sites of issue 11.

    python fuzz/run.py --seed 1 --runs 2000 --seconds 30 all   # .ci/run: the same inputs every run
    python fuzz/run.py --seconds 40 all    # every target in one process, fresh random inputs
    python fuzz/run.py --seconds 600 cli   # one target, longer
    python fuzz/run.py --list

Each target runs in its own process (atheris ends its process when done) and prints
its executions per second; a crash leaves the input in fuzz/crashes/<target>/.
Without atheris (not every Python has a wheel) it says so and exits 0; the seeds still
run under pytest (tests/fuzz/).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def seeds(target: str) -> list[Path]:
    """The seed corpus: every fixture session, plus the crash sites (fuzz/seeds/)."""
    from fuzz.corpus import seed_files

    return seed_files(target)


def _child(target: str, seconds: int, runs: int, seed: int) -> None:
    import atheris

    with atheris.instrument_imports():
        from fuzz.targets import TARGETS
    one = TARGETS[target]

    corpus = HERE / "work" / target
    corpus.mkdir(parents=True, exist_ok=True)
    for path in seeds(target):  # copy the seeds in, so libFuzzer starts from them
        (corpus / f"seed-{path.parent.name}-{path.name}").write_bytes(path.read_bytes())
    crashes = HERE / "crashes" / target
    crashes.mkdir(parents=True, exist_ok=True)
    args = [
        sys.argv[0],
        str(corpus),
        f"-max_total_time={seconds}",
        "-rss_limit_mb=4096",
        f"-artifact_prefix={crashes}/",
        "-max_len=262144",
        "-print_final_stats=1",
    ]
    if runs:
        args.append(f"-runs={runs}")
    if seed:
        args.append(f"-seed={seed}")
    atheris.Setup(args, one)
    atheris.Fuzz()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="*")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="libFuzzer's random seed (0: a fresh one); with --runs, CI fuzzes the same "
        "inputs every time, so a red build is reproducible and a green one is not luck",
    )
    parser.add_argument(
        "--total",
        type=int,
        default=0,
        help="seconds for all targets together (overrides --seconds)",
    )
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        _child(ns.child, ns.seconds, ns.runs, ns.seed)
        return 0
    from fuzz.targets import TARGETS

    if ns.list:
        print("\n".join(TARGETS))
        return 0
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("fuzz: atheris is not installed for this Python; skipped (pip install atheris)")
        return 0
    failed = []
    chosen = ns.targets or [t for t in TARGETS if t != "all"]
    if ns.total:  # a fixed budget however many formats there are (each also pays ~1 s start)
        ns.seconds = max(1, ns.total // len(chosen))
    for target in chosen:
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                target,
                "--seconds",
                str(ns.seconds),
                "--runs",
                str(ns.runs),
                "--seed",
                str(ns.seed),
            ],
            check=False,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(HERE.parent)},
        )
        done = re.search(r"Done (\d+) runs in (\d+) second", child.stderr)
        runs = f"{done.group(1)} executions in {done.group(2)} s" if done else "no summary"
        print(f"fuzz {target}: {runs}" + ("" if child.returncode == 0 else " -- CRASH"), flush=True)
        if child.returncode:
            print(child.stderr[-4000:], file=sys.stderr)
            failed.append(target)
    if failed:
        print(f"fuzz: crashes in {', '.join(failed)} (inputs in fuzz/crashes/)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
