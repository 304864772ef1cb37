"""Benchmark `thinkfix scan` against the floor: parsing every line with orjson.

Generates (once, deterministically) a corpus of Claude Code and pi JSONL
sessions under bench/corpus/ (gitignored): big tool results full of code and
`<` characters, ANSI escapes, non-ASCII text, prose that says "think" and
"reasoning", and 1% of assistant messages with a real leak. Then times, on the
same files in one run:

  (a) the floor: read every line and orjson.loads it (one process);
  (b) scan, one process;
  (c) scan --jobs 2;
  (d) scan, one process, with the formats' fast paths off (`quick_messages`,
      `context_markers_for`, `keeps_context`), to show what they buy; the report
      must come out identical;

and prints MB/s and the ratios DESIGN.md sets targets for (scan >= 0.75x the
floor, --jobs 2 >= 1.7x --jobs 1), by wall time and by CPU time (on a machine
where something else is running, CPU time is the fairer single-process figure).

    python bench/scan.py [--size-mb 80] [--corpus DIR] [--repeat 3] [--regenerate]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE / "corpus"
LEAK_RATE = 0.01  # assistant messages with a real leak
TRAP_RATE = 0.01  # assistant messages that mention `<think>` in inline code (not a leak)

WORDS = [
    "the",
    "function",
    "returns",
    "a",
    "value",
    "when",
    "the",
    "list",
    "is",
    "empty",
    "so",
    "we",
    "should",
    "check",
    "the",
    "caller",
    "before",
    "changing",
    "anything",
    "I",
    "think",
    "the",
    "reasoning",
    "in",
    "the",
    "comment",
    "is",
    "wrong",
    "because",
    "the",
    "test",
    "expects",
    "a",
    "sorted",
    "result",
    "and",
    "the",
    "thought",
    "here",
    "was",
    "to",
    "keep",
    "it",
    "stable",
    "let",
    "me",
    "look",
    "at",
    "the",
    "module",
    "again",
    "then",
    "run",
    "the",
    "suite",
    "über",
    "café",
    "naïve",
    "日本語",
    "résumé",
]
CODE = [
    'export function Card({ title }: Props) {\n  return <div className="card">{title}</div>;\n}\n',
    "if (a < b && b > c) {\n  return items.filter((x) => x.size <= limit);\n}\n",
    'def merge(a, b):\n    """Merge two sorted lists."""\n    return sorted(a + b)\n',
    '<template>\n  <ul><li v-for="i in items">{{ i }}</li></ul>\n</template>\n',
    "SELECT id, name FROM users WHERE created_at < now() - interval '1 day';\n",
    "\x1b[32mPASS\x1b[0m tests/orders.test.ts (3.2 s)\n\x1b[31mFAIL\x1b[0m tests/cart.test.ts\n",
    'fn main() { let v: Vec<u8> = Vec::new(); println!("{}", v.len()); }\n',
]
LEAKS = [
    "<think>\nThe user wants the bug fixed. {p}\n</think>\n\n{a}",
    "{p}\n</think>\n\n{a}",
    "{a}</think>",
    "<thinking>{p}</thinking>{a}",
]


def _prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _code(rng: random.Random, lines: int) -> str:
    return "".join(rng.choice(CODE) for _ in range(lines))


def _answer(rng: random.Random) -> tuple[str, bool]:
    text = _prose(rng, rng.randint(20, 200))
    if rng.random() < 0.3:
        text += "\n\n```ts\n" + _code(rng, rng.randint(1, 6)) + "```\n"
    if rng.random() < TRAP_RATE:
        text += " Models sometimes print `<think>` in prose; that is fine."
    if rng.random() < LEAK_RATE:
        return rng.choice(LEAKS).format(p=_prose(rng, 40), a=text), True
    return text, False


def claude_entry(session: str, n: int, kind: str, timestamp: str) -> dict[str, object]:
    """The `n`-th Claude Code entry of `session`, of type `kind`, without its message (both
    corpora's, bench/dense.py's with advancing times)."""
    return {
        "parentUuid": f"{session}-{n - 1}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/shop-api",
        "sessionId": session,
        "version": "2.1.32",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"{session}-{n}",
        "timestamp": timestamp,
    }


def claude_answer(n: int, content: list[dict[str, object]]) -> dict[str, object]:
    """A Claude Code assistant message holding `content`, as the `n`-th entry's."""
    return {
        "model": "claude-opus-4-5-20251101",
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 120},
    }


#: What a pi answer's tool call reads, and what the answer cost (both corpora's).
PI_CALL = {"name": "read", "arguments": {"path": "src/merge.ts"}}
PI_USAGE = {"input": 1200, "output": 300, "cost": {"total": 0.000005}}


def pi_entry(n: int, timestamp: str, message: dict[str, object]) -> bytes:
    """The `n`-th pi message entry, stamped `timestamp`."""
    return orjson.dumps(
        {
            "type": "message",
            "id": f"{n:08x}",
            "parentId": f"{n - 1:08x}",
            "timestamp": timestamp,
            "message": message,
        }
    )


def pi_header(session: str, started: str, model_changed: str | None = None) -> list[bytes]:
    """A pi session's first two entries: the session, and the model chosen (stamped when
    `model_changed` is given)."""
    change: dict[str, object] = {"type": "model_change", "id": "m0", "parentId": None}
    if model_changed is not None:
        change["timestamp"] = model_changed
    change.update(provider="openrouter", modelId="minimax/minimax-m2")
    session_entry = {
        "type": "session",
        "version": 3,
        "id": session,
        "timestamp": started,
        "cwd": "/work",
    }
    return [orjson.dumps(session_entry), orjson.dumps(change)]


def session_data(
    lines: list[bytes], size: int, turn: Callable[[], tuple[list[bytes], int]]
) -> tuple[bytes, int]:
    """A session's bytes: `lines`, then turns until they add `size` bytes or more; and the
    leaking messages those turns hold."""
    total = leaks = 0
    while total < size:
        more, leaked = turn()
        lines += more
        leaks += leaked
        total += sum(len(x) + 1 for x in more)
    return b"\n".join(lines) + b"\n", leaks


class _Claude:
    """Claude Code lines: user prompts, assistant text and tool_use lines, big tool results."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng, self.session, self.n = rng, session, 0

    def _base(self, kind: str) -> dict[str, object]:
        self.n += 1
        return claude_entry(self.session, self.n, kind, "2026-02-11T09:14:02.118Z")

    def turn(self) -> tuple[list[bytes], int]:
        rng, out, leaks = self.rng, [], 0
        user = self._base("user")
        user["message"] = {"role": "user", "content": _prose(rng, rng.randint(5, 60))}
        out.append(orjson.dumps(user))
        for _ in range(rng.randint(1, 4)):
            text, leaked = _answer(rng)
            leaks += leaked
            entry = self._base("assistant")
            entry["message"] = claude_answer(self.n, [{"type": "text", "text": text}])
            out.append(orjson.dumps(entry))
            tool = self._base("assistant")
            tool["message"] = {
                "model": "claude-opus-4-5-20251101",
                "id": f"msg_{self.n}",
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{self.n}",
                        "name": "Read",
                        "input": {"file_path": "/src/app.tsx"},
                    }
                ],
            }
            out.append(orjson.dumps(tool))
            result = self._base("user")
            body = _code(rng, rng.randint(10, 120))
            result["message"] = {
                "role": "user",
                "content": [
                    {"tool_use_id": f"toolu_{self.n}", "type": "tool_result", "content": body}
                ],
            }
            result["toolUseResult"] = {"stdout": body, "stderr": "", "interrupted": False}
            out.append(orjson.dumps(result))
        return out, leaks


class _Pi:
    """pi lines: header, model change, user/assistant/toolResult messages."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng, self.session, self.n = rng, session, 0

    def header(self) -> list[bytes]:
        return pi_header(self.session, "2026-01-15T08:30:12.417Z")

    def _msg(self, message: dict[str, object]) -> bytes:
        self.n += 1
        return pi_entry(self.n, "2026-01-15T08:30:15.004Z", message)

    def turn(self) -> tuple[list[bytes], int]:
        rng, leaks = self.rng, 0
        out = [self._msg({"role": "user", "content": [{"type": "text", "text": _prose(rng, 30)}]})]
        for _ in range(rng.randint(1, 3)):
            text, leaked = _answer(rng)
            leaks += leaked
            out.append(
                self._msg(
                    {
                        "role": "assistant",
                        "api": "openai-completions",
                        "provider": "openrouter",
                        "model": "minimax/minimax-m2",
                        "content": [
                            {"type": "text", "text": text},
                            {"type": "toolCall", "id": f"call_{self.n}", **PI_CALL},
                        ],
                        "usage": PI_USAGE,
                        "stopReason": "toolUse",
                    }
                )
            )
            out.append(
                self._msg(
                    {
                        "role": "toolResult",
                        "toolCallId": f"call_{self.n}",
                        "toolName": "read",
                        "content": [{"type": "text", "text": _code(rng, rng.randint(10, 100))}],
                    }
                )
            )
        return out, leaks


def generate(corpus: Path, size_mb: float, seed: int = 7) -> int:
    """Write the corpus; returns how many leaking messages it holds."""
    rng = random.Random(seed)
    if corpus.exists():
        shutil.rmtree(corpus)
    (corpus / "claude").mkdir(parents=True)
    (corpus / "pi").mkdir()
    target, written, leaks, n = size_mb * 1e6, 0, 0, 0
    while written < target:
        n += 1
        session = f"{rng.getrandbits(64):016x}"
        if n % 2:
            gen: _Claude | _Pi = _Claude(rng, session)
            path = corpus / "claude" / f"{session}.jsonl"
            lines: list[bytes] = []
        else:
            gen = _Pi(rng, session)
            path = corpus / "pi" / f"{session}.jsonl"
            lines = gen.header()
        size = rng.randint(200_000, 1_500_000)
        data, leaked = session_data(lines, size - sum(len(x) for x in lines), gen.turn)
        leaks += leaked
        path.write_bytes(data)
        written += len(data)
    (corpus / "LEAKS").write_text(f"{leaks}\n")
    return leaks


# --- the fast paths, off: what the format hooks buy ------------------------------------------


@contextmanager
def without_fast_paths() -> Iterator[None]:
    """Every format with the base class's hooks: each context marker matters, no line is
    counted from its bytes (tests/formats/test_fast_paths.py proves the report the same)."""
    from thinkfix.formats.base import SessionFormat

    names = ("quick_messages", "context_markers_for", "keeps_context")
    saved = [
        (type(registry.get(f)), n, getattr(type(registry.get(f)), n))
        for f in registry.names()
        for n in names
    ]
    for cls, name, _ in saved:
        setattr(cls, name, getattr(SessionFormat, name))
    try:
        yield
    finally:
        for cls, name, value in saved:
            setattr(cls, name, value)


def scan_without_fast_paths(corpus: Path) -> object:
    with without_fast_paths():
        return scan([str(corpus)], jobs=1)


def files_of(corpus: Path) -> list[Path]:
    return sorted(corpus.rglob("*.jsonl"))


def parse_floor(files: list[Path]) -> int:
    """The floor: every line read and parsed, nothing else."""
    loads, count = orjson.loads, 0
    for path in files:
        with open(path, "rb") as fp:
            for line in fp:
                loads(line)
                count += 1
    return count


def best_of(
    repeat: int, runs: dict[str, Callable[[], object]]
) -> dict[str, tuple[float, float, object]]:
    """Best wall and CPU time of each run, interleaved so a burst of load elsewhere hits all of
    them alike. CPU time (this process and its workers) is what to compare on a busy machine."""
    best: dict[str, tuple[float, float, object]] = {
        name: (float("inf"), float("inf"), None) for name in runs
    }
    for _ in range(repeat):
        for name, fn in runs.items():
            cpu0, wall0 = _cpu(), time.perf_counter()
            value = fn()
            wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
            old = best[name]
            best[name] = (min(old[0], wall), min(old[1], cpu), value)
    return best


def _cpu() -> float:
    """CPU seconds used by this process and its finished children (the pool's workers)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=80)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--regenerate", action="store_true")
    args = parser.parse_args(argv)

    corpus: Path = args.corpus
    if args.regenerate or not (corpus / "LEAKS").exists():
        print(f"generating ~{args.size_mb:.0f} MB under {corpus} ...", file=sys.stderr)
        generate(corpus, args.size_mb)
    expected = int((corpus / "LEAKS").read_text())
    files = files_of(corpus)
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(
        f"corpus: {len(files)} files, {mb:.1f} MB, {expected} leaking messages, "
        f"{os.cpu_count()} cpus"
    )

    times = best_of(
        args.repeat,
        {
            "floor": lambda: parse_floor(files),
            "one": lambda: scan([str(corpus)], jobs=1),
            "two": lambda: scan([str(corpus)], jobs=2),
            "hooks": lambda: scan_without_fast_paths(corpus),
        },
    )
    report = times["one"][2]
    assert times["two"][2] == report, "--jobs 2 must give the same report"
    assert times["hooks"][2] == report, "the fast paths must not change the report"
    got = report.summary.leaking_messages  # type: ignore[attr-defined]
    assert got == expected, f"scan found {got} leaking messages, the corpus has {expected}"

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  {'':<44} {'wall':>8} {'MB/s':>8} {'cpu':>8} {'MB/s':>8}")
    names = {
        "floor": "orjson parse floor (every line)",
        "one": "scan --jobs 1",
        "two": "scan --jobs 2",
        "hooks": "scan --jobs 1, fast paths off",
    }
    for key, name in names.items():
        wall, cpu, _ = times[key]
        print(f"  {name:<44} {wall:7.3f}s {mb / wall:8.1f} {cpu:7.3f}s {mb / cpu:8.1f}")
    print(
        f"  lines: {times['floor'][2]}, assistant messages: "
        f"{report.summary.assistant_messages}, leaking: {got}, "  # type: ignore[attr-defined]
        f"load average: {load:.2f}"
    )
    wall = {k: v[0] for k, v in times.items()}
    cpu = {k: v[1] for k, v in times.items()}
    print(
        f"scan / floor (target >= 0.75, aim > 1):  wall {wall['floor'] / wall['one']:.2f}x, "
        f"cpu {cpu['floor'] / cpu['one']:.2f}x"
    )
    print(
        f"  with the fast paths off:                 wall {wall['floor'] / wall['hooks']:.2f}x, "
        f"cpu {cpu['floor'] / cpu['hooks']:.2f}x"
    )
    print(
        f"jobs 2 / jobs 1 (target >= 1.7):          wall {wall['one'] / wall['two']:.2f}x "
        f"(needs two idle cores; cpu used: {cpu['two']:.3f}s vs {cpu['one']:.3f}s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
