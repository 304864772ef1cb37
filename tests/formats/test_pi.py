"""pi and OpenClaw: sites, signatures, and thinking blocks named after the wire field."""

from __future__ import annotations

from tests.formats.support import DATA, fixture, read, repair, site_at, sites
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("pi")
PI = fixture("2026-01-15T08-30-12-417Z").read_bytes()
OPENCLAW = fixture("9c5e1f7a").read_bytes()
SINGLE = (DATA / "pi_assistant_message.json").read_bytes()


def test_pi_sites_skip_tool_results_and_user_messages() -> None:
    found = sites(FMT, read(FMT, PI))
    assert [(s.line, s.json_path) for s in found] == [
        (5, "message.content[0].text"),
        (7, "message.content[1].text"),
        (9, "message.content[0].text"),
        (11, "message.content[0].text"),
    ]
    assert found[0].session_id == "4b1d6e2a-8c3f-4e5a-9d7b-1f0e2c3a4b5d"
    assert found[0].message_id == "d4e5f6a7"
    assert found[1].native_reasoning.startswith("copyPages only copies page objects")


def test_pi_openai_completions_block_names_the_wire_field_the_file_uses() -> None:
    site = site_at(sites(FMT, read(FMT, PI)), 5)
    out = repair(
        FMT,
        PI,
        [
            Repair(
                site,
                "I'll check how merge copies the document outline.",
                ("The merge code probably copies pages but not the outline.",),
            )
        ],
    )
    content = out.after[4].data["message"]["content"]
    assert content[0] == {
        "type": "thinking",
        "thinking": "The merge code probably copies pages but not the outline.",
        "thinkingSignature": "reasoning",
    }
    assert content[1]["text"] == "I'll check how merge copies the document outline."
    assert content[2]["type"] == "toolCall" and content[2]["id"] == "call_8f2c1d9e4b7a4c3f9e1d"
    assert out.placements[0].kind is PlacementKind.BLOCK
    assert out.placements[0].json_path == "message.content[0]"
    assert out.placements[0].text_path == "message.content[1].text"


def test_pi_node_number_literals_survive_a_repair() -> None:
    site = site_at(sites(FMT, read(FMT, PI)), 7)
    out = repair(FMT, PI, [Repair(site, "`mergeDocuments()` copies pages.", ("I see it.",))])
    assert b'"cacheRead":1.2e-7' in out.after[6].raw
    assert b'"input":0.000814' in out.after[6].raw
    # the native thinking block stays first, the new one goes right before the text
    kinds = [
        b.get("thinkingSignature")
        for b in out.after[6].data["message"]["content"]
        if b["type"] == "thinking"
    ]
    assert kinds == ["reasoning", "reasoning"]
    assert out.after[6].data["message"]["content"][1]["thinking"] == "I see it."


def test_pi_default_wire_field_when_the_file_names_none() -> None:
    data = PI.replace(b'"thinkingSignature":"reasoning"', b'"thinkingSignature":null')
    site = site_at(sites(FMT, read(FMT, data)), 5)
    out = repair(FMT, data, [Repair(site, "x", ("y",))])
    assert out.after[4].data["message"]["content"][0]["thinkingSignature"] == "reasoning_content"


def test_pi_openclaw_copy_takes_the_field_from_another_block() -> None:
    site = site_at(sites(FMT, read(FMT, OPENCLAW)), 9)
    out = repair(
        FMT,
        OPENCLAW,
        [Repair(site, "日志已更新，共82条记录。", ("需要确认日志文件的格式是否一致。",))],
    )
    assert out.after[8].data["message"]["content"][0] == {
        "type": "thinking",
        "thinking": "需要确认日志文件的格式是否一致。",
        "thinkingSignature": "reasoning",
    }
    assert "日志已更新".encode() in out.after[8].raw  # raw UTF-8, not \\u escapes


def test_pi_anthropic_messages_block_has_no_signature() -> None:
    site = site_at(sites(FMT, read(FMT, SINGLE)), 1)
    out = repair(FMT, SINGLE, [Repair(site, "Answer.", ("Plan.",))])
    block = out.after[0].data["content"][1]
    assert block == {"type": "thinking", "thinking": "Plan."}
    assert "unsigned" in out.placements[0].where


def test_pi_single_message_document_keeps_tab_indentation() -> None:
    site = site_at(sites(FMT, read(FMT, SINGLE)), 1)
    out = repair(FMT, SINGLE, [Repair(site, "Answer.", ("Plan.",))])
    assert out.data == SINGLE.replace(
        b'\t\t{\n\t\t\t"type": "text",\n\t\t\t"text": "<think>Plan.</think>Answer."\n\t\t}',
        b'\t\t{\n\t\t\t"type": "thinking",\n\t\t\t"thinking": "Plan."\n\t\t},\n'
        b'\t\t{\n\t\t\t"type": "text",\n\t\t\t"text": "Answer."\n\t\t}',
    )


def test_pi_signed_signature_blocks_are_never_touched() -> None:
    out = repair(FMT, SINGLE, [Repair(site_at(sites(FMT, read(FMT, SINGLE)), 1), "A", ("P",))])
    assert out.after[0].data["content"][0] == read(FMT, SINGLE)[0].data["content"][0]


def test_pi_google_text_signature_marks_the_site_signed() -> None:
    line = (
        b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":'
        b'"assistant","content":[{"type":"text","text":"<think>p</think>a","textSignature":'
        b'"CiQBjz1rX"}],"api":"google-generative-ai","provider":"google","model":"gemini"}}\n'
    )
    (site,) = sites(FMT, read(FMT, line))
    assert site.signed
    out = repair(FMT, line, [Repair(site, "a", ("p",))])
    assert not out.placements[0].applied and out.placements[0].kind is PlacementKind.SKIPPED
    assert out.data == line


def test_pi_responses_text_signature_is_a_message_id_not_a_signature() -> None:
    line = (
        b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":'
        b'"assistant","content":[{"type":"text","text":"<think>p</think>a","textSignature":'
        b'"msg_05686d"}],"api":"openai-responses","provider":"openai","model":"gpt-5"}}\n'
    )
    (site,) = sites(FMT, read(FMT, line))
    assert not site.signed


def test_pi_openclaw_all_reasoning_text_before_a_tool_call_is_replaced_not_emptied() -> None:
    # The real OpenClaw shape: [thinking, text = reasoning + "\n</think>\n", toolCall]. When
    # the whole text is reasoning, the text block goes (never "text": ""), the new thinking
    # block takes its place, and the tool call stays byte for byte.
    site = site_at(sites(FMT, read(FMT, OPENCLAW)), 6)
    reasoning = site.text.removesuffix("\n</think>\n")
    out = repair(FMT, OPENCLAW, [Repair(site, "", (reasoning,))])
    (placement,) = out.placements
    assert placement.applied and placement.text_path is None
    assert placement.json_path == "message.content[1]"
    before, after = (
        out.before[5].data["message"]["content"],
        out.after[5].data["message"]["content"],
    )
    assert after == [
        before[0],
        {"type": "thinking", "thinking": reasoning, "thinkingSignature": "reasoning"},
        before[2],
    ]


def test_pi_all_reasoning_message_with_nothing_else_is_refused() -> None:
    site = site_at(sites(FMT, read(FMT, PI)), 11)
    out = repair(FMT, PI, [Repair(site, "", ("all of it",))])
    assert out.placements[0].kind is PlacementKind.REFUSED and out.data == PI
