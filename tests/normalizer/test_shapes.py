"""The common leak shapes settled without the scanner (`normalizer.shapes`, #26 item 2) give
exactly the general path's `Result`: the same spans, findings and native reasoning, so the
same visible text and thinking, on texts built around every delimiter family's opener and
close, with noise that looks like a delimiter (halves, code markers, prose mentions,
detokenised Harmony words) before, inside and after them."""

from __future__ import annotations

from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thinkfix import normalize
from thinkfix.normalizer import batch
from thinkfix.normalizer.kinds import LeakKind
from thinkfix.normalizer.policy import DEFAULT, Policy
from thinkfix.normalizer.shapes import settle
from thinkfix.normalizer.spans import Result

from .strategies import MODELS, NATIVE, POLICIES, SETTINGS, TEXTS
from .test_fixed_cost import XML_TAGS

OPENERS = (
    st.sampled_from(
        [
            "<think>",
            "<thinking>",
            "<THINK>",
            "< think >",
            '<think reason="x">',
            "<reasoning>",
            "<|begin_of_thought|>",
            "◁think▷",
            "[THINK]",
            "<seed:think>",
            "<|START_THINKING|>",
            "<|channel|>analysis<|message|>",
            "<mm:think>",
            "<|channel>thought",
            "<|channel>",
            "<|inner_prefix|>",
            "<think/>",
            "<answer>",
        ]
    )
    | XML_TAGS
)
CLOSES = (
    st.sampled_from(
        [
            "</think>",
            "</thinking>",
            "</ Think >",
            "</reasoning>",
            "<|end_of_thought|>",
            "◁/think▷",
            "[/THINK]",
            "</seed:think>",
            "<|END_THINKING|>",
            "<|end|>",
            "</mm:think>",
            "<channel|>",
            "<|inner_suffix|>",
            "</answer>",
            "```</think>",
        ]
    )
    | XML_TAGS
)
_PROSE = ["word", "x", " ", "  ", "\n", "\n\n", "\r\n", "\t", "\ufeff", "\u00a0", "答え"]
#: Text between the delimiters: words and every kind of blank, and (half of the time) what
#: looks like (a part of) a delimiter or a code marker.
FILL = st.lists(st.sampled_from(_PROSE), max_size=8).map("".join) | st.lists(
    st.sampled_from(
        [
            *_PROSE,
            "<",
            ">",
            "a < b",
            "`",
            "~",
            "~~~",
            "```\n",
            "<thi",
            "nk>",
            "[",
            "[THI",
            "|",
            "analysis",
            "assistantfinal",
            "<think ",
            " <think> ",
            "Use the </think> tag",
            "<tool_call>",
        ]
    ),
    max_size=8,
).map("".join)
#: Visible text with code (rule 2): fences and inline spans, closed or not, with
#: delimiters inside and around them.
CODE = st.lists(
    st.sampled_from(
        [
            *_PROSE,
            "```\n<think>x</think>\n```\n",
            "```html\n<think>not a leak</think>\n```",
            "  ```\n",
            "\n```\n",
            "````\n",
            "~~~\n</think>\n~~~\n",
            "~~",
            "`<think>`",
            "``a`</think>``",
            "`",
            "``",
            "```",
            "<think>",
            "</think>",
            "<thi",
            "Vec<u8>",
        ]
    ),
    max_size=10,
).map("".join)
BLANKS = st.text(" \t\r\n\ufeff\u00a0", max_size=4)
SHAPED = (
    st.tuples(BLANKS, OPENERS, FILL, CLOSES, FILL | CODE).map("".join)
    | st.tuples(FILL, CLOSES, FILL | CODE).map("".join)
    | st.tuples(BLANKS, st.sampled_from(["word", "plan\n", "x "]), CLOSES, FILL).map("".join)
    | CODE
)


def _general(text: str, **kwargs: object) -> Result:
    """`normalize` through the scanner alone."""
    with patch.object(batch, "settle", lambda *_: None):
        return normalize(text, **kwargs)  # type: ignore[arg-type]


def _same(text: str, **kwargs: object) -> None:
    fast, general = normalize(text, **kwargs), _general(text, **kwargs)  # type: ignore[arg-type]
    assert fast == general
    assert fast.visible == general.visible
    assert fast.thinking == general.thinking


@SETTINGS
@given(
    text=SHAPED,
    policy=POLICIES,
    followed=st.booleans(),
    model=MODELS,
    native=st.none() | st.just("plan"),
)
def test_a_shaped_text_settles_as_the_scanner_reads_it(
    text: str, policy: Policy, followed: bool, model: str | None, native: str | None
) -> None:
    _same(text, policy=policy, followed_by_tool_call=followed, model=model, native_reasoning=native)


@SETTINGS
@given(text=TEXTS, policy=POLICIES, followed=st.booleans(), model=MODELS, native=NATIVE)
def test_any_text_settles_as_the_scanner_reads_it(
    text: str, policy: Policy, followed: bool, model: str | None, native: str | None
) -> None:
    _same(text, policy=policy, followed_by_tool_call=followed, model=model, native_reasoning=native)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("<think>plan</think>Answer", LeakKind.BLOCK),
        ("\n<thinking>\n  plan\n</thinking>\n\n  Answer\n", LeakKind.BLOCK),
        ("◁think▷plan◁/think▷Answer", LeakKind.BLOCK),
        ("plan\n</think>\n\nAnswer", LeakKind.ORPHAN_CLOSE),
        ("Answer.</think>", LeakKind.STRAY_CLOSE),
        ("<think>plan</think>Answer:\n```\n<think>\n```\n`<think>`", LeakKind.BLOCK),
    ],
)
def test_the_common_shapes_take_the_short_way(text: str, kind: LeakKind) -> None:
    """Not vacuous: these settle without the scanner, as the general path reads them."""
    shaped = settle(text, DEFAULT, False, None)
    assert shaped is not None
    assert [f.kind for f in shaped.findings] == [kind]
    assert shaped == _general(text)


def test_text_with_only_code_takes_the_short_way() -> None:
    """Delimiters inside code are text: nothing to find, the text visible as it is."""
    text = "See:\n\n```html\n<think>not a leak</think>\n```\nand `<think>` too."
    shaped = settle(text, DEFAULT, False, None)
    assert shaped is not None
    assert shaped.findings == () and shaped.visible == text
    assert shaped == _general(text)


@pytest.mark.parametrize(
    "text",
    [
        "<think>plan</think>\n```\ncode\n```",  # a code marker right after it
        "<think>a</think>b<think>c</think>",  # a second block
        "Use the </think> tag",  # a prose mention
        "<thi plan</think>Answer",  # an unfinished delimiter before the close
        "<think></think>Answer",  # an empty block
        "<think>plan",  # unclosed
    ],
)
def test_other_texts_go_the_general_way(text: str) -> None:
    """And these go the general way (the scanner decides them)."""
    assert settle(text, DEFAULT, False, None) is None
    assert normalize(text) == _general(text)
