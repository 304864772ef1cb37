"""Where a runtime writes nothing but its sessions: a file there is that runtime's, by its place.

Detection weighs a file's head, so a session whose head no format recognises (its first
lines cut or overwritten, a runtime's new record kinds, a Claude Code session holding only
`file-history-snapshot` lines) was skipped as "not a known session format": listed, exit 0,
its lines never read. In the folders below the runtime writes only its sessions, under
names of its own making, so such a file is read as that runtime's: what it cannot read is
an error for the file (a line that is no JSON, an assistant turn of another shape:
`formats.strangers`), never a skip. Detection still decides first; a place only speaks for
a file nothing claims. Each pattern cites where the runtime names its files.
"""

from __future__ import annotations

import os
import re

#: The compressions thinkfix reads (`io.compression`): an archived session keeps its place.
_COMPRESSED = r"(?:\.gz|\.zst|\.bz2|\.xz)?"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


class Place:
    """A runtime's folder of sessions: its format id, the path pattern, and the source (a
    plain class: a typing NamedTuple costs a scan's start-up, tests/cli/test_scan_startup.py;
    the pattern is compiled on first use, as only a file detection cannot tell needs it)."""

    __slots__ = ("_compiled", "_path", "format", "source")

    def __init__(self, fmt: str, path: str, source: str) -> None:
        self.format = fmt
        self.source = source
        self._path = path
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """Matches the end of a `/`-separated path in this place (compressed too)."""
        if self._compiled is None:
            self._compiled = re.compile(rf"(?:^|/){self._path}{_COMPRESSED}$")
        return self._compiled


def _place(fmt: str, path: str, source: str) -> Place:
    """A place whose pattern matches the end of a `/`-separated path."""
    return Place(fmt, path, source)


PLACES: tuple[Place, ...] = (
    _place(
        "claude-code",
        rf"\.claude/projects/[^/]+/(?:{_UUID}|agent-[^/]+|{_UUID}/subagents/agent-[^/]+)\.jsonl",
        "~/.claude/projects/<cwd slug>/<sessionId>.jsonl, sub-agents agent-<id>.jsonl there or "
        "in <sessionId>/subagents/ (claude-code-log-format JSONL_LOGGING.md; copilot-lens "
        "claude-code-sessions.md)",
    ),
    _place(
        "codex",
        r"(?:sessions/[0-9]{4}/[0-9]{2}/[0-9]{2}|archived_sessions)/rollout-[^/]+\.jsonl",
        "$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl and archived_sessions/ "
        "(openai/codex codex-rs/rollout/src/recorder.rs, list.rs)",
    ),
    _place(
        "pi",
        rf"\.pi/agent/sessions/[^/]+/[^/]+_{_UUID}\.jsonl",
        "~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl "
        "(badlogic/pi-mono packages/coding-agent/docs/session.md)",
    ),
    _place(
        "pi",
        rf"\.openclaw/agents/[^/]+/sessions/{_UUID}\.jsonl",
        "~/.openclaw/agents/<agentId>/sessions/<uuid>.jsonl; the soft-deleted and reset copies "
        "(<uuid>.jsonl.deleted.<ISO>) and sessions.json are not sessions (openclaw/openclaw "
        "src/config/paths.ts resolveStateDir)",
    ),
    _place(
        "claw-code",
        r"(?:\.claw/sessions/session-[0-9]+(?:-[0-9]+)?(?:\.rot-[0-9]+)?\.jsonl"
        r"|\.claude/sessions/session-[0-9]+\.json)",
        "<workspace>/.claw/sessions/session-<ms>-<n>.jsonl, rotated <stem>.rot-<ms>.jsonl; legacy "
        "<workspace>/.claude/sessions/session-<ms>.json (claw-code session storage)",
    ),
    _place(
        "gemini-cli",
        r"\.gemini/tmp/[^/]+/chats/(?:session-[^/]+|[^/]+/[^/]+)\.jsonl?",
        "~/.gemini/tmp/<projectHash>/chats/session-*.json(l), sub-agents chats/<parent id>/<id> "
        "(google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts)",
    ),
    _place(
        "hermes",
        r"\.hermes/sessions/session_[^/]+\.json",
        "~/.hermes/sessions/session_<session id>.json (NousResearch hermes-agent run_agent.py, "
        "AIAgent._save_session_log)",
    ),
    _place(
        "continue",
        rf"\.continue/sessions/{_UUID}\.json",
        "~/.continue/sessions/<id>.json beside the index sessions.json (continuedev/continue "
        "core/util/paths.ts getSessionFilePath)",
    ),
    _place(
        "kimi-cli",
        r"\.kimi/sessions/(?:[^/]+/)+context(?:_[0-9]+)?\.jsonl",
        "~/.kimi/sessions/<work dir md5>/<session id>/context.jsonl, rotated context_<n>.jsonl, "
        "subagents/<id>/context.jsonl (MoonshotAI/kimi-cli src/kimi_cli/session.py, "
        "utils/path.py next_available_rotation)",
    ),
    _place(
        "kimi-wire",
        r"\.kimi/sessions/(?:[^/]+/)+wire\.jsonl",
        "~/.kimi/sessions/<work dir md5>/<session id>/wire.jsonl "
        "(MoonshotAI/kimi-cli src/kimi_cli/wire/file.py)",
    ),
    _place(
        "qwen-code",
        r"\.qwen/projects/[^/]+/chats/[^/]+\.jsonl",
        "~/.qwen/projects/<cwd>/chats/<session id>.jsonl "
        "(QwenLM/qwen-code packages/core/src/config/storage.ts, ChatRecordingService)",
    ),
    _place(
        "factory-droid",
        r"\.factory/sessions/[^/]+/[^/]+\.jsonl",
        "~/.factory/sessions/<cwd slug>/<id>.jsonl; <id>.settings.json beside is no session "
        "(jazzyalex/agent-sessions' droid fixtures, the cass Factory connector)",
    ),
    _place(
        "copilot-chat",
        r"User/(?:workspaceStorage/[^/]+/chatSessions|globalStorage/"
        r"(?:emptyWindow|transferred)ChatSessions)/[^/]+\.jsonl?",
        "<user data>/User/workspaceStorage/<workspace>/chatSessions/<session>.json(l), "
        "globalStorage/{emptyWindow,transferred}ChatSessions/ (microsoft/vscode "
        "src/vs/workbench/contrib/chat/common/chatSessionStore.ts, ChatSessionStore)",
    ),
    _place(
        "cline",
        r"(?:saoudrizwan\.claude-dev|\.cline/data)/tasks/[^/]+/(?:api_conversation_history|ui_messages)\.json",
        "globalStorage/saoudrizwan.claude-dev/tasks/<id>/api_conversation_history.json and "
        "ui_messages.json, the CLI's ~/.cline/data/tasks (cline/cline src/core/storage/disk.ts, GlobalFileNames)",
    ),
    _place(
        "roo-code",
        r"rooveterinaryinc\.roo-cline/tasks/[^/]+/(?:api_conversation_history|ui_messages)\.json",
        "globalStorage/rooveterinaryinc.roo-cline/tasks/<id>/api_conversation_history.json "
        "(RooCodeInc/Roo-Code src/core/task-persistence/apiMessages.ts)",
    ),
    _place(
        "kilo-code",
        r"kilocode\.kilo-code/tasks/[^/]+/(?:api_conversation_history|ui_messages)\.json",
        "globalStorage/kilocode.kilo-code/tasks/<id>/api_conversation_history.json (Kilo Code, "
        "Roo Code's task persistence)",
    ),
    # The stores: a database of the store's name there that lacks the tables the format
    # reads (the runtime's schema changed, or the file is damaged in a way SQLite reads)
    # is an error for the file, never a skip (detection claims a store by its tables).
    _place(
        "crush",
        r"\.crush/crush\.db",
        "<project>/.crush/crush.db (charmbracelet/crush internal/config/load.go data "
        "directory, internal/db/connect.go)",
    ),
    _place(
        "zed",
        r"(?:zed|Zed)/threads/threads\.db",
        "<Zed data dir>/threads/threads.db (zed-industries/zed crates/agent/src/db.rs, "
        "ThreadsDatabase::new; paths::data_dir)",
    ),
    _place(
        "goose",
        r"goose/(?:data/)?sessions/(?:sessions\.db|[^/]+\.jsonl)",
        "<data>/goose/sessions/sessions.db, legacy <id>.jsonl there (block/goose "
        "crates/goose/src/session/session_manager.rs, session/legacy.rs)",
    ),
    _place(
        "opencode",
        r"opencode/opencode(?:-[^/]+)?\.db",
        "$XDG_DATA_HOME/opencode/opencode.db, opencode-<channel>.db (sst/opencode "
        "packages/opencode/src/storage/db.ts)",
    ),
    _place(
        "kilo",
        r"kilo/kilo(?:-[^/]+)?\.db",
        "$XDG_DATA_HOME/kilo/kilo.db, kilo-<channel>.db (Kilo-Org/kilo, OpenCode's storage/db.ts "
        "under Kilo's names)",
    ),
    # OpenCode's older file store (and Kilo's, the same code under its name): one JSON file per
    # session, message and part; its other folders (project/, session_diff/, todo/) hold none.
    _place(
        "opencode",
        r"opencode/storage/(?:session|message|part)/[^/]+/[^/]+\.json",
        "$XDG_DATA_HOME/opencode/storage/{session/<projectID>/<sessionID>,message/<sessionID>/"
        "<messageID>,part/<messageID>/<partID>}.json (sst/opencode packages/opencode/src/storage/"
        "storage.ts, keys written by session/index.ts and message-v2.ts)",
    ),
    _place(
        "kilo",
        r"kilo/storage/(?:session|message|part)/[^/]+/[^/]+\.json",
        "$XDG_DATA_HOME/kilo/storage/, OpenCode's file store under Kilo's name (Kilo-Org/kilo)",
    ),
    _place(
        "copilot-cli",
        r"\.copilot/session-state/[^/]+/events\.jsonl",
        "~/.copilot/session-state/<id>/events.jsonl (docs.github.com, Copilot CLI configuration "
        "directory)",
    ),
)


def claim(path: str) -> Place | None:
    """The place whose runtime writes only sessions where `path` lies, or None."""
    slashed = path.replace(os.sep, "/") if os.sep != "/" else path
    for place in PLACES:
        if place.pattern.search(slashed):
            return place
    return None
