"""A file in a runtime's own session folder is that runtime's, though detection cannot tell.

Before, a session whose head no format recognised was skipped as "not a known session
format" wherever it lay: a Claude Code session overwritten with garbage beside a clean one
scanned exit 0 (a listed skip), and a Codex rollout holding an assistant turn of a shape
Codex never writes was never read. In the folders where a runtime writes only its sessions
(`formats.places`) such a file is read as that runtime's: what it cannot read is an error
for the file (exit 2), and what it can (a Claude Code session of `file-history-snapshot`
lines alone) is read, not skipped.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.commands import invoke
from thinkfix.engine.inputs.files import UNKNOWN, Candidate, resolve
from thinkfix.formats import places, registry

pytestmark = pytest.mark.usefixtures("isolated_cli")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: A Claude Code session (with leaks: exit 1 when it is all there is to say).
SESSION = FIXTURES / "claude-code" / "7f3c2a91-5d4e-4b8a-9c1f-2e6d8a0b4c37.jsonl"
SESSION_ID = "0b6f7a1e-1111-2222-3333-444455556666"
#: Where each place's runtime writes a session (one real-shaped path per place).
PLACED = {
    "claude-code": f"home/.claude/projects/-home-u-proj/{SESSION_ID}.jsonl",
    "codex": "home/.codex/sessions/2025/01/02/rollout-2025-01-02T10-00-00-" + SESSION_ID + ".jsonl",
    "pi": f"home/.pi/agent/sessions/--home-u-proj--/2025-01-02T10-00-00-000Z_{SESSION_ID}.jsonl",
    "kimi-cli": "home/.kimi/sessions/0123abcd/" + SESSION_ID + "/context.jsonl",
    "kimi-wire": "home/.kimi/sessions/0123abcd/" + SESSION_ID + "/wire.jsonl",
    "qwen-code": f"home/.qwen/projects/-home-u-proj/chats/{SESSION_ID}.jsonl",
    "copilot-cli": f"home/.copilot/session-state/{SESSION_ID}/events.jsonl",
    "claw-code": "work/.claw/sessions/session-1759957816398-0.jsonl",
    "gemini-cli": "home/.gemini/tmp/0a1b2c3d/chats/session-2025-01-02T10-00-0b6f7a1e.json",
    "hermes": "home/.hermes/sessions/session_20250102_100000_0b6f7a.json",
    "continue": f"home/.continue/sessions/{SESSION_ID}.json",
    "factory-droid": f"home/.factory/sessions/-home-u-proj/{SESSION_ID}.jsonl",
    "copilot-chat": "home/.config/Code/User/workspaceStorage/9f1c/chatSessions/"
    + SESSION_ID
    + ".jsonl",
    "cline": "home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1759957816398/"
    "api_conversation_history.json",
    "roo-code": "home/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/"
    f"{SESSION_ID}/api_conversation_history.json",
    "kilo-code": "home/.config/Code/User/globalStorage/kilocode.kilo-code/tasks/"
    f"{SESSION_ID}/api_conversation_history.json",
    "crush": "work/.crush/crush.db",
    "zed": "home/.local/share/zed/threads/threads.db",
    "goose": "home/.local/share/goose/sessions/sessions.db",
    "opencode": "home/.local/share/opencode/opencode.db",
    "kilo": "home/.local/share/kilo/kilo.db",
}
#: More paths of the same runtimes: sub-agents, rotations, another home (OpenClaw's pi).
ALSO = {
    "home/.openclaw/agents/main/sessions/" + SESSION_ID + ".jsonl": "pi",
    f"home/.claude/projects/-p/{SESSION_ID}/subagents/agent-a1b2c3.jsonl": "claude-code",
    "home/.claude/projects/-p/agent-a1b2c3.jsonl": "claude-code",
    "home/.codex/archived_sessions/rollout-2025-01-02T10-00-00-x.jsonl": "codex",
    "home/.kimi/sessions/0123abcd/s1/context_2.jsonl": "kimi-cli",
    "home/.kimi/sessions/0123abcd/s1/subagents/a1/wire.jsonl": "kimi-wire",
    "work/.claw/sessions/session-1759957816398-0.rot-1759957816999.jsonl": "claw-code",
    "work/.claude/sessions/session-1759957816398.json": "claw-code",
    "home/.gemini/tmp/0a1b2c3d/chats/" + SESSION_ID + "/subagent-1.jsonl": "gemini-cli",
    "home/.config/Code/User/globalStorage/emptyWindowChatSessions/s1.json": "copilot-chat",
    "home/.cline/data/tasks/1759957816398/api_conversation_history.json": "cline",
    "home/.cline/data/tasks/1759957816398/ui_messages.json": "cline",
    "Library/Application Support/Zed/threads/threads.db": "zed",
    "home/.local/share/goose/sessions/20250102_1.jsonl": "goose",
    "AppData/Roaming/Block/goose/data/sessions/sessions.db": "goose",
    "home/.local/share/opencode/opencode-beta.db": "opencode",
    # OpenCode's (and Kilo's) older file store: sessions, messages and parts, each a JSON file
    "home/.local/share/opencode/storage/session/global/ses_1.json": "opencode",
    "home/.local/share/opencode/storage/message/ses_1/msg_1.json": "opencode",
    "home/.local/share/opencode/storage/part/msg_1/prt_1.json": "opencode",
    "home/.local/share/kilo/storage/part/msg_1/prt_1.json": "kilo",
}
#: Files that live in those folders and are no session: never claimed by their place.
BESIDE = [
    "home/.kimi/sessions/0123abcd/" + SESSION_ID + "/state.json",
    "home/.codex/session_index.jsonl",
    f"home/.claude/projects/-home-u-proj/{SESSION_ID}/tool-results/out.txt",
    "home/.claude/projects/-home-u-proj/notes.jsonl",
    "home/.qwen/projects/-home-u-proj/logs.json",
    f"home/.copilot/session-state/{SESSION_ID}/plan.md",
    "elsewhere/0b6f7a1e-1111-2222-3333-444455556666.jsonl",
    "home/.openclaw/agents/main/sessions/sessions.json",
    "home/.openclaw/agents/main/sessions/" + SESSION_ID + ".jsonl.deleted.2025-01-02T10:00:00Z",
    "home/.continue/sessions/sessions.json",
    "home/.gemini/tmp/0a1b2c3d/logs.json",
    "home/.hermes/state.db",
    "home/.factory/sessions/-home-u-proj/" + SESSION_ID + ".settings.json",
    "home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1/task_metadata.json",
    "home/.config/Code/User/workspaceStorage/9f1c/state.vscdb",
    "elsewhere/threads.db",
    "elsewhere/sessions.db",
    "work/notes/crush.db",
    "home/.config/Cursor/User/globalStorage/state.vscdb",
    "home/.local/share/opencode/storage/session_diff/ses_1.json",
    "home/.local/share/opencode/storage/project/global.json",
    "home/.local/share/opencode/storage/todo/ses_1.json",
    "home/.local/share/opencode/storage/migration",
    # any Markdown reads as an Aider history: its name alone would count a look-alike clean
    "work/.aider.chat.history.md",
]


def _write(rel: str, data: bytes) -> Path:
    path = Path(rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _report(*args: str) -> tuple[int, dict[str, object]]:
    result = invoke("scan", "--output-format", "json", *args)
    return result.exit_code, json.loads(result.stdout)


def test_every_place_names_a_registered_format() -> None:
    assert {place.format for place in places.PLACES} <= set(registry.names())
    assert {place.format for place in places.PLACES} == set(PLACED)


@pytest.mark.parametrize("fmt", sorted(PLACED))
def test_a_runtimes_session_path_is_claimed_by_its_place(fmt: str) -> None:
    for path in (PLACED[fmt], f"/abs/{PLACED[fmt]}.zst", f"file:///x/{PLACED[fmt]}.gz"):
        place = places.claim(path)
        assert place is not None and place.format == fmt, path


@pytest.mark.parametrize(("path", "fmt"), sorted(ALSO.items()))
def test_the_runtimes_other_session_paths_are_claimed_too(path: str, fmt: str) -> None:
    place = places.claim(path)
    assert place is not None and place.format == fmt


@pytest.mark.parametrize("path", BESIDE)
def test_what_else_lives_there_is_not_claimed(path: str) -> None:
    assert places.claim(path) is None


def test_garbage_in_a_claude_code_project_folder_is_an_error_not_a_skip() -> None:
    folder = Path("home/.claude/projects/-home-u-proj")
    folder.mkdir(parents=True)
    shutil.copy(SESSION, folder / SESSION.name)
    _write(PLACED["claude-code"], b"\x8b\x00\xff garbage \xfe\n" * 3)
    code, report = _report("home")
    assert code == 2
    assert "skipped" not in report or not report["skipped"]
    errors = report["errors"]
    assert isinstance(errors, list) and errors
    assert {e["path"] for e in errors} == {PLACED["claude-code"]}


def test_a_claude_code_session_of_snapshots_alone_is_read_not_skipped() -> None:
    snapshot = {
        "type": "file-history-snapshot",
        "messageId": SESSION_ID,
        "snapshot": {
            "messageId": SESSION_ID,
            "trackedFileBackups": {},
            "timestamp": "2025-10-01T10:00:00.000Z",
        },
        "isSnapshotUpdate": False,
    }
    _write(PLACED["claude-code"], json.dumps(snapshot).encode() + b"\n")
    code, report = _report("home")
    assert code == 0
    assert report["summary"]["files"] == 1  # type: ignore[index]
    assert not report.get("skipped")


def test_a_codex_rollout_with_a_turn_codex_never_writes_is_an_error() -> None:
    turn = {"type": "reply", "role": "assistant", "parts": [{"text": "<think>plan</think>done"}]}
    _write(PLACED["codex"], json.dumps(turn).encode() + b"\n")
    code, report = _report("home")
    assert code == 2
    assert [e["kind"] for e in report["errors"]] == ["bad_shape"]  # type: ignore[union-attr]


def _other_database(path: Path) -> None:
    """A SQLite database of none of the store formats' schemas (a migration renamed its
    tables, or another program's file under the store's name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE messages (id TEXT PRIMARY KEY, role TEXT, body TEXT)")
        db.execute("INSERT INTO messages VALUES ('m1', 'assistant', '<think>plan</think>ok')")
        db.commit()


@pytest.mark.parametrize("fmt", ["crush", "zed", "goose", "opencode", "kilo"])
def test_a_store_of_another_schema_in_its_place_is_an_error_not_a_skip(fmt: str) -> None:
    """Before: a readable database at a store's path without the store's tables was "not a
    known session format", a listed skip, and the scan beside a clean session exited 0."""
    snapshot = {"type": "summary", "summary": "s", "leafUuid": SESSION_ID}
    _write(PLACED["claude-code"], json.dumps(snapshot).encode() + b"\n")
    _other_database(Path(PLACED[fmt]))
    code, report = _report(*sorted({"home", PLACED[fmt].split("/")[0]}))
    assert code == 2
    assert not report.get("skipped")
    (error,) = report["errors"]  # type: ignore[misc]
    assert error["path"] == PLACED[fmt]
    assert "not the store's schema thinkfix reads (no such" in error["message"]


def test_a_database_of_a_store_name_elsewhere_stays_a_listed_skip() -> None:
    _other_database(Path("elsewhere/threads.db"))
    _write(PLACED["claude-code"], SESSION.read_bytes())
    code, report = _report("home", "elsewhere")
    assert code == 1
    assert report["errors"] == []
    assert [s["path"] for s in report["skipped"]] == ["elsewhere/threads.db"]  # type: ignore[union-attr]


def test_the_same_bytes_outside_any_place_stay_a_listed_skip() -> None:
    shutil.copy(SESSION, Path(SESSION.name))
    _write("elsewhere/" + SESSION_ID + ".jsonl", b"\x8b\x00\xff garbage \xfe\n")
    code, report = _report(".", "--exclude", "home")
    assert code == 1  # the session's leaks; no input error
    assert report["errors"] == []
    assert [s["reason"] for s in report["skipped"]] == [UNKNOWN]  # type: ignore[union-attr]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fmt=st.sampled_from(sorted(PLACED)), data=st.binary(min_size=1, max_size=300))
def test_a_placed_file_is_never_an_unknown_skip(tmp_path: Path, fmt: str, data: bytes) -> None:
    """Whatever bytes lie at a runtime's session path, resolve reads them as some format (the
    one detection finds, else the place's) or says why it cannot: never "not a known format"."""
    path = tmp_path / PLACED[fmt]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    found = resolve(Candidate(str(path), str(path), explicit=False))
    assert found.skipped != UNKNOWN
    if found.skipped is None and found.error is None and registry.detect(data) is None:
        assert found.format == fmt


def test_importing_places_compiles_no_pattern() -> None:
    """Every scan imports the places (`engine.inputs.files`); their patterns compiled at
    import cost 2 ms of each run's start-up, for the rare file detection cannot tell."""
    code = (
        "from thinkfix.formats import places\n"
        "assert all(p._compiled is None for p in places.PLACES)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("runtime", ["opencode", "kilo"])
def test_a_file_store_part_cut_short_or_of_another_shape_is_an_error_not_a_skip(
    runtime: str,
) -> None:
    """Before: a part file cut short (OpenCode killed mid-write) or a message file of a shape
    the format does not know, in OpenCode's (or Kilo's) own file store, was "not a known
    session format", a listed skip beside the store's sessions, which were counted clean."""
    storage = Path(f"home/.local/share/{runtime}/storage")
    shutil.copytree(FIXTURES / "opencode" / "storage", storage)
    cut = storage / "part" / "msg_1" / "prt_1.json"
    cut.parent.mkdir(parents=True)
    cut.write_bytes(
        b'{"id": "prt_1", "sessionID": "ses_1", "messageID": "msg_1", "type": "text", "text": "<think>plan'
    )
    other = storage / "message" / "ses_1" / "msg_1.json"
    other.parent.mkdir(parents=True)
    other.write_bytes(b'{"id": "msg_1", "sessionID": "ses_1", "role": "assistant"}')
    code, report = _report("home")
    assert code == 2
    assert not report.get("skipped")
    errors = report["errors"]
    assert isinstance(errors, list)
    assert sorted(e["path"] for e in errors) == [str(other), str(cut)]
    assert report["summary"]["leaking_messages"] > 0  # type: ignore[index]
