"""The explicit list of supported formats, and detection across them."""

from __future__ import annotations

import os

from thinkfix.formats.anthropic import Anthropic
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.claude_code import ClaudeCode
from thinkfix.formats.claw_code import ClawCode
from thinkfix.formats.cline import Cline, RooCode
from thinkfix.formats.codex import Codex
from thinkfix.formats.detection import read_head
from thinkfix.formats.gemini_cli import GeminiCli
from thinkfix.formats.hermes import Hermes
from thinkfix.formats.openai_chat import OpenAIChat
from thinkfix.formats.opencode import OpenCode
from thinkfix.formats.pi import Pi
from thinkfix.io.compression import open_read

#: Minimum confidence for `detect` to claim a file.
THRESHOLD = 0.5
#: The most any detector says: a format that says it is certain, and `detect` asks no further
#: (ties go to registry order anyway), so a Claude Code file costs one detector, not eleven.
CERTAIN = 0.95

FORMATS: dict[str, SessionFormat] = {
    f.id: f for f in (ClaudeCode(), Codex(), Pi(), ClawCode(), OpenAIChat(), Anthropic(),
                      GeminiCli(), Hermes(), Cline(), RooCode(), OpenCode())
}


class UnknownFormatError(ValueError):
    """No format claims a file (or a format name is not one of ours)."""

    def __init__(self, path: str, message: str = "not a known session format") -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


def names() -> list[str]:
    """Format ids, in registry order."""
    return list(FORMATS)


def get(name: str) -> SessionFormat:
    """The format with this id; UnknownFormatError listing the valid ids otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormatError(name, "no such format; known formats: "
                                 + ", ".join(FORMATS)) from None


def confidence(fmt: SessionFormat, head: bytes, path: str = "") -> float:
    """`fmt.detect`, where a detector that raises on odd field types claims nothing."""
    try:
        return fmt.detect(head, path)
    except Exception:  # noqa: BLE001 - a head of odd records is no reason to crash a run
        return 0.0


def detect(head: bytes, path: str = "") -> tuple[SessionFormat, float] | None:
    """The most confident format above THRESHOLD (registry order breaks ties), or None."""
    best: tuple[SessionFormat, float] | None = None
    for fmt in FORMATS.values():
        score = confidence(fmt, head, path)
        if score >= THRESHOLD and (best is None or score > best[1]):
            best = (fmt, score)
            if score >= CERTAIN:
                break
    return best


def detect_or_raise(head: bytes, path: str = "") -> SessionFormat:
    """Like `detect`, but an UnknownFormatError naming the file when nothing claims it."""
    found = detect(head, path)
    if found is None:
        raise UnknownFormatError(os.fspath(path) or "<input>")
    return found[0]


def detect_file(path: str) -> SessionFormat:
    """Detect the format of a file on disk (decompressing .gz/.zst transparently)."""
    with open_read(path) as fp:
        return detect_or_raise(read_head(fp), path)
