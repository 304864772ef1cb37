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

MIGRATIONS = Path(__file__).resolve().parents[1] / "data" / "crush_migrations"

SESSION = "9f3c2a1e-5b7d-4c8e-a2f1-6d0b3e9a7c45"
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


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


Message = tuple[str, str, list[dict[str, Any]]]  # id, role, parts


def build(path: Path, messages: list[Message], session: str = SESSION) -> Path:
    """A store at `path`, in WAL mode as Crush keeps it (`internal/db/connect.go` pragmas),
    holding one session with `messages` inserted as `CreateMessage` does (the insert
    trigger counts them into `sessions.message_count`)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        for up in migrations():
            db.executescript(up)
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
                    _js(parts),
                    "MiniMax-M2" if assistant else None,
                    "minimax" if assistant else None,
                    t,
                    t + 5,
                    t + 5 if assistant else None,
                ),
            )
        db.commit()
    return path
