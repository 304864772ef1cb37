"""A line whose structure alone is broken is never counted from its bytes, in shapes beyond a
lost quote or bracket and a cut (review8's finding 9: a byte JSON refuses between tokens, a
broken literal or number): counted clean on the quick path before the JSON check
(`io.jsoncheck`), which now refuses each, as the full parse does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_edges_reviewed import _USER, _agree

pytestmark = pytest.mark.usefixtures("isolated_cli")

_COUNTED = (
    b'{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/srv",'
    b'"sessionId":"s1","version":"2.1.41","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","model":"glm-4.6","content":[{"type":"text","text":"Done."}],'
    b'"stop_reason":"end_turn","usage":{"output_tokens":188}},"type":"assistant","uuid":"u2",'
    b'"timestamp":"2026-03-05T16:02:19.350Z"}\n'
)


@pytest.mark.parametrize(
    ("was", "now"),
    [
        (b'"isSidechain":false', b'"isSidechain":\x7ffalse'),  # DEL between two tokens
        (b'"isSidechain":false', b'"isSidechain":\xe2\x80\xa8false'),  # U+2028 there
        (b'"isSidechain":false', b'"isSidechain":\xef\xbb\xbffalse'),  # a BOM there
        (b'"isSidechain":false', b'"isSidechain":\xc2\xa0false'),  # a no-break space there
        (b'"isSidechain":false', b'"isSidechain":falsy'),  # a literal misspelled
        (b"188", b"1 88"),  # a space inside a number
        (b"188", b"1.8.8"),  # not a number
        (b"188", b"0188"),  # a leading zero
    ],
    ids=["del", "u2028", "bom", "nbsp", "literal", "space", "number", "zero"],
)
def test_a_line_broken_between_its_strings_is_never_counted_clean(
    tmp_path: Path, was: bytes, now: bytes
) -> None:
    """The documented blind spot (docs/performance.md, "Which lines are counted from their
    bytes": a line whose structure alone is broken) names a lost quote or bracket and a line
    cut after a `}`. A fuzz of single-byte insertions into assistant lines of the samples
    found it wider: any byte JSON refuses between tokens (DEL, U+2028, a BOM, a no-break
    space), a misspelled literal, a broken number. Each is valid UTF-8 with no control byte
    and no bad escape, so `quick.one_object` and the block counter count the line clean
    (exit 0) where `--parse-all` says "not JSON" (exit 2). Listed so that the lead's fix of
    the blind spot is checked against these shapes too (drop the mark when it lands)."""
    assert was in _COUNTED
    session = tmp_path / "s.jsonl"
    session.write_bytes(_USER.encode() + _COUNTED.replace(was, now, 1))
    default, parsed = _agree(session)
    assert parsed[0] == 2
    assert default == parsed
