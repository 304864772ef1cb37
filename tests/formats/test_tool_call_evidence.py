"""Rule 4's evidence from the message: a text block with a tool call after it in the same
message is marked, so an orphan close that ends the text still splits (issue 10, §3)."""

from __future__ import annotations

import json

import pytest

from tests.formats.support import fixture, read, site_at, sites
from thinkfix import normalize
from thinkfix.formats.common import block_slots
from thinkfix.formats.registry import get

PLAN = "I will read the config first.\n</think>\n"


@pytest.mark.parametrize(
    ("name", "fmt", "line", "path"),
    [
        ("2e8b4f60", "claude-code", 2, "message.content[0].text"),  # text, then tool_use
        ("messages-log", "anthropic", 2, "response.content[0].text"),
        ("session-1775123456789", "claw-code", 1, "messages[1].blocks[0].text"),
        ("9c5e1f7a", "pi", 6, "message.content[1].text"),  # OpenClaw: text, then toolCall
        ("2026-01-15T08-30-12-417Z", "pi", 5, "message.content[0].text"),
        ("session-2026-02-03", "gemini-cli", 1, "messages[1].content"),  # content, then toolCalls
    ],
)
def test_text_before_a_tool_call_block_is_marked(name: str, fmt: str, line: int, path: str) -> None:
    f = get(fmt)
    site = site_at(sites(f, read(f, fixture(name).read_bytes())), line, path)
    assert site.followed_by_tool_call


def test_only_text_before_the_tool_call_is_marked() -> None:
    blocks = [
        {"type": "text", "text": "a"},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}},
        {"type": "text", "text": "b"},
    ]
    assert [s.tool_after for s in block_slots(blocks, ("content",))] == [True, False]
    assert [s.tool_after for s in block_slots(blocks[:1], ("content",))] == [False]


def test_openclaw_orphan_close_before_a_tool_call_splits() -> None:
    f = get("pi")
    site = site_at(sites(f, read(f, fixture("9c5e1f7a").read_bytes())), 6)
    r = normalize(
        site.text,
        native_reasoning=site.native_reasoning,
        followed_by_tool_call=site.followed_by_tool_call,
    )
    assert [x.kind.value for x in r.findings] == ["orphan_close"]
    assert r.visible == "" and r.extracted == (site.text.split("\n</think>")[0],)


def test_openai_chat_content_with_tool_calls_is_marked() -> None:
    doc = {
        "model": "deepseek-reasoner",
        "messages": [
            {"role": "user", "content": "Read the config."},
            {
                "role": "assistant",
                "content": PLAN,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "config.toml"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "[server]"},
            {"role": "assistant", "content": PLAN},
        ],
    }
    f = get("openai-chat")
    found = sites(f, read(f, json.dumps(doc, indent=2).encode()))
    assert [s.followed_by_tool_call for s in found] == [True, False]
    kinds = [
        [
            x.kind.value
            for x in normalize(s.text, followed_by_tool_call=s.followed_by_tool_call).findings
        ]
        for s in found
    ]
    assert kinds == [["orphan_close"], ["stray_close"]]


def test_gemini_cli_text_part_before_a_function_call_part_is_marked() -> None:
    from thinkfix.formats.gemini_cli import _slots

    message = {
        "type": "gemini",
        "content": [
            {"text": PLAN},
            {"functionCall": {"name": "read_file", "args": {"path": "config.toml"}}},
            {"text": "Done."},
        ],
    }
    assert [s.tool_after for s in _slots(message, ())] == [True, False]
