"""Qwen Code chats: records that carry Claude Code's link keys around a Gemini `Content`,
reasoning as `{text, thought: true}` parts, the API-error records of rejected responses."""

from __future__ import annotations

import json
from pathlib import Path

from tests.formats.support import FIXTURES, fixture, read, repair, scores, site_at, sites
from thinkfix.engine.inputs.discover import discover
from thinkfix.formats import registry
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("qwen-code")
LEAKY = fixture("5b2f8c1e-7a4d-4e9b-8c3f-1d6e0a2b9c47")
DATA = LEAKY.read_bytes()
CLEAN = fixture("9d4e7b1a-3c2f-4a8e-b6d5-0f1e2a3b4c5d")


def test_qwen_code_is_told_from_claude_code_by_its_content_message() -> None:
    """Its records have uuid/parentUuid/sessionId/type user|assistant like Claude Code's; the
    Gemini `Content` (`role: model`, `parts`) is what makes them Qwen Code's."""
    for path in (LEAKY, CLEAN):
        found = registry.detect(path.read_bytes()[:65536], "renamed.jsonl")
        assert found is not None and found[0] is FMT
    claude = (FIXTURES / "claude-code/7f3c2a91-5d4e-4b8a-9c1f-2e6d8a0b4c37.jsonl").read_bytes()
    assert scores(claude)["qwen-code"] == 0.0
    # ... and Claude Code, which reads no message from them, does not claim them at all
    for path in (LEAKY, CLEAN):
        assert scores(path.read_bytes())["claude-code"] < registry.THRESHOLD
    # a Claude Code line beside a Qwen-shaped one: Claude Code's file (its reader reports
    # the line it cannot read), never Qwen Code's
    mixed = claude.splitlines(keepends=True)[2] + DATA.splitlines(keepends=True)[1]
    assert scores(mixed)["qwen-code"] == 0.0


def test_qwen_code_sites_are_the_model_text_parts_and_thoughts_are_native() -> None:
    found = sites(FMT, read(FMT, DATA))
    assert [(s.line, s.json_path) for s in found] == [
        (2, "message.parts[0].text"),
        (5, "message.parts[1].text"),
        (7, "message.parts[0].text"),
    ]
    assert found[0].followed_by_tool_call and not found[1].followed_by_tool_call
    assert found[1].native_reasoning and "<think>" in found[1].native_reasoning
    assert {s.session_id for s in found} == {"5b2f8c1e-7a4d-4e9b-8c3f-1d6e0a2b9c47"}
    assert {s.model for s in found} == {"qwen3-coder-plus"}


def test_qwen_code_error_records_are_read_and_hold_no_message() -> None:
    """Qwen Code rejects a response that leaked thinking tags and records the API error."""
    records = read(FMT, DATA)
    error = records[3]
    assert error.error is None
    assert error.data["systemPayload"]["uiEvent"]["error_message"] == (
        "Model response leaked thinking tags."
    )
    assert FMT.assistant_messages(error) == 0
    notes = [t for t in FMT.turns(error)]
    assert [t.note for t in notes] == ["error"]
    assert sum(FMT.assistant_messages(r) for r in records) == 3


def test_qwen_code_repair_inserts_a_thought_part_before_the_text() -> None:
    site = site_at(sites(FMT, read(FMT, DATA)), 2)
    out = repair(
        FMT,
        DATA,
        [Repair(site, "I'll check the scripts in package.json first.", ("Check package.json.",))],
    )
    parts = out.after[1].data["message"]["parts"]
    assert parts[0] == {"text": "Check package.json.", "thought": True}
    assert parts[1] == {"text": "I'll check the scripts in package.json first."}
    assert "functionCall" in parts[2]
    assert out.placements[0].kind is PlacementKind.BLOCK
    assert out.placements[0].json_path == "message.parts[0]"
    # the new part is one Qwen Code writes itself: compact, its own key order
    assert b'"parts":[{"text":"Check package.json.","thought":true},' in out.data


def test_qwen_code_reasoning_joins_the_unsigned_thought_part_before_the_text() -> None:
    """Qwen Code joins a turn's thought parts with no separator when it replays them: the
    reasoning is appended to the thought part already there, after a blank line."""
    site = site_at(sites(FMT, read(FMT, DATA)), 5)
    out = repair(FMT, DATA, [Repair(site, "The dev server runs on port 5173.", ("So 5173.",))])
    parts = out.after[4].data["message"]["parts"]
    assert len(parts) == 2 and parts[0]["thought"] is True
    assert parts[0]["text"].endswith("with sed.\n\nSo 5173.")
    assert out.placements[0].json_path == "message.parts[0]"


def test_qwen_code_all_reasoning_text_beside_a_thought_is_refused_not_dropped() -> None:
    """A thought part shows nothing: dropping the only text part would leave the turn empty."""
    record = json.loads(DATA.splitlines()[4])
    record["message"]["parts"][1]["text"] = "<think>only reasoning</think>"
    data = json.dumps(record, separators=(",", ":")).encode() + b"\n"
    site = sites(FMT, read(FMT, data))[0]
    out = repair(FMT, data, [Repair(site, "", ("only reasoning",))])
    assert out.placements[0].kind is PlacementKind.REFUSED


def test_qwen_code_checkpoint_documents() -> None:
    """Older builds' `/chat save` checkpoints: a pretty-printed array of Contents."""
    doc = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "<think>greet</think>Hello."}]},
    ]
    data = json.dumps(doc, indent=2).encode()
    assert scores(data, "/h/.qwen/tmp/ab12/checkpoint-work.json")["qwen-code"] == 0.95
    assert scores(data, "/h/x/checkpoint-work.json")["qwen-code"] == 0.6
    assert scores(data, "/h/x/other.json")["qwen-code"] == 0.0
    site = sites(FMT, read(FMT, data))[0]
    assert site.json_path == "[1].parts[0].text"
    out = repair(FMT, data, [Repair(site, "Hello.", ("greet",))])
    assert out.after[0].data[1]["parts"][0] == {"text": "greet", "thought": True}


def test_qwen_code_folders_and_override_variables(tmp_path: Path) -> None:
    fmt = get("qwen-code")
    home = tmp_path / "home"
    assert fmt.default_locations({}, home) == [home / ".qwen/projects", home / ".qwen/tmp"]
    env = {"QWEN_HOME": str(tmp_path / "qh")}
    assert fmt.default_locations(env, home)[0] == tmp_path / "qh/projects"
    env["QWEN_RUNTIME_DIR"] = "~/runtime"  # the runtime dir wins, `~` is the home folder
    assert fmt.default_locations(env, home)[0] == home / "runtime/projects"
    chats = home / ".qwen/projects/-home-dev-webapp/chats"
    chats.mkdir(parents=True)
    assert str(home / ".qwen/projects") in discover(env={"PWD": str(home)}, home=home)
