"""The masking pre-screen (#26 item 2): one search decides that a text holds nothing to
mask, and it never hides a secret the rules would find.

`mask_secrets` leaves a text untouched when `rules._might_hold_secret` finds neither a
rule's keyword, nor `aws`, nor 40 base64 characters in it; with the screen forced to pass,
the rules run as before. Both answers must be the same on texts made of secrets of every
kind, their keywords, near misses and prose. The screen is plain `in` tests (#26 item 3):
a process's first mask compiles no regex of every keyword. Past a process's first
`NATIVE_AFTER` texts, with hyperscan installed, one native pass finds the keywords instead
(`rules._present`): the same masks, the same keywords as the `in` tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.processes import run_python
from tests.spies import compiled_sources
from thinkfix.engine.secrets import gitleaks, rules

PIECES = st.sampled_from(
    [
        "Done. ",
        "the plan is fine ",
        "AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_" + "a1B2" * 9,
        "sk-proj-" + "x" * 20,
        "xoxb-1234567890-abcdef",
        "password: hunter2hunter2",
        '\\"api_key\\": \\"0123456789abcdef0123\\"',
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "https://user:pa55w0rd@example.com/",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "glpat-abcdefghij0123456789",
        "AIza" + "b" * 35,
        "\\n",
        "<think>",
        "İK ",  # characters whose lower case differs in length or is ASCII
        "token",
        "Bearer abcdefghijkl012345",
    ]
)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(PIECES | st.text(max_size=30), max_size=8))
def test_the_screen_never_hides_a_secret(parts: list[str]) -> None:
    text = "".join(parts)
    screened = rules.mask_secrets(text)
    with patch.object(rules, "_might_hold_secret", lambda *_: True):
        assert screened == rules.mask_secrets(text)


def test_the_screen_lets_prose_through_and_stops_at_a_key() -> None:
    """Not vacuous: plain prose fails the screen; each kind of secret passes it."""
    assert not rules._might_hold_secret("the plan is fine. done.")
    for secret in ("AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2" * 9, "password: hunter2hunter2"):
        assert rules._might_hold_secret(secret.lower())
        assert "[REDACTED:" in rules.mask_secrets(f"see {secret} here")


def _every_keyword() -> set[str]:
    words = {w for r in gitleaks.rules() for w in r.keywords}
    return words | {w for ws in rules._HAND_KEYWORDS.values() for w in ws} | {"aws"}


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(PIECES | st.sampled_from(sorted(_every_keyword())) | st.text(max_size=30)))
def test_the_screen_says_maybe_for_every_text_with_a_keyword_or_a_masked_secret(
    parts: list[str],
) -> None:
    """The screen tests only the keywords no other keyword lies inside: it still says
    "maybe" exactly when some keyword (or a 40-character run) occurs, so for every text
    any rule masks."""
    text = "".join(parts)
    lowered = text.lower()
    every = any(w in lowered for w in _every_keyword())
    run = re.search("[a-z0-9/+]{40}", lowered) is not None
    assert rules._might_hold_secret(lowered) == (every or run)
    if rules.mask_secrets(text) != text:
        assert rules._might_hold_secret(lowered)


def _compiled_by(call: Callable[[], object]) -> list[str]:
    """The regex sources `call` compiles in a process that has compiled none of the rules'."""
    for f in (rules._screen, rules._hand_pattern, gitleaks._by_keyword):
        f.cache_clear()
    for r in gitleaks.rules():
        vars(r).pop("pattern", None)
    re.purge()
    with compiled_sources() as sources:
        call()
    return sources


def test_a_first_mask_of_prose_compiles_no_regex_of_every_keyword() -> None:
    """#26 item 3: the first mask in a process (and in each `--jobs` worker) compiled one
    trie of all ~240 keywords, ~80 ms; a clean text needs none (the 40-character run is
    found by a byte translation)."""
    sources = _compiled_by(lambda: rules.mask_secrets("the plan is fine. done."))
    assert sources == []


#: Characters of a run (some), the boundary ones, and others: runs of every length, at the
#: start, the end, the middle, after a newline or a character outside ASCII.
_RUN_TEXT = st.text(alphabet="ab9/+Z -\n.=é\ud800\u0130", max_size=120) | st.builds(
    lambda a, n, b: a + "x" * n + b,
    st.text(alphabet="a/+ .é", max_size=5),
    st.integers(min_value=35, max_value=45),
    st.text(alphabet="a/+ .é", max_size=5),
)


@settings(max_examples=500, deadline=None)
@given(text=_RUN_TEXT)
def test_the_run_test_is_a_search_for_forty_run_characters(text: str) -> None:
    """`_has_run` (a byte translation and a substring search) gives the answer of searching
    `[a-z0-9/+]{40}` anywhere, also where characters outside ASCII or surrogates cut a run."""
    expected = re.search("[a-z0-9/+]{40}", text) is not None
    assert rules._has_run(text) == expected


def test_a_first_keyword_compiles_only_the_rules_it_lets_run() -> None:
    """The first keyword compiled gitleaks' trie of every keyword too (~30 ms): now only
    the patterns of the rules whose keyword occurs (and those that always run)."""
    text = "see ghp_" + "a1B2" * 9 + " here"
    sources = _compiled_by(lambda: rules.mask_secrets(text))
    lowered = text.lower()
    wanted = {r.source for r in gitleaks.candidates(text)} | {
        source
        for (name, source, _f, _g, _c) in rules._SECRET_SOURCES
        if not rules._HAND_KEYWORDS.get(name)
        or any(w in lowered for w in rules._HAND_KEYWORDS[name])
    }
    compiled = set(sources)
    assert compiled <= wanted | {
        s for r in gitleaks.rules() for a in r.allowlists for s in a.sources
    } | {s for a in gitleaks._global_allowlists() for s in a.sources}
    assert any("gh" in s for s in compiled)  # the GitHub rules did run
    assert len(compiled) < 40


def test_a_first_mask_imports_no_pathlib() -> None:
    """Finding `rules.json` with `pathlib` imported it and `urllib.parse` (~10 ms of a
    process's first mask, a pre-commit hook's scan of a leaking session): a plain path."""
    code = (
        "import sys; from thinkfix.engine.secrets import rules; "
        "assert rules.mask_secrets('password: hunter2hunter2') != 'password: hunter2hunter2'; "
        "print(sorted({'pathlib', 'urllib.parse'} & set(sys.modules)))"
    )
    assert run_python(code).stdout.strip() == "[]"


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(PIECES | st.sampled_from(sorted(_every_keyword())) | st.text(max_size=30)))
def test_the_native_screen_finds_the_keywords_the_in_tests_find(parts: list[str]) -> None:
    """`_present` (one hyperscan pass) is exactly the set of keywords `in` the lower case,
    and masking with it gives the pure masks, on texts of secrets, keywords and any text."""
    pytest.importorskip("hyperscan")
    text = "".join(parts)
    lowered = text.lower()
    with patch.object(rules, "USE_NATIVE", False):
        pure = rules.mask_secrets(text)
    with patch.object(rules, "USE_NATIVE", True), patch.object(rules, "NATIVE_AFTER", -1):
        present = rules._present(lowered)
        assert present == {w for w in _every_keyword() if w in lowered}
        assert rules.mask_secrets(text) == pure


def test_the_native_screen_waits_for_its_texts_and_the_pure_switch() -> None:
    """A process's first `NATIVE_AFTER` texts, and every text under `THINKFIX_PURE`, are
    screened by `in` tests (no hyperscan database for a scan with a few leaks)."""
    with patch.object(rules, "USE_NATIVE", True), patch.object(rules, "_screened", 0):
        assert all(rules._present("api") is None for _ in range(rules.NATIVE_AFTER))
    with patch.object(rules, "USE_NATIVE", False), patch.object(rules, "NATIVE_AFTER", -1):
        assert rules._present("api") is None
