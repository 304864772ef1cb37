"""Codex rollouts: sites, native reasoning from reasoning items, and the two-place repair."""

from __future__ import annotations

import pytest

from tests.formats.support import fixture, read, repair, site_at, sites
from thinkfix.formats import registry
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import ApplyOptions, PlacementKind, Repair

FMT = get("codex")
ROLLOUT = fixture("rollout-2026-03-02").read_bytes()
REASONING = (
    "The user asks about flood fill performance. It is probably recursive and revisits "
    "cells. I should read src/fill.rs."
)
VISIBLE = "I'll look at the flood fill implementation first."


def test_codex_sites_are_assistant_output_text_only() -> None:
    found = sites(FMT, read(FMT, ROLLOUT))
    assert [(s.line, s.json_path) for s in found] == [
        (6, "payload.content[0].text"),
        (11, "payload.content[0].text"),
        (19, "payload.content[0].text"),
        (23, "payload.content[0].text"),
    ]
    assert {s.session_id for s in found} == {"0195a0c4-7d3e-7a21-9b5f-3c8e2d1f6a47"}
    assert {s.model for s in found} == {"qwen3:32b"}


def test_codex_native_reasoning_comes_from_the_preceding_reasoning_item() -> None:
    found = sites(FMT, read(FMT, ROLLOUT))
    assert [s.native_reasoning for s in found] == [
        None,
        None,
        "Rewrite fill() with a Vec stack.",
        None,
    ]


def test_codex_repair_inserts_reasoning_item_and_fixes_event_copies() -> None:
    site = site_at(sites(FMT, read(FMT, ROLLOUT)), 6)
    out = repair(FMT, ROLLOUT, [Repair(site, VISIBLE, (REASONING,))])
    (placement,) = out.placements
    assert placement.kind is PlacementKind.RECORD
    assert placement.record_index == 5 and placement.message_record_index == 7
    inserted = out.after[5]
    assert inserted.inserted and inserted.eol == b"\n"
    assert inserted.raw == (
        b'{"timestamp":"2026-03-02T10:21:31.660Z","type":"response_item","payload":'
        b'{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"'
        + REASONING.encode()
        + b'"}],"encrypted_content":null}}'
    )
    # Issue 10: viewers read the summary or this event, never `content`, so without the
    # event the moved reasoning was invisible in them (Codex writes it beside reasoning).
    event = out.after[6]
    assert event.inserted and event.raw == (
        b'{"timestamp":"2026-03-02T10:21:31.660Z","type":"event_msg","payload":'
        b'{"type":"agent_reasoning","text":"' + REASONING.encode() + b'"}}'
    )
    assert out.after[8].data["payload"] == {"type": "agent_message", "message": VISIBLE}
    assert placement.mirrors == ("record 8: payload.message",)
    assert len(out.after) == len(out.before) + 2


def test_codex_all_reasoning_message_is_refused_with_its_agent_message() -> None:
    # Issue 10: it used to become output_text "" and an empty agent_message.
    site = site_at(sites(FMT, read(FMT, ROLLOUT)), 6)
    out = repair(FMT, ROLLOUT, [Repair(site, "", (REASONING,))])
    (placement,) = out.placements
    assert placement.kind is PlacementKind.REFUSED and not placement.applied
    assert placement.reason is not None and "nothing visible would remain" in placement.reason
    assert out.data == ROLLOUT


def test_codex_emptied_part_beside_another_output_text_is_dropped() -> None:
    data = (
        b'{"timestamp":"t","type":"session_meta","payload":{"id":"s","model_provider":'
        b'"ollama"}}\n'
        b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":'
        b'"assistant","content":[{"type":"output_text","text":"<think>r</think>"},'
        b'{"type":"output_text","text":"answer"}]}}\n'
        b'{"timestamp":"t","type":"event_msg","payload":{"type":"agent_message",'
        b'"message":"answer"}}\n'
    )
    site = sites(FMT, read(FMT, data))[0]
    out = repair(FMT, data, [Repair(site, "", ("r",))])
    assert out.placements[0].applied and out.placements[0].text_path is None
    assert out.after[3].data["payload"]["content"] == [{"type": "output_text", "text": "answer"}]
    assert out.after[2].data["payload"] == {"type": "agent_reasoning", "text": "r"}
    assert not out.after[4].touched


def test_codex_repair_fixes_task_complete_copy() -> None:
    site = site_at(sites(FMT, read(FMT, ROLLOUT)), 11)
    visible = site.text.split("</think>\n\n")[1]
    out = repair(FMT, ROLLOUT, [Repair(site, visible, (site.text.split("\n</think>")[0],))])
    assert out.after[13].data["payload"]["message"] == visible
    assert out.after[14].data["payload"]["last_agent_message"] == visible
    # the next turn's copies are not touched
    assert all(not r.touched for r in out.after[15:])


def test_codex_duplicate_only_changes_text_and_copy() -> None:
    site = site_at(sites(FMT, read(FMT, ROLLOUT)), 19)
    out = repair(
        FMT,
        ROLLOUT,
        [
            Repair(
                site,
                "I'll rewrite `fill()` with an explicit stack.",
                ("Rewrite fill() with a Vec stack.",),
            )
        ],
    )
    (placement,) = out.placements
    assert placement.kind is PlacementKind.NONE
    assert len(out.after) == len(out.before)
    assert [r.index for r in out.after if r.touched] == [18, 19]


def test_codex_openai_hosted_session_uses_sidecar_by_default() -> None:
    hosted = ROLLOUT.replace(b'"model_provider":"ollama"', b'"model_provider":"openai"')
    site = site_at(sites(FMT, read(FMT, hosted)), 6)
    out = repair(FMT, hosted, [Repair(site, VISIBLE, (REASONING,))])
    assert out.placements[0].kind is PlacementKind.SIDECAR
    assert len(out.after) == len(out.before)
    forced = repair(
        FMT, hosted, [Repair(site, VISIBLE, (REASONING,))], ApplyOptions(codex_mode="insert")
    )
    assert forced.placements[0].kind is PlacementKind.RECORD


def test_codex_all_leaks_repaired_together() -> None:
    found = sites(FMT, read(FMT, ROLLOUT))
    repairs = [
        Repair(found[0], VISIBLE, (REASONING,)),
        Repair(found[1], found[1].text.split("</think>\n\n")[1], ("fill() recurses",)),
    ]
    out = repair(FMT, ROLLOUT, repairs)
    assert [p.record_index for p in out.placements] == [5, 12]
    assert len(out.after) == len(out.before) + 4  # a reasoning item and its event, each
    assert [r.line for r in out.reread] == list(range(1, len(out.before) + 5))


def test_codex_compacted_history_gets_reasoning_item() -> None:
    line = (
        b'{"timestamp":"t","type":"compacted","payload":{"message":"","replacement_history":'
        b'[{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},'
        b'{"type":"message","role":"assistant","content":[{"type":"output_text","text":'
        b'"<think>r</think>a"}]}]}}\n'
    )
    (site,) = sites(FMT, read(FMT, line))
    assert site.json_path == "payload.replacement_history[1].content[0].text"
    out = repair(FMT, line, [Repair(site, "a", ("r",))])
    history = out.after[0].data["payload"]["replacement_history"]
    assert history[1] == {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "r"}],
        "encrypted_content": None,
    }
    assert out.placements[0].text_path == "payload.replacement_history[2].content[0].text"


def test_codex_bare_response_items_of_early_rollouts() -> None:
    data = (
        b'{"id":"5f1e","timestamp":"2025-05-01T10:00:00Z","instructions":null}\n'
        b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}\n'
        b'{"type":"message","role":"assistant","content":[{"type":"output_text",'
        b'"text":"<think>r</think>hello"}]}\n'
    )
    assert FMT.detect(data) >= 0.5
    (site,) = sites(FMT, read(FMT, data))
    out = repair(FMT, data, [Repair(site, "hello", ("r",))])
    assert out.after[2].data == {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "r"}],
        "encrypted_content": None,
    }


# Rollouts before the `{timestamp, type, payload}` envelope (#21 item 1), in the shape
# codex-rs/core/src/rollout.rs wrote them: `RolloutRecorder::new` writes `SessionMeta` bare
# ({id, timestamp, instructions}), then each ResponseItem bare, and `StateLine` as
# {"record_type": "state", ...}. They were read as Anthropic responses.
LEGACY_HEADER = b'{"id":"5f1e","timestamp":"2025-05-07T17:24:21.123Z","instructions":"Be brief."}\n'
LEGACY_STATE = b'{"record_type":"state"}\n'
LEGACY_ITEMS = (
    b'{"type":"message","role":"user","content":[{"type":"input_text","text":"ls?"}]}\n'
    b'{"type":"message","role":"assistant","content":[{"type":"output_text",'
    b'"text":"<think>run ls</think>Running ls."}]}\n'
    b'{"type":"function_call","name":"shell","arguments":"{\\"command\\":[\\"ls\\"]}",'
    b'"call_id":"call_1"}\n'
    b'{"type":"function_call_output","call_id":"call_1","output":"a.txt"}\n'
)


@pytest.mark.parametrize(
    "data",
    [
        LEGACY_HEADER + LEGACY_STATE + LEGACY_ITEMS + LEGACY_STATE,
        LEGACY_HEADER + LEGACY_ITEMS,
        LEGACY_STATE + LEGACY_ITEMS,
        LEGACY_ITEMS,
        LEGACY_ITEMS.split(b"\n", 2)[1] + b"\n",  # one bare assistant message
        LEGACY_HEADER + LEGACY_STATE,  # a session with no turn yet
    ],
    ids=["header+state", "header", "state", "items", "one-message", "empty"],
)
def test_codex_legacy_rollouts_are_codex_not_anthropic(data: bytes) -> None:
    found = registry.detect(data, "rollout-2025-05-07T17-24-21-5f1e.jsonl")
    assert found is not None and found[0].id == "codex"
    assert registry.detect(data, "renamed.jsonl")[0].id == "codex"  # type: ignore[index]


def test_codex_legacy_rollout_repair_places_a_bare_reasoning_item() -> None:
    """Codex's placement (a reasoning item before the message, bare as its neighbours),
    never Anthropic's (a thinking block inside the message)."""
    data = LEGACY_HEADER + LEGACY_STATE + LEGACY_ITEMS
    fmt = registry.detect(data)[0]  # type: ignore[index]
    (site,) = sites(fmt, read(fmt, data))
    assert (site.line, site.json_path) == (4, "content[0].text")
    out = repair(fmt, data, [Repair(site, "Running ls.", ("run ls",))])
    assert [r.data.get("type") for r in out.after[2:5]] == ["message", "reasoning", "message"]
    assert out.after[4].data["content"] == [{"type": "output_text", "text": "Running ls."}]
