"""Build real Crush SQLite stores for tests, with Crush's own schema and row shapes.

The schema is Crush's own: its goose migrations (charmbracelet/crush
`internal/db/migrations/*.sql`, copied verbatim into tests/data/crush_migrations/), the
`-- +goose Up` half of each applied in order, as `goose.Up` does in `internal/db/connect.go`.
Rows are written as Crush's queries write them (`internal/db/sql/*.sql`): a message's
`parts` column holds `[{"type": ..., "data": {...}}]` (`internal/message/content.go`,
`marshalParts`), times in seconds (`strftime('%s', 'now')`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from thinkfix.formats.crush import go_json

MIGRATIONS = Path(__file__).resolve().parents[1] / "data" / "crush_migrations"

SESSION = "9f3c2a1e-5b7d-4c8e-a2f1-6d0b3e9a7c45"
PROVIDERS = {"MiniMax-M2": "minimax", "claude-sonnet-4-5-20250929": "anthropic"}
T0 = 1775700000


def migrations() -> list[str]:
    """The Up half of each migration, in the order goose applies them (by version)."""
    return [p.read_text().split("-- +goose Down")[0] for p in sorted(MIGRATIONS.glob("*.sql"))]


def trigger_statement(name: str) -> str:
    """A CREATE TRIGGER statement exactly as a migration writes it."""
    for text in migrations():
        found = re.search(rf"CREATE TRIGGER IF NOT EXISTS {name}\b.*?\nEND;", text, re.DOTALL)
        if found:
            return found.group(0)
    raise KeyError(name)


Message = tuple[str, str, list[dict[str, Any]]]  # id, role, parts


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": value}}


def reasoning(thinking: str, signature: str = "") -> dict[str, Any]:
    """A reasoning part as Go marshals `ReasoningContent` (started/finished_at omitempty)."""
    data = {
        "thinking": thinking,
        "signature": signature,
        "thought_signature": "",
        "tool_id": "",
        "responses_data": None,
    }
    return {"type": "reasoning", "data": data}


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    data = {
        "id": call_id,
        "name": name,
        "input": json.dumps(arguments, separators=(",", ":")),
        "provider_executed": False,
        "finished": True,
    }
    return {"type": "tool_call", "data": data}


def tool_result(call_id: str, name: str, content: str) -> dict[str, Any]:
    data = {
        "tool_call_id": call_id,
        "name": name,
        "content": content,
        "data": "",
        "mime_type": "",
        "metadata": "",
        "is_error": False,
    }
    return {"type": "tool_result", "data": data}


def finish(reason: str, at: int = T0) -> dict[str, Any]:
    return {"type": "finish", "data": {"reason": reason, "time": at}}


def build(
    path: Path, messages: list[Message], session: str = SESSION, *, model: str = "MiniMax-M2"
) -> Path:
    """A store at `path` made by Crush's migrations, in WAL mode as Crush keeps it
    (`internal/db/connect.go` pragmas), holding one session of `messages`."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        for up in migrations():
            db.executescript(up)
    return add_session(path, messages, session, model=model)


def add_session(
    path: Path, messages: list[Message], session: str, *, model: str = "MiniMax-M2"
) -> Path:
    """A session and its messages, inserted as `CreateSession` and `CreateMessage` do (the
    insert trigger counts each message into `sessions.message_count`)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute(
            "INSERT INTO sessions (id, parent_session_id, title, message_count, prompt_tokens, "
            "completion_tokens, cost, updated_at, created_at) VALUES (?, NULL, ?, 0, ?, ?, ?, ?, ?)",
            (session, "Fix cart total rounding", 11250, 380, 0.0123, T0 + 60, T0),
        )
        for n, (mid, role, parts) in enumerate(messages):
            t = T0 + 10 * n
            assistant = role == "assistant"
            db.execute(
                "INSERT INTO messages (id, session_id, role, parts, model, provider, "
                "is_summary_message, created_at, updated_at, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
                (
                    mid,
                    session,
                    role,
                    go_json(parts),
                    model if assistant else None,
                    PROVIDERS.get(model, "openrouter") if assistant else None,
                    t,
                    t + 5,
                    t + 5 if assistant else None,
                ),
            )
        db.commit()
    return path


def rows(messages: list[Message], session: str) -> list[tuple[str, list[Any]]]:
    """`(table, values)` of a session and its messages, every column in the table's order
    (as the migrations leave it), for a runtime in another process to insert."""
    out: list[tuple[str, list[Any]]] = [
        ("sessions", [session, None, "Later", 0, 0, 0, 0.0, T0 + 99, T0 + 90, None, None])
    ]
    for n, (mid, role, parts) in enumerate(messages):
        t = T0 + 100 + n
        model = "MiniMax-M2" if role == "assistant" else None
        provider = "minimax" if model else None
        out.append(
            ("messages", [mid, session, role, go_json(parts), model, t, t, None, provider, 0])
        )
    return out


USER_ID = "0b6f5a2e-3c1d-4e8f-9a7b-2d4c6e8f0a13"
LEAKY_ID = "1c7e6b3f-4d2e-4f9a-8b1c-3e5d7f9a1b24"
ORPHAN_ID = "3e9a8d5b-6f4a-4b1c-8d3e-5a7f9b1c3d46"
CALL = "call_0f1e2d3c4b5a69788796a5b4"

LEAKY: list[Message] = [
    (
        USER_ID,
        "user",
        [text("Why is the cart total 19.999999? (no <think> blocks, please)"), finish("stop", 0)],
    ),
    (
        LEAKY_ID,
        "assistant",
        [
            text(
                "<think>The total is summed in floats; 0.1 + 0.2 drifts. Read cart.go "
                "first.</think>\n\nThe total is summed as floats. Let me read cart.go."
            ),
            tool_call(CALL, "view", {"file_path": "/home/ana/src/shop/cart.go"}),
            finish("tool_use", T0 + 12),
        ],
    ),
    (
        "2d8f7c4a-5e3f-4a0b-9c2d-4f6e8a0b2c35",
        "tool",
        [
            tool_result(
                CALL,
                "view",
                "<file>\n     1|// Sum adds prices. <think>not a leak: tool output</think>\n"
                "     2|func Sum(p []float64) float64 {\n</file>",
            ),
            finish("stop", 0),
        ],
    ),
    (
        ORPHAN_ID,
        "assistant",
        [
            text(
                "Summing integer cents keeps the total exact.\n</think>\n\nFixed: the cart "
                "now sums integer cents, so 19.999999 shows as 20.00 & tests pass."
            ),
            finish("end_turn", T0 + 30),
        ],
    ),
    (
        "4fab9e6c-7a5b-4c2d-9e4f-6b8a0c2d4e57",
        "user",
        [text("Show me how to write a <think> tag in a prompt."), finish("stop", 0)],
    ),
    (
        "5abc0f7d-8b6c-4d3e-8f5a-7c9b1d3e5f68",
        "assistant",
        [
            text("Write it literally, `<think>`, or in a block:\n\n```\n<think>plan</think>\n```"),
            finish("end_turn", T0 + 45),
        ],
    ),
]

CLEAN_SESSION = "7c1d2e3f-9a8b-4c7d-8e6f-5a4b3c2d1e0f"
CLEAN: list[Message] = [
    (
        "8d2e3f4a-0b9c-4d8e-9f7a-6b5c4d3e2f10",
        "user",
        [text("Rename Sum to Total (keep <think> out of it)."), finish("stop", 0)],
    ),
    (
        "9e3f4a5b-1c0d-4e9f-8a8b-7c6d5e4f3a21",
        "assistant",
        [
            reasoning("Rename the function and its callers.", signature="EqQBCkYIBxgCKkDsig"),
            text("Renamed `Sum` to `Total` in cart.go and its two callers."),
            finish("end_turn", T0 + 80),
        ],
    ),
]


def fixture(path: Path) -> Path:
    """fixtures/crush/shop/.crush/crush.db: the leaking MiniMax session and a clean Claude
    one (signed reasoning), in one store as Crush keeps a project's sessions."""
    build(path, LEAKY)
    return add_session(path, CLEAN, CLEAN_SESSION, model="claude-sonnet-4-5-20250929")
