"""Anthropic logs: blocks in responses, manifest only for replayed request histories."""

from __future__ import annotations

from tests.formats.support import DATA, fixture, read, repair, site_at, sites
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import ApplyOptions, PlacementKind, Repair

FMT = get("anthropic")
LOG = fixture("messages-log").read_bytes()
CLINE = (DATA / "cline_api_conversation_history.json").read_bytes()


def test_anthropic_sites_cover_responses_and_request_histories() -> None:
    found = sites(FMT, read(FMT, LOG))
    assert [(s.line, s.json_path) for s in found] == [
        (1, "response.content[1].text"),
        (2, "request.messages[1].content[0].text"),
        (2, "response.content[0].text"),
        (3, "response.content[0].text"),
    ]
    assert found[0].native_reasoning == "Retries went from 3 to 5."
    assert found[0].message_id == "msg_01AbCdEfGhJkLmNoPqRsTuVw"
    assert found[1].model == "claude-sonnet-4-5"


def test_anthropic_response_gets_unsigned_block_after_the_signed_one() -> None:
    site = site_at(sites(FMT, read(FMT, LOG)), 1)
    out = repair(
        FMT,
        LOG,
        [Repair(site, "Consider exponential backoff.", ("That doubles worst-case latency.",))],
    )
    content = out.after[0].data["response"]["content"]
    assert content[0]["signature"].startswith("ErUBCkYI")  # untouched, still first
    assert content[1] == {"type": "thinking", "thinking": "That doubles worst-case latency."}
    assert content[2] == {"type": "text", "text": "Consider exponential backoff."}
    assert out.placements[0].kind is PlacementKind.BLOCK


def test_anthropic_request_history_keeps_reasoning_out() -> None:
    site = site_at(sites(FMT, read(FMT, LOG)), 2, "request.messages[1].content[0].text")
    out = repair(FMT, LOG, [Repair(site, "Consider exponential backoff.", ("Doubles latency.",))])
    assert out.placements[0].kind is PlacementKind.MANIFEST
    assert out.after[1].data["request"]["messages"][1]["content"] == [
        {"type": "text", "text": "Consider exponential backoff."}
    ]


def test_anthropic_manifest_mode_never_inserts() -> None:
    site = site_at(sites(FMT, read(FMT, LOG)), 3)
    out = repair(
        FMT,
        LOG,
        [Repair(site, "RFC 9110 defines HTTP semantics.", ("r",))],
        ApplyOptions(anthropic_mode="manifest"),
    )
    assert out.placements[0].kind is PlacementKind.MANIFEST


def test_anthropic_cline_history_is_a_request_history() -> None:
    assert FMT.detect(CLINE) >= 0.5
    (site,) = sites(FMT, read(FMT, CLINE))
    assert site.json_path == "[1].content[0].text"
    out = repair(FMT, CLINE, [Repair(site, "Reading the file.", ("Need the config.",))])
    assert out.placements[0].kind is PlacementKind.MANIFEST
    assert out.data == CLINE.replace(b"<thinking>Need the config.</thinking>\\n", b"")


def test_anthropic_all_reasoning_response_gets_a_placeholder_never_an_empty_text() -> None:
    # A response log is never replayed (archive): the reasoning goes into a thinking block
    # and the text says what was moved; the replayed request history is refused instead.
    found = sites(FMT, read(FMT, LOG))
    response, request = site_at(found, 3), site_at(found, 2, "request.messages[1].content[0].text")
    out = repair(FMT, LOG, [Repair(response, "", ("plan",)), Repair(request, "", ("plan",))])
    placed, refused = out.placements
    assert placed.applied and placed.placeholder and "all reasoning" in placed.placeholder
    content = out.after[2].data["response"]["content"]
    assert {"type": "thinking", "thinking": "plan"} in content
    assert {"type": "text", "text": placed.placeholder} in content
    assert refused.kind is PlacementKind.REFUSED and not out.after[1].touched
