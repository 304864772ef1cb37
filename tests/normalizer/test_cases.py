"""Every documented example, as data: DESIGN.md's damage table, the rules, seeds 000 and 001,
and the shapes the peers' own parser tests pin (`peer-*`, each with its `source`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thinkfix import Label, Policy, normalize

from .conftest import batch_pair, stream

CASES = json.loads((Path(__file__).with_name("cases.json")).read_text(encoding="utf-8"))


def _policy(case: dict) -> Policy:
    return Policy(**case.get("policy", {}))


def _context(case: dict) -> dict[str, object]:
    """What the caller knows beyond the text: a template-opened block, a tool call after it,
    the model the record names."""
    return {
        k: case[k] for k in ("start_in_reasoning", "followed_by_tool_call", "model") if k in case
    }


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_normalize_case(case: dict) -> None:
    r = normalize(
        case["text"], native_reasoning=case.get("native"), policy=_policy(case), **_context(case)
    )
    assert r.visible == case["visible"]
    assert list(r.thinking) == case["thinking"]
    assert [f.kind.value for f in r.findings] == case["kinds"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_stream_case_one_char_chunks_equal_batch(case: dict) -> None:
    policy = _policy(case)
    chunks = list(case["text"])
    r = normalize(
        case["text"], native_reasoning=case.get("native"), policy=policy, **_context(case)
    )
    assert stream(chunks, policy=policy, native_reasoning=case.get("native"), **_context(case)) == (
        r.visible,
        "\n\n".join(r.extracted),
    )


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_normalize_case_spans_tile_the_input(case: dict) -> None:
    r = normalize(
        case["text"], native_reasoning=case.get("native"), policy=_policy(case), **_context(case)
    )
    assert "".join(case["text"][s.start : s.end] for s in r.spans) == case["text"]
    assert all(a.end == b.start for a, b in zip(r.spans, r.spans[1:]))


def test_normalize_block_labels_delimiters() -> None:
    r = normalize("<think>plan</think>Answer")
    labels = [(r.text[s.start : s.end], s.label) for s in r.spans]
    assert labels == [
        ("<think>", Label.DELIMITER),
        ("plan", Label.THINKING),
        ("</think>", Label.DELIMITER),
        ("Answer", Label.VISIBLE),
    ]


def test_normalize_finding_offsets_cover_the_block() -> None:
    text = "Intro\n<think>r</think>\nAnswer"
    (f,) = normalize(text).findings
    assert text[f.start : f.end] == "<think>r</think>"
    assert f.tag == "<think>"


def test_stream_split_close_tag_does_not_leak() -> None:
    assert stream(["<think>plan</thi", "nk>Answer"]) == ("Answer", "plan")
    assert stream(["plan</thi", "nk>", "Answer"]) == ("Answer", "plan")


@pytest.mark.parametrize(
    "case", [c for c in CASES if c["id"].startswith("peer-")], ids=lambda c: c["id"]
)
def test_peer_case_names_its_source(case: dict) -> None:
    assert case["source"].strip()


@pytest.mark.parametrize(
    "case", [c for c in CASES if c["id"].startswith("peer-")], ids=lambda c: c["id"]
)
def test_stream_peer_case_every_two_way_split_equals_batch(case: dict) -> None:
    """Every chunking of the peers' shapes, not only one character at a time: each cut point
    (the property tests draw the rest at random)."""
    text, policy = case["text"], _policy(case)
    r = normalize(text, native_reasoning=case.get("native"), policy=policy, **_context(case))
    want = (r.visible, "\n\n".join(r.extracted))
    for cut in range(len(text) + 1):
        chunks = [text[:cut], text[cut:]]
        got = stream(chunks, policy=policy, native_reasoning=case.get("native"), **_context(case))
        assert got == want, cut


def test_stream_thought_opener_in_three_deltas() -> None:
    """The per-token shape a server streams for a textual `<thought>`: `<`, `thought`, `>`."""
    chunks = ["<", "thought", ">", "\n", "Thinking", " Process", ":", " analyze", "\n"]
    chunks += ["</", "thought", ">", "\n", "Great", ", will you vote?"]
    assert stream(chunks) == ("Great, will you vote?", "Thinking Process: analyze")


def test_stream_seed001_split_across_deltas() -> None:
    chunks = ["<thi", "nking", ">", "hidden ", "stuff", "</thi", "nking>", "out"]
    assert stream(chunks) == ("out", "hidden stuff")


def test_stream_start_in_reasoning_streams_thinking_immediately() -> None:
    from thinkfix import StreamNormalizer

    s = StreamNormalizer(start_in_reasoning=True)
    assert s.feed("step one ").thinking == "step one"
    assert s.feed("two</think>\n\nAns").visible == "Ans"
    assert s.feed("wer").visible == "wer"
    assert s.finish().visible == ""


def test_stream_holdback_bounds_withheld_text() -> None:
    from thinkfix import StreamNormalizer

    s = StreamNormalizer(holdback=10)
    first = s.feed("A visible answer that is long")
    assert first.visible.startswith("A visible answer")
    rest = s.feed(" and then</think>tail")
    done = s.finish()
    # the window closed, so the late orphan close only loses its delimiter
    assert (
        first.visible + rest.visible + done.visible == "A visible answer that is long and thentail"
    )
    assert [f.kind.value for f in s.findings] == ["stray_close"]


def test_normalize_batch_equals_unbounded_stream_with_start_in_reasoning() -> None:
    text = "plan\n</think>\n\nAnswer"
    assert stream(list(text), start_in_reasoning=True) == batch_pair(text, start_in_reasoning=True)
    assert batch_pair(text, start_in_reasoning=True) == ("Answer", "plan")


def test_stream_finish_takes_the_tool_call_evidence() -> None:
    """A live runtime learns that a tool call followed only when the message ends."""
    from thinkfix import StreamNormalizer

    s = StreamNormalizer()
    deltas = [s.feed("I will read the config first.\n"), s.feed("</think>")]
    done = s.finish(followed_by_tool_call=True)
    assert "".join(d.visible for d in [*deltas, done]) == ""
    assert "".join(d.thinking for d in [*deltas, done]) == "I will read the config first."
    assert [f.kind.value for f in s.findings] == ["orphan_close"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_normalize_case_is_idempotent(case: dict) -> None:
    # What a repair stores must not change when it is normalized again (DESIGN.md).
    policy = _policy(case)
    once = normalize(
        case["text"], native_reasoning=case.get("native"), policy=policy, **_context(case)
    ).visible
    assert normalize(once, policy=policy).visible == once
