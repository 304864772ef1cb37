"""A clean line whose content parts are of a shape its reader refuses is an error on every path.

Since the seventeenth session the readers refuse a content part of a shape the runtime never
writes (review9: `formats/values.py`, a part with no string `type`, a text that is no string):
a parse of such a line says `bad_shape`, exit 2. A clean line of the same shape was counted
from its bytes (the block counter, `quick_messages`: they prove the line's model, day and
that its text holds no delimiter, not its parts' shapes), or counted after its parse without
its texts walked (`_FileScan._count`), exit 0. Now the JSON check that vouches for a line
counted from its bytes decodes its message's content into the shapes the readers read
(`io.jsoncheck`, `Canonical.content`), and a parsed clean record's texts are walked.
Found by the hypothesis search that damages generated sessions byte by byte.
"""

from __future__ import annotations

import re
from pathlib import Path
from unittest.mock import patch

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.engine.test_bulk import RUNTIME_LINES, _json, _reports, session_files
from thinkfix.engine.scan import native
from thinkfix.io import jsoncheck

# Damage that keeps a runtime's line JSON but gives its text part a shape no runtime writes.
PART = re.compile(rb'"type":"(\w+)","text":"Done\."')
UNREAD = {
    "no type": rb'"\\type":"\1","text":"Done."',  # the key is a tab and "ype" to a parser
    "list text": rb'"type":"\1","text":["Done."]',
    "number type": rb'"type":1,"text":"Done."',
}


@pytest.mark.parametrize("on", [False, True], ids=["pure", "native"])
@pytest.mark.parametrize("damage", sorted(UNREAD))
@pytest.mark.parametrize("name", sorted(RUNTIME_LINES))
def test_a_counted_line_whose_part_has_another_shape_is_an_error_on_every_path(
    name: str, damage: str, on: bool, tmp_path: Path
) -> None:
    line = RUNTIME_LINES[name]
    bad, n = PART.subn(UNREAD[damage], line)
    assert n == 1
    lines = [line] * 40 + [bad] + [line] * 40
    ((fmt, path, options),) = session_files(tmp_path, {name: lines}, by_day=True)
    with (
        patch.object(native, "USE", on),
        patch.object(native, "WARM_UP", 0),
        patch.object(jsoncheck, "MSGSPEC_FROM", 0 if on else 1 << 62),
    ):
        parsed = _json([str(path)], options._replace(prefilter=False))
        assert [(e["line"], e["kind"]) for e in orjson.loads(parsed)["errors"]] == [
            (41, "bad_shape")
        ]
        assert _reports([str(path)], options, [fmt]) == [parsed] * 4


CONTENT = st.recursive(
    st.none() | st.booleans() | st.integers(0, 3) | st.sampled_from(["", "text", "Done."]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["type", "text", "thinking", "id"]), inner, max_size=4)
    ),
    max_leaves=8,
)


@given(content=CONTENT, key=st.sampled_from(["message", "payload"]), text_ok=st.booleans())
def test_both_checks_take_the_same_contents(content: object, key: str, text_ok: bool) -> None:
    """msgspec's structs (a run of 6 MB or more) and the parsed check (a smaller one) refuse
    the same lines: any message content, any part shape."""
    line = orjson.dumps({"type": "x", key: {"role": "assistant", "content": content}})
    shape = (key, text_ok)
    assert jsoncheck.not_json([line], 1 << 62, shape) == jsoncheck.not_json([line], 0, shape)
