"""Gemini CLI: chat JSON and JSONL; reasoning appended to thoughts; signed parts left alone."""

from __future__ import annotations

from tests.formats.support import fixture, read, repair, site_at, sites
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("gemini-cli")
CHAT = fixture("session-2026-02-03T10-15").read_bytes()
LOG = fixture("session-2026-05-11T14-02").read_bytes()


def test_gemini_cli_sites_are_gemini_messages() -> None:
    found = sites(FMT, read(FMT, CHAT))
    assert [s.json_path for s in found] == [
        "messages[1].content",
        "messages[2].content",
        "messages[3].content",
    ]
    assert found[0].session_id == "4f2a9c1e-6b3d-4e8a-9f1c-2d7e5b0a3c68"
    assert found[0].native_reasoning == "Finding the cache test file."
    assert found[0].message_index == 1


def test_gemini_cli_appends_a_thought_in_the_files_key_order() -> None:
    site = site_at(sites(FMT, read(FMT, CHAT)), 1, "messages[1].content")
    out = repair(
        FMT,
        CHAT,
        [
            Repair(
                site,
                "I'll read the cache test first.",
                ("The test probably depends on wall-clock time.",),
            )
        ],
    )
    thoughts = out.after[0].data["messages"][1]["thoughts"]
    assert thoughts[-1] == {
        "subject": "thinkfix",
        "description": "The test probably depends on wall-clock time.",
        "timestamp": "2026-02-03T10:15:19.204Z",
    }
    assert out.placements[0].kind is PlacementKind.THOUGHTS
    assert out.placements[0].json_path == "messages[1].thoughts[1]"
    assert not out.data.endswith(b"\n")
    assert (
        b'        },\n        {\n          "subject": "thinkfix",\n          "description": '
        b'"The test probably depends on wall-clock time.",\n'
    ) in out.data


def test_gemini_cli_empty_thoughts_list_is_expanded_in_place() -> None:
    site = site_at(sites(FMT, read(FMT, CHAT)), 1, "messages[2].content")
    out = repair(FMT, CHAT, [Repair(site, "Use fake timers.", ("The TTL is also 1000 ms.",))])
    assert (
        b'      "thoughts": [\n        {\n          "subject": "thinkfix",\n          '
        b'"description": "The TTL is also 1000 ms.",\n          "timestamp": '
        b'"2026-02-03T10:15:41.733Z"\n        }\n      ],\n'
    ) in out.data


def test_gemini_cli_jsonl_log_keeps_patches_and_compact_style() -> None:
    records = read(FMT, LOG)
    (site,) = sites(FMT, records)
    assert site.session_id == "7a0c3e5f-9b2d-4f1a-8c6e-5d4b3a2c1e07"
    out = repair(
        FMT,
        LOG,
        [
            Repair(
                site,
                "`git worktree prune` deletes stale bookkeeping.",
                ("prune removes administrative data.",),
            )
        ],
    )
    assert (
        b'"thoughts":[{"subject":"thinkfix","description":"prune removes administrative '
        b'data.","timestamp":"2026-05-11T14:02:27.902Z"}]'
    ) in out.after[3].raw


def test_gemini_cli_missing_thoughts_key_is_added_after_content() -> None:
    line = (
        b'{"id":"m1","timestamp":"t1","type":"gemini","content":"<think>p</think>a",'
        b'"model":"gemini-2.5-pro"}\n'
    )
    (site,) = sites(FMT, read(FMT, line))
    out = repair(FMT, line, [Repair(site, "a", ("p",))])
    assert out.after[0].raw == (
        b'{"id":"m1","timestamp":"t1","type":"gemini","content":"a",'
        b'"thoughts":[{"subject":"thinkfix","description":"p",'
        b'"timestamp":"t1"}],"model":"gemini-2.5-pro"}'
    )


def test_gemini_cli_signed_part_is_reported_not_changed() -> None:
    line = (
        b'{"id":"m1","timestamp":"t1","type":"gemini","content":[{"text":"<think>p</think>a",'
        b'"thoughtSignature":"CsIBAY89a1"}],"thoughts":[]}\n'
    )
    (site,) = sites(FMT, read(FMT, line))
    assert site.signed and site.json_path == "content[0].text"
    out = repair(FMT, line, [Repair(site, "a", ("p",))])
    assert out.placements[0].kind is PlacementKind.SKIPPED and "signed" in out.placements[0].reason
    assert out.data == line
