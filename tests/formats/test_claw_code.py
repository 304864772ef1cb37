"""claw-code: legacy JSON and current JSONL, sorted keys, and the Anthropic sidecar rule."""

from __future__ import annotations

import pytest

from tests.formats.support import fixture, read, repair, site_at, sites
from thinkfix.formats.claw_code import is_anthropic
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("claw-code")
LEGACY = fixture("session-1775123456789").read_bytes()
CURRENT = fixture("session-1775200000000-0").read_bytes()


def test_claw_code_legacy_sites_and_no_trailing_newline() -> None:
    records = read(FMT, LEGACY)
    assert len(records) == 1 and records[0].eol == b"" and not LEGACY.endswith(b"\n")
    assert [s.json_path for s in sites(FMT, records)] == [
        "messages[1].blocks[0].text",
        "messages[3].blocks[0].text",
    ]
    assert [s.message_index for s in sites(FMT, records)] == [1, 3]


def test_claw_code_legacy_repair_goes_to_sidecar_and_stays_legacy() -> None:
    site = site_at(sites(FMT, read(FMT, LEGACY)), 1, "messages[1].blocks[0].text")
    out = repair(
        FMT,
        LEGACY,
        [Repair(site, "Let me list the workspace crates.", ("The workspace is under rust/.",))],
    )
    assert out.placements[0].kind is PlacementKind.SIDECAR
    assert not out.data.endswith(b"\n")
    assert out.data == LEGACY.replace(
        b'"<think>\\nThe workspace is under rust/. I should list rust/crates.\\n</think>\\n\\n'
        b'Let me list the workspace crates."',
        b'"Let me list the workspace crates."',
    )


def test_claw_code_jsonl_non_anthropic_model_gets_sorted_thinking_block() -> None:
    found = sites(FMT, read(FMT, CURRENT))
    assert {s.model for s in found} == {"qwen3-32b"}
    assert {s.session_id for s in found} == {"session-1775200000000-0"}
    site = site_at(found, 4)
    out = repair(
        FMT, CURRENT, [Repair(site, "The build is slow.", ("Every crate enables serde.",))]
    )
    assert out.placements[0].kind is PlacementKind.BLOCK
    assert (
        b'{"message":{"blocks":[{"thinking":"Every crate enables serde.","type":"thinking"},'
        b'{"text":"The build is slow.","type":"text"}]'
    ) in out.after[3].raw


def test_claw_code_jsonl_anthropic_model_gets_sidecar() -> None:
    data = CURRENT.replace(b'"model":"qwen3-32b"', b'"model":"claude-sonnet-4-5"')
    site = site_at(sites(FMT, read(FMT, data)), 4)
    out = repair(FMT, data, [Repair(site, "x", ("y",))])
    assert out.placements[0].kind is PlacementKind.SIDECAR
    assert b'"thinking"' not in out.after[3].raw


def test_claw_code_truncated_unclosed_leak_is_refused_not_blanked() -> None:
    # Issue 10: line 7 is all reasoning (cut by the 16 KB truncation); it used to become
    # {"text": "", "type": "text"} beside the new thinking block. Replayed to an
    # Anthropic-compatible API that is a 400, so the message is left as it is.
    site = site_at(sites(FMT, read(FMT, CURRENT)), 7)
    out = repair(FMT, CURRENT, [Repair(site, "", (site.text.removeprefix("<think>\n"),))])
    assert out.placements[0].kind is PlacementKind.REFUSED and not out.placements[0].applied
    assert out.data == CURRENT


def test_claw_code_emptied_text_beside_a_tool_use_is_replaced_by_the_thinking_block() -> None:
    line = (
        b'{"message":{"blocks":[{"text":"<think>plan</think>","type":"text"},'
        b'{"id":"toolu_1","input":"{}","name":"bash","type":"tool_use"}],'
        b'"role":"assistant"},"type":"message"}\n'
    )
    data = CURRENT.split(b"\n", 1)[0] + b"\n" + line
    site = site_at(sites(FMT, read(FMT, data)), 2)
    out = repair(FMT, data, [Repair(site, "", ("plan",))])
    assert out.placements[0].applied and out.placements[0].text_path is None
    assert out.after[1].raw == (
        b'{"message":{"blocks":[{"thinking":"plan","type":"thinking"},'
        b'{"id":"toolu_1","input":"{}","name":"bash","type":"tool_use"}],'
        b'"role":"assistant"},"type":"message"}'
    )


@pytest.mark.parametrize(
    "model,expected",
    [
        ("claude-opus-4-5", True),
        ("anthropic/claude-3.7", True),
        ("opus", True),
        ("qwen3-32b", False),
        ("deepseek-v4-flash", False),
        (None, False),
    ],
)
def test_claw_code_is_anthropic(model: str | None, expected: bool) -> None:
    assert is_anthropic(model) is expected
