"""Claude Code: sites, and repairs in resumable, archive and annotate modes."""

from __future__ import annotations

import orjson
import pytest

from tests.formats.support import fixture, read, repair, site_at, sites
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import ApplyOptions, PlacementKind, Repair

FMT = get("claude-code")
ONE_PER_LINE = fixture("7f3c2a91").read_bytes()
GLM = fixture("2e8b4f60").read_bytes()

LEAK = (
    "The user says make test fails in orders. I should run the tests first and read the "
    "failure before guessing at the cause."
)
VISIBLE = "Let me run the orders tests to see the failure."


def _leak_repair(data: bytes = ONE_PER_LINE) -> Repair:
    site = site_at(sites(FMT, read(FMT, data)), 5)
    return Repair(site, VISIBLE, (LEAK,))


def test_claude_code_sites_are_assistant_text_only() -> None:
    found = sites(FMT, read(FMT, ONE_PER_LINE))
    assert [(s.line, s.json_path) for s in found] == [
        (5, "message.content[0].text"),
        (8, "message.content[0].text"),
        (11, "message.content[0].text"),
    ]
    first = found[0]
    assert first.session_id == "7f3c2a91-5d4e-4b8a-9c1f-2e6d8a0b4c37"
    assert first.message_id == "msg_01JqA4mYt1dXUe3kG7a9LzQp"
    assert first.model == "claude-opus-4-5-20251101"
    assert first.text.startswith("<thinking>")
    assert not first.signed


def test_claude_code_counts_assistant_messages_with_or_without_text() -> None:
    records = read(FMT, ONE_PER_LINE)
    assert sum(FMT.assistant_messages(r) for r in records) == 6


def test_claude_code_several_blocks_per_line() -> None:
    found = sites(FMT, read(FMT, GLM))
    assert [(s.line, s.json_path) for s in found] == [
        (2, "message.content[0].text"),
        (4, "message.content[0].text"),
        (6, "message.content[0].text"),
        (8, "message.content[0].text"),
    ]


def test_claude_code_string_content_is_a_site() -> None:
    line = (
        b'{"type":"assistant","sessionId":"s","message":{"role":"assistant",'
        b'"content":"<think>x</think>y"},"uuid":"a1","parentUuid":"u1"}\n'
    )
    (site,) = sites(FMT, read(FMT, line))
    assert site.json_path == "message.content"
    out = repair(FMT, line, [Repair(site, "y", ("x",))])
    assert out.data == line.replace(b"<think>x</think>y", b"y")


def test_claude_code_resumable_repair_keeps_reasoning_out_of_the_file() -> None:
    out = repair(FMT, ONE_PER_LINE, [_leak_repair()])
    (placement,) = out.placements
    assert placement.kind is PlacementKind.MANIFEST and placement.applied
    assert b'"type":"thinking","thinking":"The user says' not in out.data
    assert LEAK.encode() not in out.data
    edited = out.after[4]
    assert edited.touched and edited.data["message"]["content"] == [
        {"type": "text", "text": VISIBLE}
    ]
    # the parentUuid chain is untouched
    assert [r.data.get("parentUuid") for r in out.reread] == [
        r.data.get("parentUuid") for r in out.before
    ]


def test_claude_code_archive_repair_inserts_unsigned_thinking_block() -> None:
    out = repair(FMT, ONE_PER_LINE, [_leak_repair()], ApplyOptions(claude_code_mode="archive"))
    (placement,) = out.placements
    assert placement.kind is PlacementKind.BLOCK
    assert placement.json_path == "message.content[0]"
    assert placement.text_path == "message.content[1].text"
    content = out.after[4].data["message"]["content"]
    assert content == [{"type": "thinking", "thinking": LEAK}, {"type": "text", "text": VISIBLE}]
    assert "signature" not in content[0]


def test_claude_code_archive_keeps_signed_thinking_untouched() -> None:
    out = repair(FMT, ONE_PER_LINE, [_leak_repair()], ApplyOptions(claude_code_mode="archive"))
    assert out.after[3].raw == out.before[3].raw  # the signed thinking line


def test_claude_code_annotate_repair_adds_top_level_key() -> None:
    out = repair(FMT, ONE_PER_LINE, [_leak_repair()], ApplyOptions(claude_code_mode="annotate"))
    (placement,) = out.placements
    assert placement.kind is PlacementKind.ANNOTATION
    record = out.after[4]
    assert list(record.data)[-1] == "thinkfix"
    assert record.data["thinkfix"] == {
        "version": 1,
        "repairs": [
            {
                "jsonPath": "message.content[0].text",
                "extractedReasoning": LEAK,
                "originalText": out.before[4].data["message"]["content"][0]["text"],
            }
        ],
    }
    old = out.before[4]
    escaped = orjson.dumps(old.data["message"]["content"][0]["text"])
    head, _, _ = record.raw.partition(b',"thinkfix":')
    assert head == old.raw[:-1].replace(escaped, b'"' + VISIBLE.encode() + b'"')


def _all_reasoning(line: int) -> Repair:
    site = site_at(sites(FMT, read(FMT, GLM)), line)
    return Repair(site, "", (site.text.removeprefix("<think>\n"),))


@pytest.mark.parametrize("mode", ["resumable", "annotate"])
def test_claude_code_all_reasoning_message_is_refused_not_emptied(mode: str) -> None:
    # Issue 10: line 8 used to become [{"type":"text","text":""}], which the API rejects
    # (`claude --resume` fails with a 400) and viewers drop with its usage.
    out = repair(FMT, GLM, [_all_reasoning(8)], ApplyOptions(claude_code_mode=mode))
    placement = out.placements[0]
    assert not placement.applied and placement.kind is PlacementKind.REFUSED
    assert placement.reason is not None and "nothing visible would remain" in placement.reason
    assert out.data == GLM


def test_claude_code_all_reasoning_message_in_archive_mode_gets_a_placeholder() -> None:
    repair_ = _all_reasoning(8)
    out = repair(FMT, GLM, [repair_], ApplyOptions(claude_code_mode="archive"))
    placement = out.placements[0]
    assert placement.applied and placement.kind is PlacementKind.BLOCK
    content = out.after[7].data["message"]["content"]
    assert content[0] == {"type": "thinking", "thinking": repair_.thinking[0]}
    assert content[1]["type"] == "text" and content[1]["text"] == placement.placeholder
    assert placement.placeholder is not None and "thinking block above" in placement.placeholder
    assert placement.text_path == "message.content[1].text"


@pytest.mark.parametrize("mode", ["resumable", "archive", "annotate"])
def test_claude_code_emptied_text_beside_a_tool_call_is_dropped(mode: str) -> None:
    repair_ = _all_reasoning(2)
    out = repair(FMT, GLM, [repair_], ApplyOptions(claude_code_mode=mode))
    placement = out.placements[0]
    assert placement.applied and placement.text_path is None
    assert "the emptied text block was removed" in placement.where
    old = out.before[1].data["message"]["content"]
    content = out.after[1].data["message"]["content"]
    if mode == "archive":
        assert content == [{"type": "thinking", "thinking": repair_.thinking[0]}, old[1]]
        assert placement.json_path == "message.content[0]"
    else:
        assert content == [old[1]]
    assert out.after[1].data["message"]["usage"] == out.before[1].data["message"]["usage"]


@pytest.mark.parametrize("mode", ["resumable", "archive", "annotate"])
def test_claude_code_repair_of_every_leak_in_each_mode(mode: str) -> None:
    found = sites(FMT, read(FMT, GLM))
    repairs = [
        Repair(s, s.text.split("\n\n")[-1] if "</think>" in s.text else "", ("reasoning",))
        for s in found
    ]
    out = repair(FMT, GLM, repairs, ApplyOptions(claude_code_mode=mode))
    # Line 8 is all reasoning: only archive mode (never resumed) may place it, with a
    # placeholder text; otherwise it is refused rather than left as an empty text block.
    assert [p.applied for p in out.placements] == [True, True, True, mode == "archive"]
    assert len(out.after) == len(out.before)


def test_claude_code_native_reasoning_from_an_earlier_line_of_the_same_message() -> None:
    lines = (
        b'{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":'
        b'[{"type":"thinking","thinking":"plan","signature":"sig"}]},"uuid":"a1"}\n'
        b'{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":'
        b'[{"type":"text","text":"<think>plan</think>Answer"}]},"uuid":"a2"}\n'
        b'{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":'
        b'[{"type":"text","text":"Other"}]},"uuid":"a3"}\n'
    )
    first, second = sites(FMT, read(FMT, lines))
    assert first.native_reasoning == "plan"
    assert second.native_reasoning is None
