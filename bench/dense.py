"""The dense corpus of issue #26: many short assistant messages, as real archives hold them.

bench/run.py's first corpus (bench/scan.py's generators) flatters a scan: 2.9 KB a line and
big tool results, ~22,500 assistant messages in 100 MB. This one packs ~60,000 assistant
messages into 100 MB (Claude Code, pi and Codex sessions mixed, a third of the bytes each),
with:

- pi lines as pi writes them: the entry's ISO `timestamp` and the message's own millisecond
  `timestamp` (the one a message's day is read from), e.g. pi-mono's
  `{"type":"message","timestamp":"…Z","message":{…,"timestamp":1765233665294}}`;
- sessions spread over 30 days, stamps advancing line by line (some cross midnight UTC);
- ~1% of assistant messages leaking (the delimiter families of bench/scan.py's LEAKS and
  more: `<think>`, `<thinking>`, `<reasoning>`, a bare `</think>`, `◁think▷`), and about
  as many decoys: `<think>` in an assistant's inline code or fenced code, in tool output, in
  user text (none a finding).

    python bench/dense.py DIR [--size-mb 100] [--seed 7]    # writes DIR, prints the counts
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scan as corpus_gen

LEAK_RATE = 0.0125  # of answers: ~1% of all assistant messages (tool calls are too)
DECOY_RATE = 0.0125
DAY0 = 1_767_225_600  # 2026-01-01T00:00:00Z
LEAKS = [
    "<think>\nThe user wants the bug fixed. {p}\n</think>\n\n{a}",
    "{p}\n</think>\n\n{a}",
    "<thinking>{p}</thinking>{a}",
    "<reasoning>\n{p}\n</reasoning>\n{a}",
    "◁think▷{p}◁/think▷{a}",
]
DECOYS = [
    " Models sometimes print `<think>` in prose; that is fine.",
    "\n\n```html\n<think>not a leak: a tag in a code block</think>\n```\n",
]


def _iso(seconds: float) -> str:
    import datetime as dt

    stamp = dt.datetime.fromtimestamp(seconds, dt.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


class _Clock:
    """A session's time: starts on one of 30 days, moves a few seconds a line."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.now = DAY0 + rng.uniform(0, 30 * 86400)

    def tick(self) -> float:
        self.now += self.rng.uniform(0.5, 40.0)
        return self.now


def _answer(rng: random.Random) -> tuple[str, bool, bool]:
    """(text, leaked, decoy): short answers, ~1% leaking, ~1/3 of the decoys in them."""
    text = corpus_gen._prose(rng, rng.randint(8, 60))
    if rng.random() < 0.15:
        text += "\n\n```ts\n" + corpus_gen._code(rng, rng.randint(1, 3)) + "```\n"
    decoy = rng.random() < DECOY_RATE / 3
    if decoy:
        text += rng.choice(DECOYS)
    if rng.random() < LEAK_RATE:
        return rng.choice(LEAKS).format(p=corpus_gen._prose(rng, 30), a=text), True, decoy
    return text, False, decoy


def _prompt(rng: random.Random) -> str:
    text = corpus_gen._prose(rng, rng.randint(4, 30))
    if rng.random() < DECOY_RATE:  # a user quoting the tag: never a finding
        text += " Why does the model print <think> before answering?"
    return text


def _output(rng: random.Random, lines: int) -> str:
    text = corpus_gen._code(rng, lines)
    if rng.random() < DECOY_RATE / 2:  # a tool's output holding the tag
        text += "templates/chat.jinja:12: {{ '<think>' }}{{ reasoning }}{{ '</think>' }}\n"
    return text


class _Claude:
    """Claude Code: a prompt, then text and tool_use assistant entries with small results."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng, self.session, self.n, self.clock = rng, session, 0, _Clock(rng)

    def _base(self, kind: str) -> dict[str, object]:
        self.n += 1
        return corpus_gen.claude_entry(self.session, self.n, kind, _iso(self.clock.tick()))

    def _assistant(self, content: list[dict[str, object]]) -> bytes:
        entry = self._base("assistant")
        entry["message"] = corpus_gen.claude_answer(self.n, content)
        return orjson.dumps(entry)

    def turn(self) -> tuple[list[bytes], int, int]:
        rng, out, leaks, messages = self.rng, [], 0, 0
        user = self._base("user")
        user["message"] = {"role": "user", "content": _prompt(rng)}
        out.append(orjson.dumps(user))
        for _ in range(rng.randint(1, 4)):
            text, leaked, _ = _answer(rng)
            leaks += leaked
            out.append(self._assistant([{"type": "text", "text": text}]))
            tool = f"toolu_{self.rng.getrandbits(40):010x}"
            out.append(
                self._assistant(
                    [
                        {
                            "type": "tool_use",
                            "id": tool,
                            "name": "Read",
                            "input": {"file_path": "/src/app.tsx"},
                        }
                    ]
                )
            )
            messages += 2
            body = _output(rng, rng.randint(3, 14))
            result = self._base("user")
            result["message"] = {
                "role": "user",
                "content": [{"tool_use_id": tool, "type": "tool_result", "content": body}],
            }
            result["toolUseResult"] = {"stdout": body, "stderr": "", "interrupted": False}
            out.append(orjson.dumps(result))
        return out, leaks, messages


class _Pi:
    """pi (session format v3): entries with an ISO stamp, messages with their own ms stamp."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng, self.session, self.n, self.clock = rng, session, 0, _Clock(rng)

    def header(self) -> list[bytes]:
        start = _iso(self.clock.tick())
        return corpus_gen.pi_header(self.session, start, start)

    def _msg(self, message: dict[str, object]) -> bytes:
        self.n += 1
        created = self.clock.tick()
        # pi stamps the message when it is made and the entry when it is appended, a little
        # later: near midnight the two fall on different days (the message's is the day).
        message["timestamp"] = int(created * 1000)
        return corpus_gen.pi_entry(self.n, _iso(created + self.rng.uniform(0.001, 3.0)), message)

    def turn(self) -> tuple[list[bytes], int, int]:
        rng, leaks, messages = self.rng, 0, 0
        out = [self._msg({"role": "user", "content": [{"type": "text", "text": _prompt(rng)}]})]
        for _ in range(rng.randint(1, 3)):
            text, leaked, _ = _answer(rng)
            leaks += leaked
            messages += 1
            call = f"call_{rng.getrandbits(32):08x}"
            out.append(
                self._msg(
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": text},
                            {"type": "toolCall", "id": call, **corpus_gen.PI_CALL},
                        ],
                        "api": "openai-completions",
                        "provider": "openrouter",
                        "model": "minimax/minimax-m2",
                        "usage": corpus_gen.PI_USAGE,
                        "stopReason": "toolUse",
                    }
                )
            )
            out.append(
                self._msg(
                    {
                        "role": "toolResult",
                        "toolCallId": call,
                        "toolName": "read",
                        "content": [{"type": "text", "text": _output(rng, rng.randint(2, 16))}],
                        "isError": False,
                    }
                )
            )
        return out, leaks, messages


class _Codex:
    """Codex rollouts: turn_context, the user's message and event, then per answer the
    assistant message and its event, a call, its output and a token count."""

    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng, self.session, self.clock = rng, session, _Clock(rng)

    def _line(self, kind: str, payload: dict[str, object]) -> bytes:
        return orjson.dumps(
            {"timestamp": _iso(self.clock.tick()), "type": kind, "payload": payload}
        )

    def header(self) -> list[bytes]:
        return [self._line("session_meta", codex_meta(self.session, _iso(self.clock.now)))]

    def turn(self) -> tuple[list[bytes], int, int]:
        rng = self.rng
        prompt = _prompt(rng)
        model = "qwen3:32b" if rng.random() < 0.8 else "gpt-oss:20b"
        return codex_turn(
            self._line,
            rng,
            prompt,
            model,
            lambda: _answer(rng)[:2],
            lambda: _output(rng, rng.randint(1, 9)),
        )


def codex_meta(session: str, timestamp: str) -> dict[str, object]:
    """A Codex rollout's session_meta payload (both corpora's)."""
    return {
        "id": session,
        "timestamp": timestamp,
        "cwd": "/home/dev/tilemap",
        "originator": "codex_cli_rs",
        "cli_version": "0.98.0",
        "instructions": None,
        "source": "cli",
        "model_provider": "ollama",
    }


def codex_turn(
    line: Callable[[str, dict[str, object]], bytes],
    rng: random.Random,
    prompt: str,
    model: str,
    answer: Callable[[], tuple[str, bool]],
    output: Callable[[], str],
) -> tuple[list[bytes], int, int]:
    """One Codex turn as Codex writes it: turn_context, the user's message and its event,
    then per answer the assistant message and its event, a shell call, its output and a
    token count. Lines, leaking answers, assistant messages. Both corpora use it (bench/run.py's
    sparse one with its own answers, times and outputs)."""
    leaks, messages = 0, 0
    out = [
        line(
            "turn_context",
            {
                "cwd": "/home/dev/tilemap",
                "approval_policy": "on-request",
                "model": model,
                "effort": "medium",
                "summary": "auto",
            },
        ),
        line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": prompt}],
            },
        ),
        line("event_msg", {"type": "user_message", "message": prompt, "images": []}),
    ]
    for _ in range(rng.randint(1, 4)):
        text, leaked = answer()
        leaks += leaked
        messages += 1
        out.append(
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                },
            )
        )
        out.append(line("event_msg", {"type": "agent_message", "message": text}))
        call = f"call_{rng.getrandbits(32):08x}"
        out.append(
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "call_id": call,
                    "arguments": orjson.dumps({"command": ["rg", "-n", "flood"]}).decode(),
                },
            )
        )
        out.append(
            line(
                "response_item",
                {"type": "function_call_output", "call_id": call, "output": output()},
            )
        )
        out.append(line("event_msg", {"type": "token_count", "info": None}))
    return out, leaks, messages


def generate(corpus: Path, size_mb: float, seed: int) -> tuple[int, int]:
    """Write the corpus under corpus/{claude,pi,codex}/; (leaking, assistant) messages."""
    rng = random.Random(seed)
    if corpus.exists():
        shutil.rmtree(corpus)
    leaks = messages = 0
    for fmt in ("claude", "pi", "codex"):
        (corpus / fmt).mkdir(parents=True)
        written = 0
        while written < size_mb * 1e6 / 3:
            session = f"0195a0c4-{rng.getrandbits(48):012x}"
            gen: _Claude | _Pi | _Codex
            if fmt == "claude":
                gen, name, lines = _Claude(rng, session), f"{session}.jsonl", []
            elif fmt == "pi":
                gen = _Pi(rng, session)
                name, lines = f"2026-01-15T08-30-12-417Z_{session}.jsonl", gen.header()
            else:
                gen = _Codex(rng, session)
                name = f"rollout-2026-03-02T10-21-07-{session}.jsonl"
                lines = gen.header()
            size, total = rng.randint(50_000, 2_000_000), 0
            while total < size:
                more, leaked, counted = gen.turn()
                lines += more
                leaks += leaked
                messages += counted
                total += sum(len(x) + 1 for x in more)
            data = b"\n".join(lines) + b"\n"
            (corpus / fmt / name).write_bytes(data)
            written += len(data)
    (corpus / "LEAKS").write_text(f"{leaks}\n")
    (corpus / "ASSISTANT").write_text(f"{messages}\n")
    return leaks, messages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    leaks, messages = generate(args.corpus, args.size_mb, args.seed)
    print(f"{args.corpus}: {messages} assistant messages, {leaks} leaking")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
