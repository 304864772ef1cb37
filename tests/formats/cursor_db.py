"""Build Cursor `state.vscdb` stores for tests, in the shapes public readers document.

Values are written as Cursor (an Electron app) writes them: compact JSON text, one value per
key in `cursorDiskKV`; a composer lists its bubbles in `fullConversationHeadersOnly`.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "cursor_schema.sql"
T0 = 1766691308486

Bubble = dict[str, Any]


def js(value: Any) -> str:
    """Compact JSON with raw UTF-8, as JSON.stringify writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def user(bubble_id: str, text: str) -> Bubble:
    return {
        "_v": 3,
        "type": 1,
        "bubbleId": bubble_id,
        "text": text,
        "richText": "",
        "requestId": "r-" + bubble_id,
    }


def assistant(bubble_id: str, text: str, **extra: Any) -> Bubble:
    return {
        "_v": 3,
        "type": 2,
        "bubbleId": bubble_id,
        "text": text,
        "richText": "",
        "codeBlocks": [],
        "createdAt": "2025-12-25T19:35:21.759Z",
        **extra,
    }


def composer(composer_id: str, bubbles: list[Bubble], **extra: Any) -> dict[str, Any]:
    return {
        "_v": 10,
        "composerId": composer_id,
        "name": "Fix cart total rounding",
        "text": "",
        "richText": "",
        "fullConversationHeadersOnly": [
            {"bubbleId": b["bubbleId"], "type": b["type"]} for b in bubbles
        ],
        "conversationMap": {},
        "status": "completed",
        "createdAt": T0,
        "lastUpdatedAt": T0 + 60000,
        **extra,
    }


def rows(conversations: dict[str, list[Bubble]]) -> list[tuple[str, str]]:
    """`(key, value)` of every composer and bubble row."""
    out = []
    for cid, bubbles in conversations.items():
        out.append((f"composerData:{cid}", js(composer(cid, bubbles))))
        out.extend((f"bubbleId:{cid}:{b['bubbleId']}", js(b)) for b in bubbles)
    return out


def build(
    path: Path,
    conversations: dict[str, list[Bubble]],
    *,
    extra: list[tuple[str, Any]] = (),  # type: ignore[assignment]
    wal: bool = False,
) -> Path:
    """A store at `path` with these conversations (and `extra` raw rows)."""
    with closing(sqlite3.connect(path)) as db:
        if wal:
            db.execute("PRAGMA journal_mode = WAL")
        db.executescript(SCHEMA.read_text())
        db.execute(
            "INSERT INTO ItemTable VALUES (?, ?)",
            ("cursorAuth/cachedSignUpType", "Auth_0"),
        )
        db.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", [*rows(conversations), *extra])
        db.commit()
    return path


def value(path: Path, key: str) -> Any:
    """A row's value, parsed (None when there is no such row)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        row = db.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def all_rows(path: Path) -> list[tuple[str, Any]]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return db.execute("SELECT key, value FROM cursorDiskKV ORDER BY key").fetchall()


COMPOSER = "98251e54-8aed-4515-b2b4-08895453eedd"
LEAK = (
    "<think>\nThe total is summed as floats; integer cents fix it.\n</think>\n\n"
    "Store prices as integer cents; the total is then exact."
)
LEAKY = {
    COMPOSER: [
        user(
            "d0216c2d-1f3e-4a51-9a0c-5b8f2e7c1a01",
            "Why is the cart total 19.999999? (no <think> please)",
        ),
        assistant(
            "44a64021-7c2b-4e8d-8a5f-0e6d3b2a9c02", LEAK, modelInfo={"modelName": "deepseek-r1"}
        ),
        assistant(
            "5a1b2c3d-0000-4e8d-8a5f-0e6d3b2a9c03",
            "",
            toolFormerData={
                "name": "edit_file",
                "toolCallId": "toolu_01",
                "status": "completed",
                "rawArgs": js({"target_file": "src/cart.ts"}),
                "result": js({"diff": "+ cents"}),
            },
        ),
        assistant(
            "6b2c3d4e-1111-4e8d-8a5f-0e6d3b2a9c04", "Done: `<think>` tags in code stay as they are."
        ),
    ]
}
