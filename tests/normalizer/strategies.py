"""Hypothesis strategies shared by the normalizer's property tests: texts built from
every delimiter family and the noise that looks like them."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from thinkfix import Policy

DELIMITERS = [
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "<thought>",
    "</thought>",
    "<reasoning>",
    "</reasoning>",
    "<reason>",
    "</reason>",
    "<reflection>",
    "</reflection>",
    "<THINK>",
    "< think >",
    "</ Think >",
    '<think reason="x">',
    "<think/>",
    "<|begin_of_thought|>",
    "<|end_of_thought|>",
    "<|begin_of_solution|>",
    "<|end_of_solution|>",
    "◁think▷",
    "◁/think▷",
    "[THINK]",
    "[/THINK]",
    "<seed:think>",
    "</seed:think>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|channel|>analysis<|message|>",
    "<|end|>",
    "<|start|>assistant<|channel|>final<|message|>",
    "<|return|>",
    "analysis",
    "assistantfinal",
    # issue 21: the shapes the peers' tests pin
    "<|channel>",
    "<|inner_prefix|>",
    "<|inner_suffix|>",
    "<|start|><|channel|>analysis<|message|>",
    "<|channel|>commentary to=functions.f <|constrain|>json<|message|>",
    "<|call|>",
    "```</think>",
    "\n```</think>",
    # issue 10: MiniMax, Gemma 4's thought channel, answer wrappers, tool-call openers
    "<mm:think>",
    "</mm:think>",
    "<|channel>thought",
    "<|channel>thought\n",
    "<channel|>",
    "<answer>",
    "</answer>",
    "<response>",
    "</response>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<tool_call>",
    "[TOOL_CALLS]",
    "<｜tool▁calls▁begin｜>",
]
NOISE = [
    "<",
    ">",
    "/",
    "<thinker>",
    "<div>",
    "a < b",
    "`",
    "``",
    "```",
    "~~~",
    "\n",
    "\r\n",
    " ",
    "\t",
    "\ufeff",
    "\u00a0",
    "x",
    "word",
    "答え",
    "🎉",
    "<thi",
    "nk>",
    "|",
    "[",
]
# Halves of delimiters: removing a block between two of them must not join them into a new one.
HALVES = [
    "<thi",
    "nk>",
    "<th",
    "ink>",
    "</",
    "</thi",
    "think>",
    "< ",
    "<think ",
    'a="x',
    '">',
    "<think\n",
    "[THI",
    "NK]",
    "[/",
    "<|channel|>",
    "final<|message|>",
    "<|begin_of",
    "_thought|>",
    "◁thi",
    "nk▷",
    "<|start|>assistant",
    "<|START_",
    "THINKING|>",
    "<seed:",
    "think>",
    "```\n",
    "~~~\n",
    "`",
    "<mm:",
    "<|channel>",
    "thought",
    "<channel",
    "|>",
    "<ans",
    "wer>",
    "<tool_",
    "call>",
    "<think and ",
    "<think a=",
    "<|channel|>commentary to=",
    "functions.f",
    "<|constrain|>",
    "<|message|>",
    "<|inner_",
    "prefix|>",
]
FRAGMENTS = st.sampled_from(DELIMITERS + NOISE)
TEXTS = (
    st.lists(FRAGMENTS, max_size=24).map("".join)
    | st.text(max_size=40)
    | st.lists(st.sampled_from(DELIMITERS[:12] + HALVES + ["x", " ", "\n"]), max_size=16).map(
        "".join
    )
    | st.lists(
        st.sampled_from(
            DELIMITERS[-14:]
            + DELIMITERS[:4]
            + [
                "<|begin_of_solution|>",
                "<|end_of_solution|>",
                "x",
                " ",
                "\n",
                "\n\n",
                "<",
                "<think ",
            ]
        ),
        max_size=16,
    ).map("".join)
)
POLICIES = st.builds(
    Policy,
    orphan_close=st.sampled_from(["auto", "split", "strip"]),
    trim=st.booleans(),
    protect_code=st.booleans(),
    native=st.sampled_from(["dedupe", "native-only", "merge"]),
    prose_delimiters=st.booleans(),
)
NATIVE = st.none() | st.sampled_from(["", "plan", "word x", "<think>word</think>"])
#: The model a record names: a gpt-oss model's text may be detokenised Harmony.
MODELS = st.sampled_from([None, "gpt-oss-120b", "qwen3"])


@st.composite
def partitions(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
