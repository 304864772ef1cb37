"""The masking pre-screen (#26 item 2): one search decides that a text holds nothing to
mask, and it never hides a secret the rules would find.

`mask_secrets` leaves a text untouched when `rules._prescreen` finds neither a rule's
keyword, nor `aws`, nor 40 base64 characters in it; with the screen forced to pass, the
rules run as before. Both answers must be the same on texts made of secrets of every kind,
their keywords, near misses and prose.
"""

from __future__ import annotations

import re
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.secrets import rules

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
    with patch.object(rules, "_prescreen", lambda: re.compile("")):  # always passes
        assert screened == rules.mask_secrets(text)


def test_the_screen_lets_prose_through_and_stops_at_a_key() -> None:
    """Not vacuous: plain prose fails the screen; each kind of secret passes it."""
    assert rules._prescreen().search("the plan is fine. done.") is None
    for secret in ("AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2" * 9, "password: hunter2hunter2"):
        assert rules._prescreen().search(secret.lower()) is not None
        assert "[REDACTED:" in rules.mask_secrets(f"see {secret} here")
