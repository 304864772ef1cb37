"""GitHub Copilot CLI: the events log (reasoningText, a reasoningOpaque signature), the
legacy history file with its timeline copy, and the corrupted files users report."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.formats.support import FIXTURES, read, repair, scores, site_at, sites
from thinkfix.cli import main
from thinkfix.engine.inputs.discover import discover
from thinkfix.formats import registry
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("copilot-cli")
EVENTS = FIXTURES / "copilot-cli/session-state/3e7b9c1d-5f2a-4d8e-b0c6-7a1e9f3d2b58/events.jsonl"
DATA = EVENTS.read_bytes()
LEGACY = (
    FIXTURES / "copilot-cli/history-session-state/"
    "session_a9c8b7d6-e5f4-4a3b-9c2d-1e0f9a8b7c6d_1759957816398.json"
)


def test_copilot_cli_both_shapes_are_detected_by_content() -> None:
    for path in (EVENTS, LEGACY):
        found = registry.detect(path.read_bytes()[:65536], "renamed")
        assert found is not None and found[0] is FMT


def test_copilot_cli_sites_are_assistant_message_contents() -> None:
    found = sites(FMT, read(FMT, DATA))
    assert [(s.line, s.json_path) for s in found] == [
        (4, "data.content"),
        (9, "data.content"),
        (11, "data.content"),
        (12, "data.content"),
    ]
    assert found[0].followed_by_tool_call and found[0].native_reasoning is None
    assert "</think>" in (found[1].native_reasoning or "")
    assert [s.model for s in found] == [
        "gpt-4.1",
        "gpt-4.1",
        "claude-sonnet-4.5",
        "claude-sonnet-4.5",
    ]


def test_copilot_cli_repair_sets_and_appends_reasoning_text() -> None:
    all_sites = sites(FMT, read(FMT, DATA))
    first, second = site_at(all_sites, 4), site_at(all_sites, 9)
    out = repair(
        FMT,
        DATA,
        [
            Repair(first, "I'll search the proxy code for the tag.", ("Grep the proxy.",)),
            Repair(second, "The tags come from `proxy/filter.py`.", ("Line 12.",)),
        ],
    )
    assert out.after[3].data["data"]["reasoningText"] == "Grep the proxy."  # was null
    assert out.after[8].data["data"]["reasoningText"].endswith("is not stripped.\n\nLine 12.")
    assert [p.kind for p in out.placements] == [PlacementKind.FIELD, PlacementKind.FIELD]
    assert [p.json_path for p in out.placements] == ["data.reasoningText"] * 2


def test_copilot_cli_signed_reasoning_text_is_left_alone() -> None:
    site = site_at(sites(FMT, read(FMT, DATA)), 11)
    out = repair(FMT, DATA, [Repair(site, "I'll strip the span in `filter.py`.", ("Regex.",))])
    assert out.after[10].data["data"]["reasoningText"] == "Use a non-greedy regex."
    assert out.after[10].data["data"]["content"] == "I'll strip the span in `filter.py`."
    assert out.placements[0].kind is PlacementKind.MANIFEST


def test_copilot_cli_legacy_history_fixes_the_timeline_copy_too() -> None:
    data = LEGACY.read_bytes()
    found = sites(FMT, read(FMT, data))
    assert [s.json_path for s in found] == [
        "chatMessages[1].content",
        "chatMessages[3].content",
        "chatMessages[5].content",
    ]
    visible = "It marks the start of a reasoning model's hidden reasoning."
    out = repair(FMT, data, [Repair(found[0], visible, ("Reasoning marker.",))])
    doc = out.after[0].data
    assert doc["chatMessages"][1]["content"] == visible
    assert doc["timeline"][1]["text"] == visible
    assert out.placements[0].kind is PlacementKind.MANIFEST
    assert out.placements[0].mirrors == ("record 0: timeline[1].text",)


def test_copilot_cli_corrupted_files_are_an_error_for_that_file_never_a_crash(
    tmp_path: Path,
) -> None:
    """A raw newline inside a string, a truncated event and two events on one line: those
    lines are input errors with their line and reason; the sound events are still read."""
    lines = DATA.decode().splitlines()
    raw_newline = lines[3].replace("\\n", "\n", 1)  # the first escaped newline, written raw
    truncated = lines[8][: len(lines[8]) // 2]
    doubled = lines[10] + lines[12]  # msg_03 and the turn_end event on one line
    broken = [
        *lines[:3],
        raw_newline,
        *lines[4:8],
        truncated,
        lines[9],
        doubled,
        lines[11],
        lines[13],
    ]
    session = tmp_path / "session-state" / "x" / "events.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("\n".join(broken) + "\n")
    result = CliRunner().invoke(
        main, ["scan", "--output-format", "json", "--no-progress", str(session)]
    )
    assert result.exit_code == 2, result.output  # an unreadable input, reported; not a crash
    report = json.loads(result.stdout)
    # the raw newline leaves two lines that are not JSON: the event's head and its rest (the
    # rest, with no assistant marker, was never read before: now reported, as by a parse)
    assert [(e["path"], e["line"], e["kind"]) for e in report["errors"]] == [
        (str(session), 4, "bad_line"),
        (str(session), 5, "bad_line"),
        (str(session), 10, "bad_line"),
        (str(session), 12, "bad_line"),
    ]
    assert report["errors"][0]["message"].startswith("truncated: Unterminated string")
    assert report["errors"][3]["message"].startswith("not JSON: Extra data")
    # msg_04 (line 13) is sound and is read and counted as ever
    assert report["summary"]["by_format"]["copilot-cli"]["assistant_messages"] == 1


def test_copilot_cli_folders_and_overrides(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert FMT.default_locations({}, home) == [
        home / ".copilot/session-state",
        home / ".copilot/history-session-state",
    ]
    env = {"COPILOT_HOME": str(tmp_path / "c"), "XDG_CONFIG_HOME": str(tmp_path / "x")}
    assert FMT.default_locations(env, home) == [
        tmp_path / "c/session-state",
        tmp_path / "c/history-session-state",
        tmp_path / "x/.copilot/session-state",
        tmp_path / "x/.copilot/history-session-state",
    ]
    (home / ".copilot/session-state/abc").mkdir(parents=True)
    assert str(home / ".copilot/session-state") in discover(env={"PWD": str(home)}, home=home)
    assert scores(b'{"model": "x"}', "settings.json")["copilot-cli"] == 0.0
