"""Factory Droid sessions: Anthropic blocks under `{type: message}` lines, told apart from
pi's entries; the reasoning stays in the manifest (Droid replays the blocks)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.formats.support import FIXTURES, read, repair, scores, site_at, sites
from thinkfix.engine.inputs.discover import discover
from thinkfix.formats import registry
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("factory-droid")
SESSION = (
    FIXTURES / "factory-droid/sessions/-home-dev-api/6d2e8f1a-4b7c-4e9d-a3f5-0b1c2d3e4f5a.jsonl"
)
DATA = SESSION.read_bytes()


def test_factory_droid_is_claimed_over_pi_and_never_claims_pi() -> None:
    found = registry.detect(DATA, "renamed.jsonl")
    assert found is not None and found[0] is FMT
    confidence = scores(DATA)
    assert confidence["factory-droid"] > confidence["pi"]
    for pi in (FIXTURES / "pi").iterdir():
        assert scores(pi.read_bytes()[:65536], str(pi))["factory-droid"] == 0.0
    # the settings file beside a session is no session of anyone's
    settings = json.dumps({"model": "glm-4.6", "providerLock": "generic-chat-completion-api"})
    assert registry.detect(settings.encode(), f"{SESSION.stem}.settings.json") is None


def test_factory_droid_sites_keep_the_session_and_native_thinking() -> None:
    found = sites(FMT, read(FMT, DATA))
    assert [(s.line, s.json_path) for s in found] == [
        (3, "message.content[1].text"),
        (4, "message.content[0].text"),
        (6, "message.content[0].text"),
    ]
    assert {s.session_id for s in found} == {"6d2e8f1a-4b7c-4e9d-a3f5-0b1c2d3e4f5a"}
    assert "<think>" in (found[0].native_reasoning or "")
    assert found[1].followed_by_tool_call


def test_factory_droid_repair_keeps_the_reasoning_in_the_manifest() -> None:
    site = site_at(sites(FMT, read(FMT, DATA)), 4)
    out = repair(FMT, DATA, [Repair(site, "Running the retry tests first.", ("Run first.",))])
    content = out.after[3].data["message"]["content"]
    assert [b["type"] for b in content] == ["text", "tool_use"]
    assert out.placements[0].kind is PlacementKind.MANIFEST


def test_factory_droid_folder(tmp_path: Path) -> None:
    assert FMT.default_locations({}, tmp_path) == [tmp_path / ".factory/sessions"]
    (tmp_path / ".factory/sessions/-home-dev-api").mkdir(parents=True)
    assert str(tmp_path / ".factory/sessions") in discover(
        env={"PWD": str(tmp_path)}, home=tmp_path
    )
