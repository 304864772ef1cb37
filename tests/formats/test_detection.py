"""Detection by content: a folder of mixed files, archive suffixes, truncated heads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.formats.support import DATA, FIXTURES, scores, session_files
from thinkfix.formats import registry
from thinkfix.formats.detection import HEAD_BYTES, base_name, extension

EXPECTED = {
    "claude-code": "claude-code",
    "codex": "codex",
    "pi": "pi",
    "openclaw": "pi",
    "claw-code": "claw-code",
    "openai-chat": "openai-chat",
    "anthropic": "anthropic",
    "gemini-cli": "gemini-cli",
    "hermes": "hermes",
    "cline": "cline",
    "roo-code": "roo-code",
    "kilo-code": "kilo-code",
    "continue": "continue",
    "copilot-chat": "copilot-chat",
    "opencode": "opencode",
    "kilo": "kilo",
    "goose": "goose",
    "crush": "crush",
    "qwen-code": "qwen-code",
    "kimi-cli": "kimi-cli",
    "kimi-wire": "kimi-wire",
    "copilot-cli": "copilot-cli",
    "factory-droid": "factory-droid",
    "cursor": "cursor",
    "zed": "zed",
    "aider": "aider",
}
#: Roo Code is Cline's fork, Kilo Code Roo's: when neither the storage path nor one of Roo's
#: own keys says which, the content reads as Cline's (Kilo Code has no key of its own).
ROO_KEYS = (b'"isSummary"', b'"condenseId"')
#: Cline's UI log and task metadata are told by their names beside the history.
COMPANIONS = {"ui_messages.json", "task_metadata.json"}
#: Kilo CLI's store is OpenCode's, told apart only by where it lies: renamed, it is OpenCode's.
BY_PATH = {"kilo": "opencode"}
DATA_EXPECTED = {
    "claude_code_bad_lines.jsonl": "claude-code",
    "claude_code_go_escaped.jsonl": "claude-code",
    "openai_chat_python_ascii.jsonl": "openai-chat",
    "cline_api_conversation_history.json": "cline",
    "pi_assistant_message.json": "pi",
}


@pytest.mark.parametrize("path", session_files(FIXTURES), ids=lambda p: p.name[:40])
def test_detection_fixtures_by_content(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    fmt, score = registry.detect(data[:HEAD_BYTES], str(path))
    runtime = path.relative_to(FIXTURES).parts[0]
    assert fmt.id == EXPECTED[runtime]
    # the name is not what decided it (a database is told by its tables: a renamed copy)
    if path.name not in COMPANIONS:
        other = tmp_path / "renamed.bin"
        other.write_bytes(data)
        store = data.startswith(b"SQLite format 3\x00")
        renamed = registry.detect(data[:HEAD_BYTES], str(other) if store else "renamed.bin")
        told = runtime not in ("roo-code", "kilo-code", *BY_PATH) or (
            runtime == "roo-code" and any(k in data for k in ROO_KEYS)
        )
        untold = BY_PATH.get(runtime, "cline")
        assert renamed is not None and renamed[0].id == (fmt.id if told else untold)
    others = [
        v for k, v in scores(data[:HEAD_BYTES]).items() if k not in (fmt.id, BY_PATH.get(runtime))
    ]
    assert score > max(others)


def test_detection_data_files_are_all_listed() -> None:
    assert {p.name for p in session_files(DATA)} == set(DATA_EXPECTED)


@pytest.mark.parametrize("name", sorted(DATA_EXPECTED))
def test_detection_data_files(name: str) -> None:
    data = (DATA / name).read_bytes()
    assert registry.detect(data, name)[0].id == DATA_EXPECTED[name]


def test_detection_truncated_heads_of_large_documents() -> None:
    gemini = {
        "sessionId": "s",
        "projectHash": "p",
        "startTime": "t",
        "lastUpdated": "t",
        "messages": [
            {"id": str(i), "timestamp": "t", "type": "gemini", "content": "x" * 500}
            for i in range(300)
        ],
    }
    head = json.dumps(gemini, indent=2).encode()[:HEAD_BYTES]
    assert registry.detect(head, "session.json")[0].id == "gemini-cli"
    claw = {
        "messages": [
            {"blocks": [{"text": "y" * 500, "type": "text"}], "role": "assistant"}
            for _ in range(300)
        ],
        "version": 1,
    }
    head = json.dumps(claw, separators=(",", ":"), sort_keys=True).encode()[:HEAD_BYTES]
    assert registry.detect(head, "session.json")[0].id == "claw-code"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"plain text\n",
        b'{"a":1}\n{"b":2}\n',
        b"event: message_start\ndata: {}\n\n",
        b'{"id":"m","sessionID":"s","role":"assistant"}',
    ],
)
def test_detection_unclaimed_content(data: bytes) -> None:
    assert registry.detect(data, "x.jsonl") is None
    with pytest.raises(registry.UnknownFormatError, match="x.jsonl"):
        registry.detect_or_raise(data, "x.jsonl")


def test_detection_captured_streams_are_not_sessions() -> None:
    for path in sorted((FIXTURES / "streams").glob("*.sse")):
        assert registry.detect(path.read_bytes()[:HEAD_BYTES], str(path)) is None, path.name


@pytest.mark.parametrize(
    "name,base",
    [
        ("9c5e.jsonl.deleted.2026-03-24T19-52-10.004Z", "9c5e.jsonl"),
        ("9c5e.jsonl.reset.2026-03-24T19-52-10.004Z", "9c5e.jsonl"),
        ("rollout.jsonl.zst", "rollout.jsonl"),
        ("/a/b/session-1.json.gz", "session-1.json"),
    ],
)
def test_detection_name_hints_strip_archive_suffixes(name: str, base: str) -> None:
    assert base_name(name) == base
    assert extension(name) == "." + base.rsplit(".", 1)[1]


def test_detection_string_only_requests_are_openai_unless_anthropic_keys() -> None:
    messages = b'"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]'
    openai = b'{"model":"gpt-4o","max_tokens":64,' + messages + b"}"
    anthropic = (
        b'{"model":"claude-sonnet-4-5","max_tokens":64,"system":"Be brief.",' + messages + b"}"
    )
    assert registry.detect(openai, "log.json")[0].id == "openai-chat"
    assert registry.detect(anthropic, "log.json")[0].id == "anthropic"
