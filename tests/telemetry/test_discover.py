"""Discovery: each runtime's session folder under a fake home, and its override variable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.engine.inputs.discover import discover, locations
from thinkfix.formats.registry import FORMATS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

#: Where each runtime puts a session, relative to the home folder (or the workspace for
#: claw-code), as the runtimes lay them out (FORMATS.md), with a fixture of that format.
LAYOUT = {
    ".claude/projects/-home-u-proj/2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl": "claude-code/2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl",
    ".codex/sessions/2026/03/02/rollout-2026-03-02T10-21-07-0195a0c4-7d3e-7a21-9b5f-"
    "3c8e2d1f6a47.jsonl": "codex/rollout-2026-03-02T10-21-07-0195a0c4-7d3e-7a21-9b5f-3c8e2d1f6a47.jsonl",
    ".pi/agent/sessions/--home-u-proj--/2026-01-15T08-30-12-417Z_4b1d6e2a-8c3f-4e5a-9d7b-"
    "1f0e2c3a4b5d.jsonl": "pi/2026-01-15T08-30-12-417Z_4b1d6e2a-8c3f-4e5a-9d7b-1f0e2c3a4b5d.jsonl",
    ".openclaw/agents/main/sessions/9c5e1f7a-2b3d-4e6f-8a9b-0c1d2e3f4a5b.jsonl": "openclaw/9c5e1f7a-2b3d-4e6f-8a9b-0c1d2e3f4a5b.jsonl.reset.2026-03-24T19-52-10.004Z",
    ".gemini/tmp/4f2a9c1e/chats/session-2026-02-03T10-15-4f2a9c1e.json": "gemini-cli/session-2026-02-03T10-15-4f2a9c1e.json",
    "work/proj/.claw/sessions/session-1775200000000-0.jsonl": "claw-code/session-1775200000000-0.jsonl",
    ".hermes/sessions/session_20260412_093015_a1b2c3.json": "hermes/session_20260412_093015_a1b2c3.json",
    ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1775300000123/"
    "api_conversation_history.json": "cline/tasks/1775300000123/api_conversation_history.json",
    ".config/Cursor/User/globalStorage/rooveterinaryinc.roo-cline/tasks/"
    "7d1e4c2a-9b3f-4a8e-b6d5-0c2f1e3a4b5d/api_conversation_history.json": "roo-code/tasks/7d1e4c2a-9b3f-4a8e-b6d5-0c2f1e3a4b5d/api_conversation_history.json",
}
#: The formats a scan of LAYOUT (with OpenCode's store) reads.
LAID_OUT_FORMATS = {
    "claude-code",
    "codex",
    "pi",
    "gemini-cli",
    "claw-code",
    "hermes",
    "cline",
    "roo-code",
    "opencode",
}
#: OpenCode's file store travels whole (a part's role is in its message file).
OPENCODE_STORE = ".local/share/opencode/storage"


def lay_out(home: Path, layout: dict[str, str] = LAYOUT) -> None:
    for rel, fixture in layout.items():
        target = home / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / fixture, target)
    if layout is LAYOUT:
        shutil.copytree(FIXTURES / "opencode" / "storage", home / OPENCODE_STORE)


def fake_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PWD": str(home / "work/proj")}


def test_every_runtime_is_found_in_its_default_folder(tmp_path: Path) -> None:
    lay_out(tmp_path)
    found = discover(env=fake_env(tmp_path), home=tmp_path)
    assert found == [
        str(tmp_path / p)
        for p in (
            ".claude/projects",
            ".codex/sessions",
            ".pi/agent/sessions",
            ".openclaw/agents/main/sessions",
            "work/proj/.claw/sessions",
            ".gemini/tmp",
            ".hermes/sessions",
            ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
            ".config/Cursor/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
            OPENCODE_STORE,
        )
    ]


def test_missing_folders_are_candidates_but_not_discovered(tmp_path: Path) -> None:
    found = locations(env=fake_env(tmp_path), home=tmp_path)
    assert found and not any(loc.exists for loc in found)
    assert discover(env=fake_env(tmp_path), home=tmp_path) == []


@pytest.mark.parametrize(
    ("variable", "default", "moved"),
    [
        ("CLAUDE_CONFIG_DIR", ".claude", "projects"),
        ("CODEX_HOME", ".codex", "sessions"),
        ("PI_CODING_AGENT_DIR", ".pi/agent", "sessions"),
        ("OPENCLAW_STATE_DIR", ".openclaw", "agents/main/sessions"),
        ("CLAWDBOT_STATE_DIR", ".openclaw", "agents/main/sessions"),
        ("HERMES_HOME", ".hermes", "sessions"),
        ("XDG_DATA_HOME", ".local/share", "opencode/storage"),
        ("XDG_CONFIG_HOME", ".config", "Code/User/globalStorage/saoudrizwan.claude-dev/tasks"),
    ],
)
def test_override_variable_replaces_the_default(
    tmp_path: Path, variable: str, default: str, moved: str
) -> None:
    home = tmp_path / "home"
    lay_out(home)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / moved).mkdir(parents=True)
    env = {**fake_env(home), variable: str(elsewhere)}
    found = discover(env=env, home=home)
    assert str(elsewhere / moved) in found
    assert not any(p.startswith(str(home / default) + "/") for p in found)


def test_gemini_cli_home_replaces_the_home_folder(tmp_path: Path) -> None:
    alt = tmp_path / "profile"
    (alt / ".gemini/tmp/abc/chats").mkdir(parents=True)
    found = discover(env={"GEMINI_CLI_HOME": str(alt), "PWD": str(tmp_path)}, home=tmp_path)
    assert found == [str(alt / ".gemini/tmp")]


def test_tilde_and_empty_overrides(tmp_path: Path) -> None:
    (tmp_path / "cc/projects").mkdir(parents=True)
    (tmp_path / ".codex/sessions").mkdir(parents=True)
    env = {"CLAUDE_CONFIG_DIR": "~/cc", "CODEX_HOME": "", "PWD": str(tmp_path)}
    assert discover(env=env, home=tmp_path) == [
        str(tmp_path / "cc/projects"),
        str(tmp_path / ".codex/sessions"),
    ]


def test_every_openclaw_agent_is_found(tmp_path: Path) -> None:
    for agent in ("main", "work"):
        (tmp_path / f".openclaw/agents/{agent}/sessions").mkdir(parents=True)
    found = discover(env={"PWD": str(tmp_path)}, home=tmp_path)
    assert found == [
        str(tmp_path / ".openclaw/agents/main/sessions"),
        str(tmp_path / ".openclaw/agents/work/sessions"),
    ]


def test_formats_with_locations_cite_their_source() -> None:
    home = Path("/nonexistent-home")
    for fmt in FORMATS.values():
        if fmt.default_locations({"PWD": "/w"}, home):
            assert fmt.locations_source, fmt.id
    result = CliRunner().invoke(main, ["formats", "--json"])
    cited = {f["id"]: f["locations"] for f in json.loads(result.output)["formats"]}
    assert "CLAUDE_CONFIG_DIR" in cited["claude-code"] and "CODEX_HOME" in cited["codex"]
    assert "PI_CODING_AGENT_DIR" in cited["pi"] and "OPENCLAW_STATE_DIR" in cited["pi"]
    assert "GEMINI_CLI_HOME" in cited["gemini-cli"] and ".claw/sessions" in cited["claw-code"]
    assert "HERMES_HOME" in cited["hermes"] and "XDG_DATA_HOME" in cited["opencode"]
    assert "saoudrizwan.claude-dev" in cited["cline"]
    assert "rooveterinaryinc.roo-cline" in cited["roo-code"]


def _isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "PI_CODING_AGENT_DIR",
        "OPENCLAW_STATE_DIR",
        "CLAWDBOT_STATE_DIR",
        "GEMINI_CLI_HOME",
        "GITHUB_ACTIONS",
        "NO_COLOR",
        "HERMES_HOME",
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "APPDATA",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PWD", str(home / "work/proj"))
    monkeypatch.chdir(home)


def test_scan_discover_reads_every_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lay_out(tmp_path)
    _isolate(monkeypatch, tmp_path)
    result = CliRunner().invoke(
        main, ["scan", "--discover", "--isolated", "--output-format", "json", "--exit-zero"]
    )
    assert result.exit_code == 0, result.output
    formats = set(json.loads(result.stdout)["summary"]["by_format"])
    assert formats == LAID_OUT_FORMATS


def test_where_lists_found_folders_and_fails_when_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _isolate(monkeypatch, tmp_path)
    empty = CliRunner().invoke(main, ["where"])
    assert empty.exit_code == 1
    none = CliRunner().invoke(main, ["scan", "--discover", "--isolated"])
    assert none.exit_code == 2 and "found no session folders" in none.output
    lay_out(tmp_path)
    result = CliRunner().invoke(main, ["where", "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.output)["locations"]
    assert {r["format"] for r in rows if r["exists"]} == LAID_OUT_FORMATS


def test_opencode_sqlite_store_is_discovered_as_a_file(tmp_path: Path) -> None:
    from tests.formats import opencode_db

    root = tmp_path / ".local/share/opencode"
    root.mkdir(parents=True)
    opencode_db.build(root / "opencode.db", opencode_db.LEAKY)
    assert discover(env={"PWD": str(tmp_path)}, home=tmp_path) == [str(root / "opencode.db")]
