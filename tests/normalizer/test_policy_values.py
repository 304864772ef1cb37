"""A `Policy` built with a value no delimiter can have is a ValueError naming the setting
(#22 item 8): `Policy(tags=("",))` built, then raised IndexError from deep in the grammar on
the first `normalize`. The command line and config already refuse it (a usage error, exit 2,
naming where it came from: tests/cli/test_hostile_values.py); the library now says as much.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix import Policy, normalize

LEAK = "<think>plan</think>Answer <thought>x</thought>"


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("tags", ("",)),
        ("tags", ("think", "")),
        ("tags", ("a b",)),
        ("tags", ("<think>",)),
        ("special_pairs", (("x", "", "</x>"),)),
        ("special_pairs", (("x", "<x>", ""),)),
        ("answer_pairs", (("", "</a>"),)),
        ("tool_calls", ("",)),
    ],
)
def test_a_value_no_delimiter_can_have_is_a_value_error_naming_the_setting(
    setting: str, value: Any
) -> None:
    with pytest.raises(ValueError, match=f"^Policy {setting} "):
        Policy(**{setting: value})
    with pytest.raises(ValueError, match=f"^Policy {setting} "):
        Policy().with_changes(**{setting: value})


def test_tags_given_as_one_string_are_a_type_error() -> None:
    """A string would read as the one-letter tags t, h, i, n, k."""
    with pytest.raises(TypeError, match="^Policy tags must be a tuple of tag names"):
        Policy(tags="think")


@settings(max_examples=200, deadline=None)
@given(tags=st.lists(st.text(max_size=6), max_size=3).map(tuple))
def test_any_tags_give_a_policy_that_normalizes_or_a_value_error(tags: tuple[str, ...]) -> None:
    try:
        policy = Policy(tags=tags)
    except ValueError as exc:
        assert str(exc).startswith("Policy tags must be tag names"), exc
        return
    result = normalize(LEAK, policy=policy)
    assert [(s.start, s.end) for s in result.spans][-1][1] == len(LEAK)
    assert ("think" in policy.tags) == ("plan" in "".join(result.extracted))
