"""The byte prefilter never skips a record whose text the normalizer would flag."""

from __future__ import annotations

import json
import re

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thinkfix.engine.scan.prefilter import delimiter_candidates, delimiter_test
from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.policy import DEFAULT, Policy

PIECES = [
    "<think>",
    "</think>",
    "<thinking>",
    "< / THINK >",
    "<think\n>",
    "<\nthink>",
    "<\t/ think>",
    "<reason x='1'>",
    "</reflection>",
    "<think/>",
    "[THINK]",
    "[/THINK]",
    "◁think▷",
    "◁/think▷",
    "<|begin_of_thought|>",
    "<|end_of_thought|>",
    "<|begin_of_solution|>",
    "<seed:think>",
    "</seed:think>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|channel|>analysis",
    "<|message|>",
    "<|end|>",
    "<|start|>assistant",
    "analysis",
    "assistantfinal",
    "Here is my thought process:",
    "Here is my response:",
    "<mm:think>",
    "</mm:think>",
    "<|channel>thought",
    "<channel|>",
    "<answer>",
    "</answer>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<tool_call>",
    "`",
    "```",
    "\n",
    " ",
    "\t",
    "\r\n",
    "\u00a0",
    "a",
    "plan",
    "<",
    ">",
    "/",
    "é",
    "日本",
    "\\",
    '"',
    "&",
    "'",
    "think",
    # letters whose Unicode case folding is an ASCII letter of a tag name (KELVIN SIGN for
    # `k`, LONG S for `s`, dotted and dotless I): the tag names fold in ASCII on both sides
    "thin",
    "\u212a",
    "\u017f",
    "\u0130",
    "\u0131",
]
POLICIES = [
    DEFAULT,
    DEFAULT.with_changes(prose_delimiters=True),
    DEFAULT.with_changes(harmony=False, tags=("thought",)),
    DEFAULT.with_changes(special_pairs=()),
]


def _html_safe(data: bytes) -> bytes:
    """Go's encoding/json and other HTML-safe encoders."""
    return data.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


ENCODERS = {
    "orjson": lambda v: orjson.dumps(v),
    "python-ascii": lambda v: json.dumps(v).encode(),
    "python-utf8": lambda v: json.dumps(v, ensure_ascii=False).encode(),
    "python-indent": lambda v: json.dumps(v, indent=2).encode(),
    "html-safe": lambda v: _html_safe(orjson.dumps(v)),
    "slash-escaped": lambda v: orjson.dumps(v).replace(b"/", b"\\/"),
}


def _record(text: str) -> dict[str, object]:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=12).map("".join)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=texts,
    policy_index=st.integers(0, len(POLICIES) - 1),
    encoder=st.sampled_from(sorted(ENCODERS)),
)
def test_prefilter_never_skips_a_leak(text: str, policy_index: int, encoder: str) -> None:
    policy: Policy = POLICIES[policy_index]
    if not normalize(text, policy=policy).findings:
        return
    raw = ENCODERS[encoder](_record(text))
    assert delimiter_test(policy)(raw), (text, encoder)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"text":"\\u003cthink>plan\\u003c/think>answer"}',
        b'{"text":"\\u003Cthink\\u003Eplan"}',
        b'{"input":"{\\"text\\":\\"\\\\u003cthink>\\"}"}',
        b'{"text":"<\\/think>answer"}',
        b'{"text":"<\\n think>plan"}',
        b'{"text":"\\u25c1think\\u25b7plan"}',
        b'{"text":"\\u25C1/think\\u25B7answer"}',
        b'{"text":"\\n analysis then assistantfinal answer"}',
        b'{"text":"x[/THINK]y"}',
    ],
)
def test_prefilter_keeps_escaped_delimiters(raw: bytes) -> None:
    assert delimiter_test(DEFAULT)(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"text":"a < b and c > d; we think so"}',
        b'{"text":"<div class=\\"x\\">reasoning</div>"}',
        b'{"text":"Vec<u8> and \\u001b[0m colours, caf\\u00e9"}',
        b'{"text":"an analysis of the code"}',
    ],
)
def test_prefilter_skips_plain_text(raw: bytes) -> None:
    assert not delimiter_test(DEFAULT)(raw)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    batch=st.lists(texts, max_size=8),
    policy_index=st.integers(0, len(POLICIES) - 1),
    encoder=st.sampled_from(sorted(ENCODERS)),
)
def test_prefilter_batch_equals_one_by_one(
    batch: list[str], policy_index: int, encoder: str
) -> None:
    policy = POLICIES[policy_index]
    raws = [ENCODERS[encoder](_record(t)) for t in batch]
    one = delimiter_test(policy)
    assert delimiter_candidates(policy)(raws) == {i for i, r in enumerate(raws) if one(r)}


def test_a_check_is_compiled_only_when_its_anchor_occurs() -> None:
    """#13 start-up: compiling every anchor's check cost a few ms of each run, and most
    anchors occur in no clean session."""
    from thinkfix.engine.scan.prefilter import _compile

    policy = Policy(tags=("think", "reasoning"))
    candidates = delimiter_candidates(policy)
    clean = [b'{"text":"plain prose, no markup"}', b'{"text":"more of it"}']
    assert candidates(clean) == set()
    checks = [check for _, check in _compile(policy) if check is not None]
    assert checks and all(check._pattern is None for check in checks)
    assert candidates([*clean, b'{"text":"a <think> b"}']) == {2}
    assert any(check._pattern is not None for check in checks)


def _one_lt_check(policy: Policy) -> list[tuple[bytes, re.Pattern[bytes] | None]]:
    """The stages with every check that starts at `<` joined into one, under the anchor `<`:
    the test as one regex of everything that may follow `<` gave it (before #26 item 3)."""
    from thinkfix.engine.scan.prefilter import _compile

    stages: list[tuple[bytes, re.Pattern[bytes] | None]] = []
    lt: list[bytes] = []
    for anchor, check in _compile(policy):
        if anchor.startswith(b"<") and check is not None:
            lt.append(check.source)
        else:
            stages.append((anchor, None if check is None else check.pattern))
    if lt:
        stages.append((b"<", re.compile(b"|".join(lt))))
    return stages


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=texts,
    policy_index=st.integers(0, len(POLICIES) - 1),
    encoder=st.sampled_from(sorted(ENCODERS)),
)
def test_anchoring_a_literal_on_its_second_character_keeps_every_answer(
    text: str, policy_index: int, encoder: str
) -> None:
    """A `<` literal whose second character no encoder escapes is anchored on both (`<|`,
    `<s`): a record holding the literal holds the anchor in every spelling, so the answers
    are those of one `<` check over every alternative."""
    policy = POLICIES[policy_index]
    raw = ENCODERS[encoder](_record(text))
    one = any(
        anchor in raw and (check is None or check.search(raw) is not None)
        for anchor, check in _one_lt_check(policy)
    )
    assert delimiter_test(policy)(raw) is one, (text, encoder)


def test_markup_in_code_compiles_only_the_tag_names_check() -> None:
    """#26 item 3: a clean session's `<` (code, HTML) compiled one check of every literal
    that starts with `<` (895 characters, ~10 M instructions of each start-up); now it
    compiles the tag names' check, and the literals' checks wait for their own anchors."""
    from thinkfix.engine.scan.prefilter import _compile

    policy = Policy()
    _compile.cache_clear()  # checks compiled by the tests before
    code = [b'{"text":"fn f() -> Vec<u8> { <div>x</div> }"}', b'{"text":"a < b"}']
    assert delimiter_candidates(policy)(code) == set()
    compiled = [check.source for _, check in _compile(policy) if check and check._pattern]
    assert len(compiled) == 1
    # nor spelled (each character of each literal in each way JSON may write it) the others
    assert sum(1 for _, check in _compile(policy) if check and check._source) == 1
    assert b"think" in compiled[0] and b"channel" not in compiled[0]
    assert delimiter_candidates(policy)([*code, b'{"text":"<|channel|>analysis"}']) == {2}


#: Characters whose Unicode case folding (`re`'s `(?i)` over str, `str.lower`) is an ASCII
#: letter, against the letter: what a tag name spelled with one would fold to.
UNICODE_FOLDS = {"\u212a": "k", "\u017f": "s", "\u0130": "i", "\u0131": "i"}


@pytest.mark.parametrize("encoder", sorted(ENCODERS))
@pytest.mark.parametrize("policy", POLICIES, ids=range(len(POLICIES)))
def test_a_tag_name_spelled_with_a_unicode_fold_is_text_on_both_sides(
    policy: Policy, encoder: str
) -> None:
    """`<thin\\u212a>` (KELVIN SIGN) was a tag to the normalizer (Unicode case folding) and no
    delimiter to the byte prefilter (ASCII folding), so the default scan counted its leak
    clean where `--parse-all` found it (review8, finding 3). Tag names fold in ASCII on both
    sides now: each such spelling of every tag is text to both, in every encoding."""
    cases = 0
    for tag in policy.tags:
        for char, letter in UNICODE_FOLDS.items():
            for at in [i for i, c in enumerate(tag) if c == letter]:
                name = tag[:at] + char + tag[at + 1 :]
                for text in (f"<{name}>plan</{name}>Done.", f"plan</{name}>Done."):
                    cases += 1
                    found = bool(normalize(text, policy=policy).findings)
                    raw = ENCODERS[encoder](_record(text))
                    assert not found, text
                    assert found <= delimiter_test(policy)(raw)
    # not vacuous: where a tag has a k, an s or an i
    assert cases or not any(c in t for t in policy.tags for c in UNICODE_FOLDS.values())
