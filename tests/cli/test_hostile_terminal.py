"""A planted session cannot clear the screen, retitle the window or fake a link while an
auditor reads it with scan, diff or show (issue 14 #2)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from thinkfix.cli import main

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    entry = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "assistant",
        "uuid": "a1",
        "sessionId": "s" + HOSTILE,
        "timestamp": "2026-03-01T10:00:00.000Z",
        "message": {
            "id": "msg_a1",
            "type": "message",
            "role": "assistant",
            "model": "evil" + HOSTILE,
            "content": [{"type": "text", "text": f"<think>plan{HOSTILE}</think>Answer {HOSTILE}"}],
        },
    }
    path = tmp_path / "planted.jsonl"
    path.write_bytes(orjson.dumps(entry) + b"\n")
    monkeypatch.chdir(tmp_path)
    return path


def _output(*args: str, color: bool = False) -> str:
    result = CliRunner().invoke(main, list(args), color=color)
    assert result.exit_code in (0, 1), result.output
    return result.output


@pytest.mark.parametrize(
    "args",
    [
        ("scan", "--isolated", "planted.jsonl"),
        ("scan", "--isolated", "--color", "planted.jsonl"),
        ("diff", "planted.jsonl"),
        ("diff", "--color", "planted.jsonl"),
        ("show", "--no-pager", "--thinking", "expanded", "planted.jsonl"),
        ("show", "--no-pager", "--thinking", "delimited", "planted.jsonl"),
        ("show", "--no-pager", "--normalized", "planted.jsonl"),
    ],
    ids=" ".join,
)
def test_terminal_renderers_show_escapes_instead_of_sending_them(
    planted: Path, args: tuple[str, ...]
) -> None:
    if "--color" in args and "--color" not in _help(args[0]):
        pytest.skip(f"{args[0]} has no --color")
    out = _output(*args, color="--color" in args)
    assert "␛]0;pwned␇" in out or "␛[2J" in out
    # Colour, if any, is the program's own SGR styling; nothing the session planted.
    assert "\x1b]" not in out and "\x1b[2J" not in out and "\x07" not in out


def _help(command: str) -> str:
    return CliRunner().invoke(main, [command, "--help"]).output
