"""`diff` and `repair` name the files they skipped as `scan` does (edges12).

A FIFO beside a leaking session was named by `thinkfix scan` (`thinkfix: skipped 1 file (not
a regular file: s/odd.jsonl)` on stderr, and in its JSON report's `skipped`) and by neither
`thinkfix diff` (text or JSON) nor `thinkfix repair` in any mode: the file was in no output.
Now each command says scan's very line on stderr, and diff's JSON report lists them in
`skipped` (a key present when something was skipped, so a run without keeps its schema).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.commands import invoke

pytestmark = [
    pytest.mark.usefixtures("isolated_cli"),
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here"),
]

LEAK = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "claude-code"
    / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
)
FIFO_LINE = "thinkfix: skipped 1 file (not a regular file: s/odd.jsonl)"
EVERY_REASON = (
    "thinkfix: skipped 3 files (empty: s/empty.jsonl; not a known session format: "
    "s/other.jsonl; not a regular file: s/odd.jsonl)"
)
#: The commands that read a folder as scan does (`repair --in-place` last: it rewrites).
COMMANDS = {
    "scan": ["scan", "--output-format", "concise"],
    "diff": ["diff"],
    "diff-json": ["diff", "--output-format", "json"],
    "repair-dry-run": ["repair", "--dry-run"],
    "repair-check": ["repair", "--check"],
    "repair-diff": ["repair", "--diff"],
    "repair-out": ["repair", "--out", "out"],
    "repair-in-place": ["repair", "--in-place", "--include-active"],
}


def _folder(*, every_reason: bool = False) -> Path:
    folder = Path("s")
    folder.mkdir()
    shutil.copy(LEAK, folder / "leak.jsonl")
    os.mkfifo(folder / "odd.jsonl")
    if every_reason:
        (folder / "empty.jsonl").write_bytes(b"")
        (folder / "other.jsonl").write_text('{"a": 1}\n')
    return folder


def _skipped_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("thinkfix: skipped")]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_names_a_skipped_fifo_on_stderr(command: str) -> None:
    _folder()
    result = invoke(*COMMANDS[command], "s")
    assert result.exit_code in (0, 1), result.stderr  # a skip is no error
    assert _skipped_lines(result.stderr) == [FIFO_LINE]
    assert "odd.jsonl" not in result.stdout or command == "diff-json"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_skip_reason_is_worded_as_scan_words_it(command: str) -> None:
    _folder(every_reason=True)
    result = invoke(*COMMANDS[command], "s")
    assert _skipped_lines(result.stderr) == [EVERY_REASON]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_quiet_keeps_the_skipped_line_back_as_scan_does(command: str) -> None:
    _folder()
    result = invoke(*COMMANDS[command], "--quiet", "s")
    assert _skipped_lines(result.stderr) == []


def test_diff_json_lists_what_scan_json_lists_as_skipped() -> None:
    _folder(every_reason=True)
    scanned = json.loads(invoke("scan", "--output-format", "json", "s").stdout)
    diffed = json.loads(invoke("diff", "--output-format", "json", "s").stdout)
    assert diffed["skipped"] == scanned["skipped"]
    assert [s["path"] for s in diffed["skipped"]] == [
        "s/empty.jsonl",
        "s/odd.jsonl",
        "s/other.jsonl",
    ]
    assert diffed["skipped"][1] == {"path": "s/odd.jsonl", "reason": "not a regular file"}


def test_diff_json_without_a_skipped_file_keeps_its_keys() -> None:
    Path("s").mkdir()
    shutil.copy(LEAK, "s/leak.jsonl")
    report = json.loads(invoke("diff", "--output-format", "json", "s").stdout)
    assert "skipped" not in report
    assert "errors" in report
