"""OpenAI chat logs: every container shape, and the reasoning field the file already uses."""

from __future__ import annotations

import pytest

from tests.formats.support import fixture, read, repair, site_at, sites
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("openai-chat")
CONVERSATION = fixture("deepseek-conversation").read_bytes()
LOG = fixture("openrouter-chat").read_bytes()


def test_openai_chat_conversation_sites_skip_tool_and_user_messages() -> None:
    found = sites(FMT, read(FMT, CONVERSATION))
    assert [s.json_path for s in found] == [
        "messages[2].content",
        "messages[6].content",
        "messages[8].content",
    ]
    assert found[0].model == "deepseek-r1-distill-qwen-32b"
    assert found[1].native_reasoning == "The tool printed False True."


def test_openai_chat_repair_adds_reasoning_content_after_content() -> None:
    site = site_at(sites(FMT, read(FMT, CONVERSATION)), 1, "messages[2].content")
    visible = site.text.split("</think>\n\n")[1]
    out = repair(FMT, CONVERSATION, [Repair(site, visible, ("Leap years are divisible by 4.",))])
    message = out.after[0].data["messages"][2]
    assert list(message) == ["role", "content", "reasoning_content"]
    assert message["reasoning_content"] == "Leap years are divisible by 4."
    assert out.placements[0].kind is PlacementKind.FIELD
    assert out.placements[0].json_path == "messages[2].reasoning_content"
    assert b'    {\n      "role": "assistant",\n      "content": "```python' in out.data
    assert b'",\n      "reasoning_content": "Leap years are divisible by 4."\n    },' in out.data


def test_openai_chat_repair_appends_to_existing_reasoning_content() -> None:
    site = site_at(sites(FMT, read(FMT, CONVERSATION)), 1, "messages[6].content")
    out = repair(
        FMT,
        CONVERSATION,
        [Repair(site, "`is_leap(1900)` is `False`.", ("1900 is not a leap year.",))],
    )
    message = out.after[0].data["messages"][6]
    assert list(message) == ["role", "reasoning_content", "content"]
    assert (
        message["reasoning_content"] == "The tool printed False True.\n\n1900 is not a leap year."
    )


def test_openai_chat_uses_the_field_the_file_already_uses() -> None:
    site = site_at(sites(FMT, read(FMT, LOG)), 5)
    out = repair(FMT, LOG, [Repair(site, "Yes, 97 is prime.", ("97 is not divisible.",))])
    assert out.after[4].raw == (
        b'{"role":"assistant","content":"Yes, 97 is prime.","reasoning":"97 is not divisible."}'
    )


def test_openai_chat_never_touches_reasoning_details() -> None:
    site = site_at(sites(FMT, read(FMT, LOG)), 7)
    out = repair(FMT, LOG, [Repair(site, "Primes.", ("101 is prime.",))])
    before, after = out.before[6].data, out.after[6].data
    assert after["reasoning_details"] == before["reasoning_details"]
    assert after["content"] == "Primes." and after["reasoning"] == "101 is prime."


def test_openai_chat_all_reasoning_content_is_refused_not_emptied() -> None:
    # Issue 10: line 7 (unclosed, all reasoning) used to become "content": "".
    site = site_at(sites(FMT, read(FMT, LOG)), 7)
    out = repair(FMT, LOG, [Repair(site, "", ("101 is prime.",))])
    assert out.placements[0].kind is PlacementKind.REFUSED and out.data == LOG


def test_openai_chat_two_parts_of_one_message_share_one_field() -> None:
    line = (
        b'{"role":"assistant","content":[{"type":"text","text":"<think>a</think>x"},'
        b'{"type":"text","text":"<think>b</think>y"}]}\n'
    )
    first, second = sites(FMT, read(FMT, line))
    out = repair(FMT, line, [Repair(first, "x", ("a",)), Repair(second, "y", ("b",))])
    assert out.after[0].data == {
        "role": "assistant",
        "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}],
        "reasoning_content": "a\n\nb",
    }
    assert [p.applied for p in out.placements] == [True, True]


@pytest.mark.parametrize(
    "data,path",
    [
        (
            b'[{"role":"user","content":"q"},{"role":"assistant","content":"<think>r</think>a"}]',
            "[1].content",
        ),
        (
            (
                b'{"id":"chatcmpl-1","object":"chat.completion","model":"qwq","choices":[{"index":0,'
                b'"message":{"role":"assistant","content":"<think>r</think>a"},"finish_reason":"stop"}]}'
            ),
            "choices[0].message.content",
        ),
        (
            (
                b'{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":'
                b'"<think>r</think>a"}]}\n{"messages":[{"role":"user","content":"q2"}]}\n'
            ),
            "messages[1].content",
        ),
    ],
)
def test_openai_chat_container_shapes(data: bytes, path: str) -> None:
    assert FMT.detect(data) >= 0.5
    (site,) = sites(FMT, read(FMT, data))
    assert site.json_path == path
    out = repair(FMT, data, [Repair(site, "a", ("r",))])
    assert out.placements[0].json_path == path.removesuffix("content") + "reasoning_content"
