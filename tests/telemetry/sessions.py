"""Session lines in the shapes the runtimes write them (field for field as in fixtures/),
for the telemetry tests: leaking and clean assistant messages, user turns, headers."""

from __future__ import annotations

from typing import Any

import orjson

LEAK = "<think>the user wants a list, so I will reason first</think>Here is the list."
CLEAN = "Here is the list."


def claude_code(
    n: int,
    *,
    leak: bool,
    model: str = "qwen3-32b",
    role: str = "assistant",
    day: str = "2026-03-02",
    text: str | None = None,
) -> bytes:
    """One Claude Code transcript line (`text` instead of the leaking or clean answer)."""
    uuid = f"5a0c{n:04x}-7d3e-4a21-9b5f-3c8e2d1f6a47"
    if text is None:
        text = LEAK if leak else CLEAN
    message: dict[str, Any] = (
        {
            "id": f"msg_{n:08d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        if role == "assistant"
        else {"role": "user", "content": "list the files"}
    )
    return (
        orjson.dumps(
            {
                "parentUuid": None,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/home/u/proj",
                "sessionId": "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48",
                "version": "1.0.98",
                "gitBranch": "main",
                "message": message,
                "type": role,
                "uuid": uuid,
                "timestamp": f"{day}T10:21:{n % 60:02d}.000Z",
            }
        )
        + b"\n"
    )


def codex_meta(model_provider: str = "openrouter") -> bytes:
    return (
        orjson.dumps(
            {
                "timestamp": "2026-03-02T10:21:07.000Z",
                "type": "session_meta",
                "payload": {
                    "id": "0195a0c4-7d3e-7a21-9b5f-3c8e2d1f6a47",
                    "timestamp": "2026-03-02T10:21:07.000Z",
                    "cwd": "/home/u/proj",
                    "originator": "codex_cli_rs",
                    "cli_version": "0.46.0",
                    "model_provider": model_provider,
                },
            }
        )
        + b"\n"
    )


def codex_turn(model: str, day: str = "2026-03-02") -> bytes:
    return (
        orjson.dumps(
            {
                "timestamp": f"{day}T10:22:00.000Z",
                "type": "turn_context",
                "payload": {
                    "cwd": "/home/u/proj",
                    "approval_policy": "on-request",
                    "sandbox_policy": {"mode": "workspace-write"},
                    "model": model,
                    "summary": "auto",
                },
            }
        )
        + b"\n"
    )


def codex_reasoning(text: str) -> bytes:
    return (
        orjson.dumps(
            {
                "timestamp": "2026-03-02T10:22:01.000Z",
                "type": "response_item",
                "payload": {
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": text}],
                    "encrypted_content": None,
                },
            }
        )
        + b"\n"
    )


def codex_message(*, leak: bool, role: str = "assistant", day: str = "2026-03-02") -> bytes:
    kind = "output_text" if role == "assistant" else "input_text"
    return (
        orjson.dumps(
            {
                "timestamp": f"{day}T10:22:02.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": role,
                    "content": [{"type": kind, "text": LEAK if leak else CLEAN}],
                },
            }
        )
        + b"\n"
    )


def gemini_document(leaks: int, cleans: int) -> bytes:
    """A Gemini CLI chat file (pretty-printed JSON, 2-space indentation)."""
    messages: list[dict[str, Any]] = [
        {
            "id": "m0",
            "timestamp": "2026-02-03T10:15:00.000Z",
            "type": "user",
            "content": "list the files",
        }
    ]
    for i in range(leaks + cleans):
        messages.append(
            {
                "id": f"m{i + 1}",
                "timestamp": "2026-02-03T10:15:01.000Z",
                "type": "gemini",
                "content": LEAK if i < leaks else CLEAN,
                "thoughts": [],
                "tokens": {"input": 10, "output": 5},
                "model": "gemini-2.5-pro",
            }
        )
    return (
        orjson.dumps(
            {
                "sessionId": "4f2a9c1e-0000-4000-8000-000000000001",
                "projectHash": "4f2a9c1e",
                "startTime": "2026-02-03T10:15:00.000Z",
                "lastUpdated": "2026-02-03T10:16:00.000Z",
                "messages": messages,
            },
            option=orjson.OPT_INDENT_2,
        )
        + b"\n"
    )
