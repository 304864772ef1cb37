"""Build Zed agent thread stores for tests, with Zed's own schema and blob shapes.

Threads are written as `ThreadsDatabase::save_thread_sync` writes them (crates/agent/src/db.rs):
the `DbThread` with `version` "0.3.0" as compact JSON, zstd level 3, `data_type` "zstd".
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import zstandard

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "zed_threads_schema.sql"
THREAD = "5b0c6e2a-7d1f-4a8e-9c3b-2f6d8e1a4b7c"
OTHER = "9e4d1c7b-3a2f-4e6d-8b1c-7f2a9d3e5c10"


def user(text: str, uid: str = "u1") -> dict[str, Any]:
    return {"User": {"id": uid, "content": [{"Text": text}]}}


def agent(*content: dict[str, Any], results: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "Agent": {
            "content": list(content),
            "tool_results": results or {},
            "reasoning_details": None,
        }
    }


def thread(title: str, messages: list[Any]) -> dict[str, Any]:
    return {
        "title": title,
        "messages": messages,
        "updated_at": "2026-04-09T10:00:00Z",
        "detailed_summary": None,
        "initial_project_snapshot": None,
        "cumulative_token_usage": {"input_tokens": 0, "output_tokens": 0},
        "request_token_usage": {},
        "model": {"provider": "anthropic", "model": "claude-sonnet-4-5-thinking-latest"},
        "profile": "write",
        "imported": False,
        "version": "0.3.0",
    }


LEAKY = thread(
    "Fix the flaky cart test",
    [
        user("Why does `test_cart_total` fail? It prints <think> in the log."),
        agent(
            {"Thinking": {"text": "Check the fixture first.", "signature": "c2ln"}},
            {
                "Text": "<think>The rounding mode differs on CI.</think>The total rounds half-even on CI."
            },
            {
                "ToolUse": {
                    "id": "toolu_1",
                    "name": "read_file",
                    "raw_input": "{}",
                    "input": {"path": "cart.py"},
                    "is_input_complete": True,
                    "thought_signature": None,
                }
            },
            results={
                "toolu_1": {
                    "tool_use_id": "toolu_1",
                    "tool_name": "read_file",
                    "is_error": False,
                    "content": {"Text": "x = '<think>' # a tag in code"},
                    "output": None,
                }
            },
        ),
        agent(
            {
                "Text": "Use `Decimal.quantize` with `ROUND_HALF_UP`; the tag `<think>` in code is fine."
            }
        ),
        "Resume",
    ],
)
CLEAN = thread(
    "Rename a module", [user("rename utils"), agent({"Text": "Renamed `utils` to `helpers`."})]
)


def blob(doc: dict[str, Any]) -> bytes:
    raw = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
    return zstandard.ZstdCompressor(level=3).compress(raw)


def build(path: Path, threads: list[tuple[str, dict[str, Any]]], *, plain: bool = False) -> Path:
    """A store at `path` holding `(id, thread)` rows; `plain`: `data_type` json, as older Zed."""
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA.read_text())
        for tid, doc in threads:
            data = json.dumps(doc).encode() if plain else blob(doc)
            db.execute(
                "INSERT INTO threads (id, parent_id, folder_paths, folder_paths_order, summary, "
                "updated_at, data_type, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    tid,
                    None,
                    "/home/ana/src/shop",
                    "0",
                    doc["title"],
                    doc["updated_at"],
                    "json" if plain else "zstd",
                    data,
                    doc["updated_at"],
                ),
            )
        db.commit()
    return path
