"""Hermes Agent snapshots: detection past a long head, MiniMax duplicates, the `reasoning` field."""

from __future__ import annotations

import json

from tests.formats.support import fixture, read, repair, scores, site_at, sites
from thinkfix.formats import registry
from thinkfix.formats.detection import HEAD_BYTES
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair
from thinkfix.normalizer.batch import normalize

FMT = get("hermes")
LEAKY = fixture("session_20260412_093015_a1b2c3")
DATA = LEAKY.read_bytes()


def test_hermes_messages_begin_past_the_sampled_head() -> None:
    assert DATA.index(b'"messages"') > HEAD_BYTES
    found = registry.detect(DATA[:HEAD_BYTES], "renamed.json")
    assert found is not None and found[0] is FMT
    # the generic chat reader does not claim the head, and loses to Hermes on the whole file
    confidence = scores(DATA)
    assert confidence["hermes"] > confidence["openai-chat"]


def test_hermes_sites_are_the_assistant_contents_with_their_reasoning_field() -> None:
    found = sites(FMT, read(FMT, DATA))
    assert [s.json_path for s in found] == [
        "messages[1].content",
        "messages[3].content",
        "messages[5].content",
    ]
    assert {s.session_id for s in found} == {"20260412_093015_a1b2c3"}
    assert {s.model for s in found} == {"minimax/minimax-m2.7"}
    assert found[0].native_reasoning and found[0].native_reasoning in found[0].text


def test_hermes_minimax_copies_of_the_reasoning_field_are_duplicates() -> None:
    kinds = [
        f.kind.value
        for s in sites(FMT, read(FMT, DATA))
        for f in normalize(s.text, native_reasoning=s.native_reasoning).findings
    ]
    assert kinds == ["duplicate", "duplicate", "orphan_close"]


def test_hermes_repair_appends_to_the_reasoning_field() -> None:
    site = site_at(sites(FMT, read(FMT, DATA)), 1, "messages[5].content")
    out = repair(FMT, DATA, [Repair(site, "Please confirm the path.", ("Ask first.",))])
    message = out.after[0].data["messages"][5]
    assert (
        message["reasoning"] == "Ask before deleting: the user said not the results.\n\nAsk first."
    )
    assert out.placements[0].kind is PlacementKind.FIELD
    assert out.placements[0].json_path == "messages[5].reasoning"
    # Hermes' own indentation is kept
    assert b'\n      "content": "Please confirm the path.",\n      "reasoning": ' in out.data


def test_hermes_repair_creates_the_reasoning_field_under_hermes_name() -> None:
    doc = json.loads(DATA)
    for m in doc["messages"]:
        m.pop("reasoning", None)
    data = json.dumps(doc, indent=2, ensure_ascii=False).encode()
    site = site_at(sites(FMT, read(FMT, data)), 1, "messages[3].content")
    out = repair(FMT, data, [Repair(site, "The three largest folders.", ("Three largest.",))])
    assert out.after[0].data["messages"][3]["reasoning"] == "Three largest."
