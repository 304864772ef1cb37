"""One command for the issue #13 and #26 tables: the floor, scan (CLI and in-process), repair,
--jobs and peak memory on two generated corpora, and start-up, in one run.

The sparse corpus (thinkfix-bench-run/ in the temporary folder, generated once per
--size-mb/--seed; inside the repository a scan would skip it as gitignored) mixes Claude Code
and pi sessions (bench/scan.py's generators: big tool results full of code) with Codex
rollouts of many short records, ~1% of assistant messages leaking. The dense corpus
(thinkfix-bench-dense/ beside it; bench/dense.py, issue #26's) packs ~60,000 short assistant
messages into 100 MB, pi's message-level millisecond stamps, ~1% leaking and as many
decoys. Each corpus's JSON report is checked byte-identical with the survey and with every
line it takes parsed, with the native passes (hyperscan, where installed) and the pure ones,
and with --jobs 1 and the default; the whole-corpus rows time both paths. Every figure is the best of
`--repeat` runs, interleaved so a burst of load elsewhere hits all of them alike; ratios are
against the orjson floor (read every line and orjson.loads it) measured in the same run.

    python bench/run.py                       # quick: 40 MB corpora, 50 MB big session
    python bench/run.py --size-mb 100 --big-mb 213 --repeat 3    # the recorded run
    python bench/run.py --size-mb 200 --big-mb 1000 --corpora dense   # the issue's 1 GB
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest.mock import patch

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dense
import scan as corpus_gen

from thinkfix.engine.scan import native, survey
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.reporters.json import JsonReporter

# Outside the repository: a scan of a folder under bench/ would skip it as gitignored.
TMP = Path(tempfile.gettempdir())
FORMATS = ("claude", "pi", "codex")


class _Codex:
    """Codex rollout lines: many short records (turn_context, events, reasoning, messages)."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng, self.session = rng, session

    def header(self) -> list[bytes]:
        return [
            orjson.dumps(
                {
                    "timestamp": "2026-03-02T10:21:07.412Z",
                    "type": "session_meta",
                    "payload": dense.codex_meta(self.session, "2026-03-02T10:21:07Z"),
                }
            )
        ]

    @staticmethod
    def _line(kind: str, payload: dict[str, object]) -> bytes:
        return orjson.dumps(
            {"timestamp": "2026-03-02T10:21:19.004Z", "type": kind, "payload": payload}
        )

    def turn(self) -> tuple[list[bytes], int]:
        rng = self.rng
        prompt = corpus_gen._prose(rng, rng.randint(5, 40))
        out, leaks, _ = dense.codex_turn(
            self._line,
            rng,
            prompt,
            "qwen3:32b",
            lambda: corpus_gen._answer(rng),
            lambda: corpus_gen._code(rng, rng.randint(1, 12)),
        )
        return out, leaks


def generate(corpus: Path, size_mb: float, seed: int) -> int:
    """Claude Code and pi from bench/scan.py, then Codex to a third of the size."""
    leaks = corpus_gen.generate(corpus, size_mb * 2 / 3, seed)
    rng = random.Random(seed + 1)
    (corpus / "codex").mkdir()
    written = 0
    while written < size_mb * 1e6 / 3:
        session = f"0195a0c4-{rng.getrandbits(48):012x}"
        gen = _Codex(rng, session)
        lines, size = gen.header(), rng.randint(100_000, 800_000)
        data, leaked = corpus_gen.session_data(lines, size, gen.turn)
        leaks += leaked
        (corpus / "codex" / f"rollout-2026-03-02T10-21-07-{session}.jsonl").write_bytes(data)
        written += len(data)
    (corpus / "LEAKS").write_text(f"{leaks}\n")
    return leaks


def big_session(path: Path, size_mb: float, seed: int) -> None:
    """One Claude Code session of `size_mb`, written line by line (never held whole)."""
    rng = random.Random(seed)
    gen = corpus_gen._Claude(rng, "big")
    written = 0
    with open(path, "wb") as fp:
        while written < size_mb * 1e6:
            lines, _ = gen.turn()
            for line in lines:
                fp.write(line + b"\n")
                written += len(line) + 1


def _floor_file(path: Path) -> int:
    loads, n = orjson.loads, 0
    with open(path, "rb") as fp:
        for line in fp:
            loads(line)
            n += 1
    return n


def floor(files: list[Path], jobs: int = 1) -> int:
    """Read and orjson.loads every line; with jobs > 1, files spread over a process pool."""
    if jobs == 1:
        return sum(map(_floor_file, files))
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return sum(pool.map(_floor_file, files, chunksize=1))


def cli(*args: str, pure: bool = False) -> subprocess.CompletedProcess[bytes]:
    """A thinkfix command in a fresh process; `pure`: with THINKFIX_PURE=1 (no native passes)."""
    env = {**os.environ, "THINKFIX_PURE": "1"} if pure else None
    return subprocess.run(
        [sys.executable, "-m", "thinkfix.cli", *args], capture_output=True, check=False, env=env
    )


def peak_rss_mb(*args: str) -> float:
    """Peak resident memory of one thinkfix command, in MB (ru_maxrss of a fresh child)."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], capture_output=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "thinkfix.cli", *args],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    return int(out.split()[-1]) / 1024  # Linux: KiB


def best(repeat: int, runs: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Best wall time of each run over `repeat` interleaved rounds."""
    times = {name: float("inf") for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name] = min(times[name], time.perf_counter() - t0)
    return times


def _rows(label: str, corpus: Path, args: argparse.Namespace) -> None:
    """Every corpus row: per format, the whole corpus, --jobs and peak RSS of the whole."""
    files = sorted(corpus.rglob("*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    assistant = corpus / "ASSISTANT"
    print(
        f"{label} corpus {corpus}: {len(files)} files, {mb:.1f} MB, "
        + (f"{assistant.read_text().strip()} assistant messages, " if assistant.exists() else "")
        + f"{(corpus / 'LEAKS').read_text().strip()} leaking; "
        f"{os.cpu_count()} CPUs; best of {args.repeat}"
    )
    print(f"scan passes: {_paths()}")
    timed = ScanOptions(by_day=True)  # what the JSON report needs (counts by day)

    def row(name: str, seconds: float, size: float, base: float | None) -> None:
        ratio = f"{(size / seconds) / base:6.2f}x floor" if base else ""
        print(f"  {name:<40} {seconds:8.3f} s {size / seconds:8.1f} MB/s  {ratio}")

    print("per format, one process (in-process thinkfix.engine.scan.runner.scan, and the CLI):")
    for fmt in FORMATS:
        sub = sorted((corpus / fmt).glob("*.jsonl"))
        size = sum(f.stat().st_size for f in sub) / 1e6
        t = best(
            args.repeat,
            {
                "floor": lambda s=sub: floor(s),
                "scan": lambda s=sub: scan([str(p) for p in s], ScanOptions(), jobs=1),
                "cli": lambda f=fmt: cli(
                    "scan", "-q", "--jobs", "1", "--output-format", "json", str(corpus / f)
                ),
            },
        )
        row(f"{fmt}: orjson floor", t["floor"], size, None)
        row(f"{fmt}: scan in-process", t["scan"], size, size / t["floor"])
        row(f"{fmt}: scan CLI --jobs 1", t["cli"], size, size / t["floor"])

    root = str(corpus)
    with tempfile.TemporaryDirectory() as out:

        def repair_out(*jobs: str) -> None:
            shutil.rmtree(out, ignore_errors=True)
            cli("repair", "-q", *jobs, "--out", out, root)

        t = best(
            args.repeat,
            {
                "floor": lambda: floor(files),
                "scan in-process": lambda: scan([root], ScanOptions(), jobs=1),
                "scan in-process, by day": lambda: scan([root], timed, jobs=1),
                "scan in-process, by day, line by line": lambda: _line_by_line(root),
                "scan in-process, by day, pure": lambda: _pure(root),
                "scan CLI --jobs 1": lambda: cli(
                    "scan", "-q", "--jobs", "1", "--output-format", "json", root
                ),
                "scan CLI --jobs 1, pure": lambda: cli(
                    "scan", "-q", "--jobs", "1", "--output-format", "json", root, pure=True
                ),
                "scan CLI (default --jobs)": lambda: cli(
                    "scan", "-q", "--output-format", "json", root
                ),
                "repair CLI --dry-run --jobs 1": lambda: cli(
                    "repair", "-q", "--jobs", "1", "--dry-run", root
                ),
                "repair CLI --out --jobs 1": lambda: repair_out("--jobs", "1"),
                "repair CLI --dry-run (default --jobs)": lambda: cli(
                    "repair", "-q", "--dry-run", root
                ),
                "repair CLI --out (default --jobs)": repair_out,
            },
        )
    base = mb / t.pop("floor")
    print("whole corpus, one process (but for the rows of the default --jobs):")
    row("orjson floor", mb / base, mb, None)
    for name, seconds in t.items():
        row(name, seconds, mb, base)

    print("--jobs (CLI scan) beside the parallel floor (forked process pool) at the same N:")
    ns = sorted({1, 2, args.jobs} | ({4} if args.jobs >= 4 else set()))
    runs: dict[str, Callable[[], object]] = {}
    for n in ns:
        runs[f"floor {n}"] = lambda n=n: floor(files, n)
        runs[f"scan {n}"] = lambda n=n: cli(
            "scan", "-q", "--jobs", str(n), "--output-format", "json", root
        )
    t = best(args.repeat, runs)
    for n in ns:
        fs, ss = t["floor 1"] / t[f"floor {n}"], t["scan 1"] / t[f"scan {n}"]
        print(
            f"  N={n:<3} floor speed-up {fs:5.2f}x   scan speed-up {ss:5.2f}x   "
            f"({ss / fs:4.2f} of the floor's)"
        )
    with tempfile.TemporaryDirectory() as out:
        rss = (
            peak_rss_mb("scan", "-q", "--jobs", "1", "--output-format", "json", root),
            peak_rss_mb("repair", "-q", "--jobs", "1", "--dry-run", root),
            peak_rss_mb("repair", "-q", "--jobs", "1", "--out", out, root),
        )
    print(
        f"peak RSS, the whole corpus: scan {rss[0]:.0f} MB, repair --dry-run {rss[1]:.0f} MB, "
        f"repair --out {rss[2]:.0f} MB"
    )
    print(f"JSON reports byte-identical: {_identical(root)}")


def _line_by_line(root: str) -> object:
    """The in-process scan by day with the block counter off (`survey.applies`): each clean
    assistant line read one by one, as before #26's block counter."""
    with patch.object(survey, "applies", lambda fmt, windowed: False):
        return scan([root], ScanOptions(by_day=True), jobs=1)


def _pure(root: str) -> object:
    """The in-process scan by day without the native passes (`native.USE`, as THINKFIX_PURE)."""
    with patch.object(native, "USE", False):
        return scan([root], ScanOptions(by_day=True), jobs=1)


def _paths() -> str:
    """Which passes the rows without ", pure" run."""
    if not native.USE:
        return "pure only (THINKFIX_PURE is set)"
    try:
        import hyperscan  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return "pure only (hyperscan is not installed)"
    return (
        f"native passes (hyperscan {hyperscan.__version__}) after the first "
        f"{native.WARM_UP >> 20} MB a process reads; rows marked pure without them"
    )


def _identical(root: str) -> str:
    """The JSON report by day with the survey (the block counter and `record_day`), with the
    block counter off (each clean line read one by one), with every line they take parsed
    instead (`survey.record_day` unsure too), and through the CLI with --jobs 1 and the
    default."""
    timed = ScanOptions(by_day=True)
    with patch.object(native, "WARM_UP", 0):  # the native passes from the first byte
        fast = JsonReporter().render_bytes(scan([root], timed, jobs=1))
    with patch.object(native, "USE", False):
        pure = JsonReporter().render_bytes(scan([root], timed, jobs=1))
    with patch.object(survey, "applies", lambda fmt, windowed: False):
        lines = JsonReporter().render_bytes(scan([root], timed, jobs=1))
        with patch.object(survey, "record_day", lambda raw, days: None):
            parsed = JsonReporter().render_bytes(scan([root], timed, jobs=1))
    one = cli("scan", "-q", "--jobs", "1", "--output-format", "json", root).stdout
    one_pure = cli("scan", "-q", "--jobs", "1", "--output-format", "json", root, pure=True).stdout
    default = cli("scan", "-q", "--output-format", "json", root).stdout
    checks = {
        "native vs pure passes (in-process, CLI)": fast == pure and one == one_pure,
        "block counter vs line by line": fast == lines,
        "survey vs parsed": fast == parsed,
        "--jobs 1 vs default --jobs": one == default,
        "repair --out --jobs 1 vs default --jobs": _repaired(root, "--jobs", "1")
        == _repaired(root),
    }
    if not all(checks.values()):
        raise SystemExit(f"reports differ: {checks}")
    return ", ".join(checks)


def _repaired(root: str, *jobs: str) -> dict[str, bytes]:
    """Every file `repair --out` writes for `root`, by its path under the output folder."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cli("repair", "-q", *jobs, "--out", str(out), root)
        return {str(f.relative_to(out)): f.read_bytes() for f in out.rglob("*") if f.is_file()}


def _startup(repeat: int) -> None:
    """`thinkfix scan` of one small session, `--version` and `--help`, beside importing
    click, orjson and rich (the issue's yardstick)."""
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.jsonl"
        small.write_bytes(b"\n".join(corpus_gen._Claude(random.Random(1), "s").turn()[0]) + b"\n")
        runs: dict[str, Callable[[], object]] = {
            "imports": lambda: subprocess.run(
                [sys.executable, "-c", "import click, orjson, rich"], check=True
            )
        }
        for name, args in (
            ("scan of one small session", ("scan", "-q", str(small))),
            ("--version", ("--version",)),
            ("--help", ("--help",)),
        ):
            # the entry point where installed (what a user runs), else the module
            exe = shutil.which("thinkfix")
            command = [exe] if exe else [sys.executable, "-m", "thinkfix.cli"]
            runs[name] = lambda a=args, c=command: subprocess.run(
                [*c, *a], capture_output=True, check=False, cwd=tmp
            )
        t = best(max(repeat, 5), runs)
    imports = t.pop("imports")
    for name, seconds in t.items():
        print(
            f"start-up: thinkfix {name} {seconds:.3f} s vs import click+orjson+rich "
            f"{imports:.3f} s: {seconds / imports:.2f}x"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=40, help="each corpus's size")
    parser.add_argument(
        "--big-mb",
        type=float,
        default=50,
        help="the one big session for peak memory (1000 for the issue's 1 GB)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="largest N")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=TMP / "thinkfix-bench-run")
    parser.add_argument("--dense-corpus", type=Path, default=TMP / "thinkfix-bench-dense")
    parser.add_argument(
        "--corpora",
        choices=("both", "sparse", "dense"),
        default="both",
        help="bench/scan.py's corpus (sparse), issue #26's (dense), or both",
    )
    args = parser.parse_args(argv)
    # Each repair --out row leaves a run's manifest and backups in the state folder: a private
    # one, so the bench neither fills the user's (~1 GB after a few hundred rows) nor times
    # file creation in a folder its own earlier runs made large.
    if "THINKFIX_STATE_DIR" not in os.environ:
        state = tempfile.TemporaryDirectory(prefix="thinkfix-bench-state-")
        os.environ["THINKFIX_STATE_DIR"] = state.name
    if args.corpora in ("both", "sparse"):
        corpus: Path = args.corpus
        stamp = corpus / f"SIZE-{args.size_mb}-{args.seed}"
        if not stamp.exists():
            generate(corpus, args.size_mb, args.seed)
            stamp.write_text("")
        _rows("sparse", corpus, args)
    if args.corpora in ("both", "dense"):
        dense_corpus: Path = args.dense_corpus
        stamp = dense_corpus / f"SIZE-{args.size_mb}-{args.seed}"
        if not stamp.exists():
            dense.generate(dense_corpus, args.size_mb, args.seed)
            stamp.write_text("")
        _rows("dense", dense_corpus, args)

    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big" / "big.jsonl"
        big.parent.mkdir()
        big_session(big, args.big_mb, args.seed)
        size = big.stat().st_size / 1e6
        scan_rss = min(
            peak_rss_mb("scan", "-q", "--jobs", "1", "--output-format", "json", str(big))
            for _ in range(2)
        )
        dry_rss = min(
            peak_rss_mb("repair", "-q", "--jobs", "1", "--dry-run", str(big)) for _ in range(2)
        )
        out_rss = peak_rss_mb(
            "repair", "-q", "--jobs", "1", "--out", str(Path(tmp) / "out"), str(big)
        )
        print(
            f"peak RSS, one {size:.0f} MB Claude Code session: scan {scan_rss:.0f} MB, "
            f"repair --dry-run {dry_rss:.0f} MB, repair --out {out_rss:.0f} MB"
        )
    _startup(args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
