"""Build real OpenCode SQLite stores for tests, with OpenCode's own schema and row shapes.

Rows are written as OpenCode writes them: the `data` column holds the object without
its ids (`id`, `sessionID`, `messageID` live in their own columns), as compact JSON.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path
from typing import Any

from tests.processes import held

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "opencode_schema.sql"

SESSION = "ses_6a1f0c2b8ffeZ3p9QkR1mW4tYs"
T0 = 1775700000000


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


Message = tuple[str, str, dict[str, Any], list[tuple[str, dict[str, Any]]]]


def rows(messages: list[Message], session: str = SESSION) -> list[tuple[str, list[Any]]]:
    """`(table, values)` of every message and part row, as OpenCode inserts them."""
    out: list[tuple[str, list[Any]]] = []
    for n, (mid, role, extra, parts) in enumerate(messages):
        t = T0 + 1000 * n
        info = {"role": role, "time": {"created": t}, **extra}
        out.append(("message", [mid, session, t, t, _js(info)]))
        out.extend(("part", [pid, mid, session, t, t, _js(data)]) for pid, data in parts)
    return out


def build(
    path: Path, messages: list[Message], session: str = SESSION, *, wal: bool = False
) -> Path:
    """A store at `path` holding `(message id, role, extra info, [(part id, part data)])`;
    `wal`: in WAL mode, as OpenCode keeps it (`PRAGMA journal_mode = WAL`, storage/db.ts)."""
    with closing(sqlite3.connect(path)) as db:
        if wal:
            db.execute("PRAGMA journal_mode = WAL")
        db.executescript(SCHEMA.read_text())
        db.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, "
            "time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session,
                "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750",
                "calm-harbor",
                "/home/ana/src/shop",
                "Fix cart total rounding",
                "1.2.10",
                T0,
                T0 + 60000,
            ),
        )
        for table, values in rows(messages, session):
            marks = ", ".join("?" for _ in values)
            db.execute(f"INSERT INTO {table} VALUES ({marks})", values)
        db.commit()
    return path


# A runtime in another process: it writes rows into a WAL-mode store without checkpointing,
# so they live only in `-wal`, then holds its connection (until stdin closes) or dies.
_RUNTIME = r"""
import json, os, sqlite3, sys
path, rows, end, exclusive = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
db = sqlite3.connect(path, isolation_level=None)
if exclusive == "1":
    db.execute("PRAGMA locking_mode = EXCLUSIVE")
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA wal_autocheckpoint = 0")
db.execute("BEGIN IMMEDIATE")
for table, values in rows:
    db.execute(f"INSERT INTO {table} VALUES ({', '.join('?' for _ in values)})", values)
db.execute("COMMIT")
print("ready", flush=True)
if end == "crash":
    os._exit(0)
sys.stdin.read()
db.close()
"""


def runtime(
    path: Path, messages: list[Message], *, end: str = "hold", exclusive: bool = False
) -> AbstractContextManager[None]:
    """While the block runs, `messages` live only in the store's `-wal`, written by another
    process that holds the store open (`end="hold"`, exclusively locked with `exclusive`)
    or died without closing it (`end="crash"`: `-wal` and `-shm` left behind)."""
    return holding(path, rows(messages), end=end, exclusive=exclusive)


@contextmanager
def holding(
    path: Path, rows: list[tuple[str, list[Any]]], *, end: str = "hold", exclusive: bool = False
) -> Iterator[None]:
    """`runtime` for any store: `rows` (table, every column's value) written by the other
    process."""
    with held(_RUNTIME, str(path), _js(rows), end, "01"[exclusive]) as proc:
        if end == "crash":
            proc.wait()
        yield


ASSISTANT = {
    "parentID": "msg_95e0f3d41001ZK2hN7bXq0aVcE",
    "modelID": "MiniMax-M2",
    "providerID": "minimax",
    "mode": "build",
    "agent": "build",
    "path": {"cwd": "/home/ana/src/shop", "root": "/home/ana/src/shop"},
    "cost": 0,
    "tokens": {"input": 11250, "output": 380, "reasoning": 0, "cache": {"read": 0, "write": 0}},
    "finish": "stop",
}

LEAKY = [
    (
        "msg_95e0f3d41001ZK2hN7bXq0aVcE",
        "user",
        {"agent": "build"},
        [
            (
                "prt_95e0f3d41002Aa1bB2cC3dD4eE",
                {
                    "type": "text",
                    "text": "Why is the cart total 19.999999? (no <think> blocks, please)",
                },
            )
        ],
    ),
    (
        "msg_95e0f3d71002bP4sW8nY1eLmTg",
        "assistant",
        ASSISTANT,
        [
            ("prt_95e0f3d71003Ff5gG6hH7iI8jJ", {"type": "step-start"}),
            (
                "prt_95e0f3d71004Kk9lL0mM1nN2oO",
                {
                    "type": "reasoning",
                    "text": "Prices are summed as floats.",
                    "time": {"start": T0},
                },
            ),
            (
                "prt_95e0f3d71005Pp3qQ4rR5sS6tT",
                {
                    "type": "text",
                    "text": "<think>\nUse integer cents and format at the end.\n</think>\n\n"
                    "Store prices as integer cents; the total is then exact.",
                    "time": {"start": T0 + 1500, "end": T0 + 4000},
                },
            ),
            (
                "prt_95e0f3d71006Uu7vV8wW9xX0yY",
                {
                    "type": "tool",
                    "callID": "call_91",
                    "tool": "edit",
                    "state": {
                        "status": "completed",
                        "input": {"filePath": "src/cart.ts"},
                        "output": "Edited src/cart.ts",
                        "title": "src/cart.ts",
                        "metadata": {},
                        "time": {"start": T0 + 4100, "end": T0 + 4200},
                    },
                },
            ),
            (
                "prt_95e0f3d71007Zz1aA2bB3cC4dD",
                {
                    "type": "step-finish",
                    "reason": "tool-calls",
                    "cost": 0,
                    "tokens": {
                        "input": 11250,
                        "output": 380,
                        "reasoning": 0,
                        "cache": {"read": 0, "write": 0},
                    },
                },
            ),
        ],
    ),
    (
        "msg_95e0f3e20003cQ5tX9oZ2fMnUh",
        "assistant",
        ASSISTANT,
        [
            ("prt_95e0f3e20004Ee5fF6gG7hH8iI", {"type": "text", "text": "</think>"}),
            (
                "prt_95e0f3e20005Jj9kK0lL1mM2nN",
                {
                    "type": "text",
                    "text": "Done: `cartTotal` adds cents, and 19.99 + 0.01 is `20.00`.",
                },
            ),
        ],
    ),
]
