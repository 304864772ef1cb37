"""`remote.is_url` reads a URL's scheme without a regex (#26 item 3: every scan imports the
module, and compiling its patterns cost ~0.65 M instructions); it answers as the pattern
`^[A-Za-z][A-Za-z0-9+.-]*://` did, on any text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from thinkfix.io import remote

_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

texts = st.one_of(
    st.text(),
    st.text(alphabet="aZ09+.-:/\\é ", max_size=12),
    st.builds(lambda a, b: a + "://" + b, st.text(alphabet="aZ09+.-:é_", max_size=6), st.text()),
)


@given(texts)
def test_is_url_answers_as_the_scheme_pattern(text: str) -> None:
    assert remote.is_url(text) is bool(_PATTERN.match(text))


def test_importing_the_module_compiles_no_regex() -> None:
    assert not any(isinstance(v, re.Pattern) for v in vars(remote).values())
