"""Sessions whose first record is far longer than a detection window, built from real shapes.

Two ordinary files that used to be skipped as "not a known session format" (issue 10):
a Claude Code session that starts with a large pasted log, and a chat JSONL export with
one whole conversation per line. Plus a way to grow the first record of any fixture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.formats.support import FIXTURES, dump_like

MB = 1 << 20

#: The Claude Code fixture the long-prompt session is made from (4 leaking assistant messages).
CLAUDE_FIXTURE = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
CLAUDE_LEAKING = 4

_LOG_LINE = (
    "2026-03-05T16:01:{sec:02d}.{ms:03d}Z INFO  deploy[{pid}]: rsync -az build/ "
    "deploy@web-{host}:/srv/app  sent {sent} bytes  received 1,204 bytes  "
    "speedup is 41.07\n"
)


def pasted_log(size: int) -> str:
    """A deploy log of about `size` characters, the kind users paste into a prompt."""
    lines, total, i = [], 0, 0
    while total < size:
        line = _LOG_LINE.format(
            sec=i % 60,
            ms=(i * 37) % 1000,
            pid=4100 + i % 7,
            host=i % 12,
            sent=18_000 + (i * 7919) % 90_000,
        )
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


def claude_code_long_prompt(size: int = 400_000) -> bytes:
    """The Claude Code fixture with its first user message grown to a `size`-byte pasted log."""
    first, rest = CLAUDE_FIXTURE.read_bytes().split(b"\n", 1)
    entry = json.loads(first)
    entry["message"]["content"] += "\n\nHere is the last run:\n\n" + pasted_log(size)
    return dump_like(entry).encode() + b"\n" + rest


#: Chat exports: 4 files of 3 conversations, each conversation with one leaking answer.
CHAT_FILES = 4
CHAT_LINES = 3
CHAT_LEAKING = CHAT_FILES * CHAT_LINES


def chat_conversation(index: int, size: int = 100_000) -> dict[str, Any]:
    """One conversation, as a fine-tuning set or chat export stores it: about `size` bytes."""
    return {
        "id": f"conv-{index:04d}",
        "model": "deepseek-r1-distill-qwen-32b",
        "messages": [
            {"role": "system", "content": "You are a release engineer. Answer briefly."},
            {"role": "user", "content": "Why did this deploy take so long?\n\n" + pasted_log(size)},
            {
                "role": "assistant",
                "content": "<think>\nThe rsync lines repeat for every host; "
                "the transfer itself is small.\n</think>\n\n"
                "It ran rsync once per host, one after another.",
            },
            {"role": "user", "content": "How do I make it faster?"},
            {"role": "assistant", "content": "Run the hosts in parallel (`xargs -P 4`)."},
        ],
    }


def chat_export(file_index: int, size: int = 100_000) -> bytes:
    """A chat JSONL file with CHAT_LINES whole conversations, one per line."""
    return b"".join(
        dump_like(chat_conversation(file_index * CHAT_LINES + i, size)).encode() + b"\n"
        for i in range(CHAT_LINES)
    )


def write_chat_exports(folder: Path, size: int = 100_000) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(CHAT_FILES):
        path = folder / f"chats-{i}.jsonl"
        path.write_bytes(chat_export(i, size))
        paths.append(path)
    return paths


def _longest(value: Any, path: tuple[Any, ...] = ()) -> tuple[int, tuple[Any, ...]]:
    if isinstance(value, str):
        return len(value), path
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    return max((_longest(v, path + (k,)) for k, v in items), default=(-1, path))


def grow_first_record(data: bytes, size: int = MB) -> bytes:
    """`data` with its first record (line, or the whole pretty document) grown past `size`.

    The longest string of that record gets a pasted log appended; the rest of the
    file is unchanged. Key order and layout are kept (compact lines stay compact,
    pretty documents are written with 2-space indentation).
    """
    first, sep, rest = data.partition(b"\n")
    pretty = first.strip() in (b"{", b"[")
    record = json.loads(data if pretty else first)
    length, path = _longest(record)
    assert length >= 0, "the first record holds no string"
    holder = record
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] += pasted_log(size)
    if pretty:
        return dump_like(record, indent="  ", key_sep=": ").encode()
    return dump_like(record).encode() + sep + rest
