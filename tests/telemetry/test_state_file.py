"""The incremental state file (#22 item 10): compact, read back exactly, and a state in
another layout is not reused, with a note saying so."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from tests.telemetry import sessions
from thinkfix.engine.inputs.walk import walk
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.telemetry.incremental import scan_increment, scan_incremental
from thinkfix.engine.telemetry.state import STATE_VERSION, State
from thinkfix.engine.telemetry.watch import WatchState

OPTIONS = ScanOptions()


def one_record_sessions(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"-home-u-proj{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:08x}-7d3e-4a21-9b5f-3c8e2d1f6a47.jsonl").write_bytes(
            sessions.claude_code(i, leak=i % 50 == 0)
        )


def test_state_is_compact(tmp_path: Path) -> None:
    """Layout 2 took ~680 bytes for a one-record session with a 45-character name."""
    root = tmp_path / "projects"
    one_record_sessions(root, 300)
    state = tmp_path / "state.json"
    scan_incremental([str(root)], OPTIONS, str(state))
    assert state.stat().st_size / 300 < 200
    assert len(State.load(str(state)).entries) == 300


def mixed_files(root: Path) -> None:
    """Files that exercise every part of an entry: findings, bad lines, a carried context,
    CRLF, a partial last line, a whole document, a compressed file, a skipped file."""
    root.mkdir()
    (root / "claude.jsonl").write_bytes(
        b"".join(
            sessions.claude_code(i, leak=i % 2 == 0, day=f"2026-03-0{1 + i % 3}") for i in range(6)
        )
        + b'{"type": "assistant", ,\n'
        + sessions.claude_code(9, leak=True)[:40]
    )
    (root / "rollout.jsonl").write_bytes(
        sessions.codex_meta()
        + sessions.codex_turn("gpt-oss-120b")
        + sessions.codex_message(leak=True)
    )
    (root / "crlf.jsonl").write_bytes(sessions.claude_code(20, leak=True).replace(b"\n", b"\r\n"))
    (root / "chat.json").write_bytes(sessions.gemini_document(2, 1))
    (root / "old.jsonl.gz").write_bytes(gzip.compress(sessions.claude_code(30, leak=True)))
    (root / "notes.jsonl").write_bytes(b'{"hello": "world"}\n')
    (root / "empty.jsonl").write_bytes(b"")


@pytest.mark.parametrize("options", [OPTIONS, ScanOptions(by_day=True)], ids=["plain", "by_day"])
def test_state_reads_back_what_was_saved(tmp_path: Path, options: ScanOptions) -> None:
    root = tmp_path / "s"
    mixed_files(root)
    entries = {}
    for item in walk([str(root)], options.inputs):
        inc = scan_increment(item, None, options)
        if inc.entry is not None:
            entries[inc.path] = inc.entry
    assert len(entries) >= 6
    assert any(e.committed.findings for e in entries.values())
    assert any(e.committed.errors for e in entries.values())
    assert any(e.crlf for e in entries.values())
    assert any(e.ctx and e.ctx.get("model") for e in entries.values())
    path = str(tmp_path / "state.json")
    State(dict(entries)).save(path)
    back = State.load(path)
    assert back.note is None
    assert back.entries == entries
    watch = WatchState(State(dict(entries)))
    watch.totals.messages[("claude-code", "qwen3-32b")] = 7
    watch.save(path)
    again = WatchState.load(path)
    assert again.files.entries == entries and again.totals == watch.totals


def layout_2(path: str) -> bytes:
    """A state as the previous layout wrote it: one object per file."""
    return orjson.dumps(
        {
            "version": 2,
            "files": {
                path: {
                    "options": "d482e9b633ff85fe97cf4a74",
                    "dev": 1,
                    "ino": 2,
                    "size": 3,
                    "mtime_ns": 4,
                    "ctime_ns": 4,
                    "read_ns": 5,
                    "format": "claude-code",
                    "offset": 3,
                    "check": "00",
                    "resumable": True,
                    "lines": 1,
                    "ctx": None,
                    "crlf": False,
                    "committed": {"path": path, "findings": [], "errors": []},
                }
            },
        }
    )


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"version": 1, "files": {}}', "layout 1"),
        (None, "layout 2"),
        (b'{"version": 99}', "layout 99"),
        (b"not json", "cannot be read"),
        (
            b'{"version": 3, "options": [], "formats": [], "models": [], "dirs": {"/": {"a": [0]}}}',
            "damaged",
        ),
        (b'{"version": 3}', "damaged"),
    ],
)
def test_state_in_another_layout_is_not_reused_and_says_so(
    tmp_path: Path, content: bytes | None, says: str
) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(sessions.claude_code(0, leak=True))
    state = tmp_path / "state.json"
    state.write_bytes(layout_2(str(session)) if content is None else content)
    loaded = State.load(str(state))
    assert loaded.entries == {}
    assert loaded.note is not None and says in loaded.note and str(state) in loaded.note
    report, stats = scan_incremental([str(session)], OPTIONS, str(state))
    assert stats.full == 1 and stats.note == loaded.note
    assert report.summary.leaking_messages == 1
    assert orjson.loads(state.read_bytes())["version"] == STATE_VERSION
    assert State.load(str(state)).note is None
    assert WatchState.load(str(tmp_path / "missing.json")).files.note is None


def test_no_state_yet_is_no_note(tmp_path: Path) -> None:
    assert State.load(str(tmp_path / "none.json")) == State()
