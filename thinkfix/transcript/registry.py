"""One transcript adapter per session format, keyed by the format's id."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from thinkfix.formats.base import Record
from thinkfix.transcript import (
    anthropic,
    claude_code,
    claw_code,
    codex,
    gemini_cli,
    openai_chat,
    pi,
)
from thinkfix.transcript.model import Turn

#: Reads one record as the turns it holds; records of kinds it does not know yield nothing.
Adapter = Callable[[Record], Iterator[Turn]]

ADAPTERS: dict[str, Adapter] = {
    "claude-code": claude_code.turns,
    "codex": codex.turns,
    "pi": pi.turns,
    "claw-code": claw_code.turns,
    "openai-chat": openai_chat.turns,
    "anthropic": anthropic.turns,
    "gemini-cli": gemini_cli.turns,
}
