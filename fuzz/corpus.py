"""The seed corpus: the fixture sessions, and the inputs that broke thinkfix (issue 11)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
SEEDS = HERE / "seeds"

#: Fixture folder per format target (the CLI target takes them all).
FOLDERS = {
    "claude-code": ["claude-code"],
    "codex": ["codex"],
    "pi": ["pi", "openclaw"],
    "claw-code": ["claw-code"],
    "openai-chat": ["openai-chat"],
    "anthropic": ["anthropic"],
    "gemini-cli": ["gemini-cli"],
}


def seed_files(target: str) -> list[Path]:
    """A format's fixtures (every fixture for the CLI target), then the crash sites."""
    name = target.removeprefix("format-")
    folders = FOLDERS.get(name) or sorted(f for fs in FOLDERS.values() for f in fs)
    files = [
        p
        for folder in folders
        if (FIXTURES / folder).is_dir()
        for p in sorted((FIXTURES / folder).rglob("*"))
        if p.is_file()
    ]
    return files + sorted(SEEDS.glob("*"))
