"""The explicit list of supported formats, and detection across them."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, MutableMapping

from thinkfix.formats.base import SessionFormat
from thinkfix.formats.detection import read_head
from thinkfix.io.compression import open_read

#: Minimum confidence for `detect` to claim a file.
THRESHOLD = 0.5
#: The most any detector says: a format that says it is certain, and `detect` asks no further
#: (ties go to registry order anyway), so a Claude Code file costs one detector, not every one.
CERTAIN = 0.95

#: Every format, in detection order: id -> (module, class). tests/formats/test_registry.py
#: checks each class's `id` is its key.
_WHERE: dict[str, tuple[str, str]] = {
    "claude-code": ("claude_code", "ClaudeCode"),
    "codex": ("codex", "Codex"),
    "pi": ("pi", "Pi"),
    "claw-code": ("claw_code", "ClawCode"),
    "openai-chat": ("openai_chat", "OpenAIChat"),
    "anthropic": ("anthropic", "Anthropic"),
    "gemini-cli": ("gemini_cli", "GeminiCli"),
    "hermes": ("hermes", "Hermes"),
    "cline": ("cline", "Cline"),
    "roo-code": ("cline", "RooCode"),
    "kilo-code": ("cline", "KiloCode"),
    "continue": ("continue_dev", "Continue"),
    "copilot-chat": ("copilot_chat", "CopilotChat"),
    # Kilo CLI's store is OpenCode's under Kilo's names: asked first, it claims only those
    "kilo": ("opencode", "KiloCli"),
    "opencode": ("opencode", "OpenCode"),
    # Goose's store is claimed by its tables (sessions.db is a generic name), its legacy
    # JSONL by its metadata line or its camelCase item tags
    "goose": ("goose", "Goose"),
    "crush": ("crush", "Crush"),
    # Qwen Code wears Claude Code's envelope around a Gemini `Content`: claude-code scores
    # its files below certain (no conversation entry), so this detector still gets them
    "qwen-code": ("qwen_code", "QwenCode"),
    "kimi-cli": ("kimi_cli", "KimiCli"),
    "kimi-wire": ("kimi_wire", "KimiWire"),
    "copilot-cli": ("copilot_cli", "CopilotCli"),
    "factory-droid": ("factory_droid", "FactoryDroid"),
    "zed": ("zed", "Zed"),
    # SQLite files with a cursorDiskKV table only: asked last, it answers others at once
    "cursor": ("cursor", "Cursor"),
    "aider": ("aider", "Aider"),
}


class _Formats(MutableMapping[str, SessionFormat]):
    """The format objects by id, each module imported the first time its format is asked
    for: detection stops at the first certain format, so a pre-commit hook's scan of one
    Claude Code file loads one format module, not all of them (#13 start-up). Tests may add a
    format of their own."""

    def __init__(self) -> None:
        self._order: list[str] = list(_WHERE)
        self._made: dict[str, SessionFormat] = {}

    def __getitem__(self, name: str) -> SessionFormat:
        made = self._made.get(name)
        if made is None:
            if name not in self._order:
                raise KeyError(name)
            module, cls = _WHERE[name]
            made = getattr(importlib.import_module(f"thinkfix.formats.{module}"), cls)()
            self._made[name] = made
        return made

    def __setitem__(self, name: str, fmt: SessionFormat) -> None:
        if name not in self._order:
            self._order.append(name)
        self._made[name] = fmt

    def __delitem__(self, name: str) -> None:
        self._order.remove(name)
        self._made.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._order


FORMATS: MutableMapping[str, SessionFormat] = _Formats()


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
        raise UnknownFormatError(
            name, "no such format; known formats: " + ", ".join(FORMATS)
        ) from None


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
