"""Build Goose session stores for tests, with Goose's own schema (tests/data/goose_schema.sql)
and its row shapes: `content_json` and `metadata_json` as `serde_json::to_string` writes them
(compact, fields in struct order, non-ASCII raw), `created_timestamp` in seconds.

`python -m tests.formats.goose_db` writes the shipped fixture `fixtures/goose/sessions/sessions.db`.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "goose_schema.sql"
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "goose" / "sessions" / "sessions.db"

T0 = 1775700000  # seconds, as Goose's Message.created
VISIBLE = {"userVisible": True, "agentVisible": True}


def js(value: Any) -> str:
    """JSON as serde_json writes it: compact, non-ASCII as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "toolRequest",
        "id": call_id,
        "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments}},
    }


def result(call_id: str, output: str) -> dict[str, Any]:
    return {
        "type": "toolResponse",
        "id": call_id,
        "toolResult": {
            "status": "success",
            "value": {"content": [{"type": "text", "text": output}], "isError": False},
        },
    }


def thinking(value: str, signature: str = "") -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


Row = tuple[str, list[dict[str, Any]]]  # (role, content items)
Session = tuple[str, str, str, list[Row]]  # (id, provider, model, messages)

LEAKY: Session = (
    "20260409_1",
    "ollama",
    "qwen3:32b",
    [
        ("user", [text("Why is the cart total 19.999999? (no <think> blocks, please)")]),
        (
            "assistant",
            [
                text(
                    "<think>\nPrices are summed as floats; 0.1 + 0.2 drifts.\n</think>\n\n"
                    "The prices are floats. I will switch them to integer cents."
                ),
                call("call_1", "developer__text_editor", {"command": "view", "path": "cart.py"}),
            ],
        ),
        ("user", [result("call_1", "def total(items):  # <think> is not a tag here\n")]),
        (
            "assistant",
            [
                thinking("Cents avoid the float error."),
                text(
                    "Cents avoid the float error.\n</think>\n\nThe total is exact now; "
                    "a literal `<think>` in inline code is left alone."
                ),
            ],
        ),
        ("assistant", [text("<think>\nNothing else to say.\n</think>")]),
    ],
)

CLEAN: Session = (
    "20260410_1",
    "anthropic",
    "claude-sonnet-4-5",
    [
        ("user", [text("Say hi, and show me a <think> tag.")]),
        (
            "assistant",
            [
                thinking("A greeting.", "EuYBCkQYAiJAm3fQ"),
                text("Hi! Here is one in code: `<think>`."),
            ],
        ),
    ],
)


def rows(session: Session, start: int = 0) -> list[tuple[str, str, str, str, int, str]]:
    """`(message_id, session_id, role, content_json, created_timestamp, metadata_json)` rows,
    as `SessionStorage::add_message` inserts them."""
    sid, _, _, messages = session
    return [
        (f"msg_{sid}_{start + n}", sid, role, js(content), T0 + 10 * (start + n), js(VISIBLE))
        for n, (role, content) in enumerate(messages)
    ]


def insert_messages(db: sqlite3.Connection, session: Session, start: int = 0) -> None:
    db.executemany(
        "INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, "
        "metadata_json) VALUES (?, ?, ?, ?, ?, ?)",
        rows(session, start),
    )


def build(path: Path, sessions: list[Session] | None = None, *, wal: bool = False) -> Path:
    """A store at `path` holding `sessions` (both above when None); `wal`: in WAL mode, as
    Goose keeps it (`SessionStorage::create_pool`, `journal_mode(Wal)`)."""
    with closing(sqlite3.connect(path)) as db:
        if wal:
            db.execute("PRAGMA journal_mode = WAL")
        db.executescript(SCHEMA.read_text())
        for session in [LEAKY, CLEAN] if sessions is None else sessions:
            sid, provider, model, _ = session
            db.execute(
                "INSERT INTO sessions (id, name, working_dir, created_at, updated_at, "
                "extension_data, provider_name, model_config_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    sid,
                    "Cart total rounding",
                    "/home/ana/src/shop",
                    "2026-04-09 08:00:00",
                    "2026-04-09 08:05:00",
                    "{}",
                    provider,
                    js({"model_name": model, "context_limit": None, "temperature": None}),
                ),
            )
            insert_messages(db, session)
        # the default CURRENT_TIMESTAMP column, pinned so the fixture is the same every build
        db.execute("UPDATE messages SET timestamp = '2026-04-09 08:00:00'")
        db.commit()
    return path


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.unlink(missing_ok=True)
    build(FIXTURE)
    sys.stdout.write(f"wrote {FIXTURE}\n")
