"""Aider's `.aider.chat.history.md`: replies as messages, Aider's own thinking section as their
native reasoning, leaks in the answer only, repair into the manifest, as Aider reads it back."""

from __future__ import annotations

import importlib.util
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.formats.aider_history import History, clean, decoys, leaking
from tests.formats.support import read, write
from thinkfix.formats.aider import REASONING_TAG, Aider, split_reply
from thinkfix.formats.repairs import PlacementKind, Repair
from thinkfix.formats.turns import Role
from thinkfix.normalizer.batch import normalize

FMT = Aider()


def _sites(text: str) -> list:  # type: ignore[type-arg]
    records = read(FMT, text.encode())
    return [s for r in records for s in FMT.sites(r)]


def _kinds(text: str) -> list[tuple[int, str]]:
    return [
        (s.line, f.kind.value)
        for s in _sites(text)
        for f in normalize(s.text, native_reasoning=s.native_reasoning).findings
    ]


def _repaired(text: str) -> tuple[bytes, list]:  # type: ignore[type-arg]
    records = read(FMT, text.encode())
    repairs = []
    for r in records:
        for s in FMT.sites(r):
            result = normalize(s.text, native_reasoning=s.native_reasoning)
            if result.changed:
                repairs.append(Repair(s, result.visible, result.extracted))
    after, placements = FMT.apply(records, repairs)
    return write(FMT, after), placements


def test_aider_detects_by_the_run_header_not_the_name() -> None:
    data = leaking().encode()
    assert FMT.detect(data[:4096], "renamed.txt") == 0.95
    assert FMT.detect(b"# Notes\n\n#### a heading\n\n> a quote\n", ".aider.chat.history.md") == 0
    assert FMT.detect(b'{"role": "assistant", "content": "# aider chat started at"}\n') == 0
    assert FMT.detect(b"older text\n\n# aider chat started at 2026-03-02 10:21:07\n") == 0.9


def test_aider_records_tile_the_file_and_write_back_byte_identical() -> None:
    for build in (leaking, clean, decoys):
        data = build().encode()
        records = read(FMT, data)
        assert write(FMT, records) == data
        assert [r.line for r in records] == sorted({r.line for r in records})


def test_aider_counts_replies_only_with_model_and_session_time() -> None:
    found = _sites(leaking())
    assert [s.line for s in found] == [12, 33, 59, 66]
    assert [s.model for s in found] == ["ollama_chat/qwen3:32b"] * 2 + [
        "deepseek/deepseek-reasoner"
    ] * 2
    records = read(FMT, leaking().encode())
    stamps = [r.data["timestamp"] for r in records if r.data.get("role") == "assistant"]
    assert stamps == ["2026-03-02 10:21:07"] * 2 + ["2026-03-03 09:02:44"] * 2


def test_aider_leaks_are_delimiters_in_the_answer() -> None:
    assert _kinds(leaking()) == [
        (12, "block"),
        (33, "orphan_close"),
        (59, "duplicate"),
        (66, "block"),
    ]


def test_aider_own_thinking_section_is_native_reasoning_not_a_leak() -> None:
    found = _sites(clean())
    assert _kinds(clean()) == []
    # the section, closed by Aider's tag or by the model's reasoning_tag, is not the answer
    assert found[0].native_reasoning is not None and "<think>" in found[0].native_reasoning
    assert found[0].text.startswith("utils.py\n```python")
    assert found[1].native_reasoning == "Nothing to do."
    assert found[1].text == "You're welcome."
    assert REASONING_TAG not in "".join(s.text for s in found)


def test_aider_decoys_in_prompts_tool_output_and_code_are_not_leaks() -> None:
    text = decoys()
    assert "#### what does <think> do" in text and "> </think>" in text
    assert len(_sites(text)) == 2
    assert _kinds(text) == []


def test_aider_repair_keeps_every_other_byte_and_places_in_the_manifest() -> None:
    out, placements = _repaired(leaking())
    kinds = [p.kind for p in placements]
    # the duplicate's reasoning is already in Aider's section: nothing to place
    assert kinds == [
        PlacementKind.MANIFEST,
        PlacementKind.MANIFEST,
        PlacementKind.NONE,
        PlacementKind.MANIFEST,
    ]
    text = out.decode()
    assert "<think>" not in text and "</think>" not in text and "<thinking>" not in text
    assert "\nThe timeout is 30 seconds. It is set in `config.py` as `TIMEOUT`.\n\n" in text
    # prompts, tool output, headers and Aider's own section are untouched
    for line in leaking().splitlines():
        if line.startswith(("#### ", "> ", "# aider", f"<{REASONING_TAG}>", f"</{REASONING_TAG}>")):
            assert line in text.splitlines()
    assert "\nHere is the change:\n" in text
    # a second repair changes nothing
    again, placements = _repaired(text)
    assert again == out and placements == []


def test_aider_repair_refuses_a_reply_that_is_all_reasoning() -> None:
    h = History()
    h.start("2026-03-02 10:21:07")
    h.user_input("q")
    h.ai_output("<think>I should check config.py for the timeout value")
    out, placements = _repaired(h.text)
    assert [p.kind for p in placements] == [PlacementKind.REFUSED]
    assert "split_chat_history_markdown" in (placements[0].reason or "")
    assert out == h.text.encode()


def test_aider_repair_refuses_a_reply_that_would_read_back_as_other_turns() -> None:
    h = History()
    h.start("2026-03-02 10:21:07")
    h.user_input("q")
    h.ai_output("Answer\n<think>x</think>> not a quote")
    records = read(FMT, h.text.encode())
    site = next(s for r in records for s in FMT.sites(r))
    result = normalize(site.text)
    assert "\n> not a quote" in result.visible
    after, placements = FMT.apply(records, [Repair(site, result.visible, result.extracted)])
    assert placements[0].kind is PlacementKind.SKIPPED
    assert write(FMT, after) == h.text.encode()


def test_aider_turns_show_prompts_tool_output_and_thinking() -> None:
    turns = [t for r in read(FMT, clean().encode()) for t in FMT.turns(r)]
    roles = [t.role for t in turns]
    assert roles[:3] == [Role.SYSTEM, Role.TOOL, Role.USER]
    user = next(t for t in turns if t.role is Role.USER)
    assert user.parts[0].text == "rename fetch_all to fetch_every"
    reply = next(t for t in turns if t.role is Role.ASSISTANT)
    assert [p.kind.value for p in reply.parts] == ["thinking", "text"]
    assert reply.model == "deepseek/deepseek-reasoner"


def test_aider_split_reply_rebuilds_the_text() -> None:
    text = f"\n<{REASONING_TAG}>\n\nR\n\n</think>\n\nAnswer\n\n"
    lead, native, answer, suffix = split_reply(text)
    assert (native, answer) == ("R", "Answer")
    assert lead + answer + suffix == text
    assert split_reply("\n<think>A</think>B\n\n") == ("\n", None, "<think>A</think>B", "\n\n")


_LINE = st.lists(
    st.sampled_from([*"ab <>/#\n`", "<think>", "</think>", "> ", "#### ", "```\n", "\r\n"]),
    max_size=20,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "tool", "ai", "start"]), _LINE), max_size=12))
def test_aider_any_history_round_trips_and_repair_touches_only_replies(
    steps: list[tuple[str, str]],
) -> None:
    h = History()
    for kind, text in steps:
        if kind == "user":
            h.user_input(text)
        elif kind == "tool":
            h.tool_output(text)
        elif kind == "start":
            h.start("2026-03-02 10:21:07")
        else:
            h.ai_output(text)
    data = h.text.encode()
    assert write(FMT, read(FMT, data)) == data
    out, _ = _repaired(h.text)
    keep = [ln for ln in data.splitlines() if ln.startswith((b"#### ", b"> ", b"# aider"))]
    assert [ln for ln in out.splitlines() if ln.startswith((b"#### ", b"> ", b"# aider"))] == keep
    # no reply vanishes or splits, and a second repair changes nothing
    assert len(_sites(out.decode())) == len(_sites(h.text))
    assert _repaired(out.decode())[0] == out


aider_utils = importlib.util.find_spec("aider")


@pytest.mark.skipif(aider_utils is None, reason="aider-chat is not installed")
def test_aider_own_reader_sees_the_same_turns_without_the_reasoning() -> None:
    from aider.utils import split_chat_history_markdown

    original = leaking()
    out, _ = _repaired(original)
    before = split_chat_history_markdown(original)
    after = split_chat_history_markdown(out.decode())
    assert [m["role"] for m in after] == [m["role"] for m in before]
    changed = [(b, a) for b, a in zip(before, after) if a != b]
    assert len(changed) == 4
    for b, a in changed:
        assert b["role"] == "assistant"
        assert "think>" in b["content"] or "thinking>" in b["content"]
        assert "<think>" not in a["content"] and "</think>" not in a["content"]
        assert "<thinking>" not in a["content"]
    assert json.dumps([m for m in after if m["role"] == "user"]) == json.dumps(
        [m for m in before if m["role"] == "user"]
    )


def test_aider_history_with_a_reply_past_1mb_is_detected_from_its_head() -> None:
    from thinkfix.formats import registry
    from thinkfix.formats.detection import read_head

    h = History()
    h.start("2026-03-02 10:21:07")
    h.user_input("paste the log")
    h.ai_output("log line\n" * 120_000)
    data = h.text.encode()
    assert len(data) > 1 << 20
    found = registry.detect(read_head(io.BytesIO(data)), "renamed.bin")
    assert found is not None and found[0].id == "aider"
    assert len(_sites(h.text)) == 1
