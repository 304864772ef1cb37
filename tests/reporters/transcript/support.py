"""The transcript tests' own session files (one or more per format) and a readable dump."""

from __future__ import annotations

import os
from pathlib import Path

from thinkfix.engine.scan.transcript import Transcript
from thinkfix.formats.turns import Part, Turn
from thinkfix.formats.values import fmt_path

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data" / "transcript"
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("THINKFIX_UPDATE_GOLDEN") == "1"

#: Session file -> the format it is in.
CASES = {
    "claude_code.jsonl": "claude-code",
    "codex.jsonl": "codex",
    "pi.jsonl": "pi",
    "claw_code.jsonl": "claw-code",
    "claw_code_legacy.json": "claw-code",
    "openai_chat.json": "openai-chat",
    "anthropic.jsonl": "anthropic",
    "gemini_cli.json": "gemini-cli",
    "hermes.json": "hermes",
    "cline_api_conversation_history.json": "cline",
    "roo_code_api_conversation_history.json": "roo-code",
    "kilo-code_api_conversation_history.json": "kilo-code",
    "continue.json": "continue",
    "copilot_chat.json": "copilot-chat",
    "copilot_chat.jsonl": "copilot-chat",
    "opencode.db": "opencode",
    "kilo.db": "kilo",
    "qwen_code.jsonl": "qwen-code",
    "kimi_cli_context.jsonl": "kimi-cli",
    "kimi_wire.jsonl": "kimi-wire",
    "copilot_cli_events.jsonl": "copilot-cli",
    "copilot_cli_legacy.json": "copilot-cli",
    "factory_droid.jsonl": "factory-droid",
    "goose.db": "goose",
    "goose_legacy.jsonl": "goose",
    "cursor_state.vscdb": "cursor",
    "zed_threads.db": "zed",
    "crush.db": "crush",
    "aider.chat.history.md": "aider",
}


def data(name: str) -> str:
    return str(DATA / name)


def _part(part: Part) -> str:
    flags = [name for name in ("signed", "redacted", "recovered", "error") if getattr(part, name)]
    out = part.kind.value + (f"[{','.join(flags)}]" if flags else "")
    if part.name:
        out += f" {part.name}"
    if part.call_id:
        out += f" #{part.call_id}"
    if part.path is not None:
        out += f" @{fmt_path(part.path)}"
    return f"{out} {part.text!r}"


def _turn(turn: Turn) -> str:
    fields = [
        ("model", turn.model),
        ("id", turn.message_id),
        ("note", turn.note),
        ("time", turn.timestamp),
        ("where", turn.where),
    ]
    head = " ".join(
        [turn.role.value, f"lines={turn.lines[0]}-{turn.lines[1]}"]
        + [f"{k}={v}" for k, v in fields if v]
    )
    return "\n".join([head] + ["  " + _part(p) for p in turn.parts])


def dump(transcript: Transcript) -> str:
    """One line per turn and per part: every field a test could care about, reviewable."""
    lines = [f"format={transcript.format_id}"] + [_turn(t) for t in transcript.turns]
    lines += [f"problem: {p}" for p in transcript.problems]
    return "\n".join(lines) + "\n"


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"no golden file {path}; run with THINKFIX_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8"), (
        f"{path} differs; review, then THINKFIX_UPDATE_GOLDEN=1"
    )
