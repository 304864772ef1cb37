"""A head's lines are parsed as the formats' tests reach them (#26: per-file cost).

Detecting a small Claude Code session parsed every line of its 64 KB head, so a scan of
many small sessions parsed each file once more than its own reader did. `sample` now
parses lazily; these tests hold it to the eager parse it replaced (same values, objects,
counts and document, whatever is read first), and show that a Claude Code session is
detected from its first lines.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.formats.support import FIXTURES, eager_head
from tests.spies import first_args
from thinkfix.formats import detection, registry
from thinkfix.formats.detection import MAX_LINES, sample


def _eager(head: bytes) -> tuple[list[Any], int, int]:
    """What the old `sample` built for a JSONL head: the values of the complete lines it
    looked at, the non-blank lines and the bad ones."""
    _, looked = eager_head(head, MAX_LINES)
    values, bad = [], 0
    for piece in looked:
        try:
            values.append(orjson.loads(piece))
        except orjson.JSONDecodeError:
            bad += 1
    return values, len(looked), bad


_LINE = st.one_of(
    st.just(b""),
    st.just(b"   "),
    st.just(b'{"a":'),  # broken
    st.just(b"[1,2]"),  # a value that is not an object
    st.builds(
        lambda d: orjson.dumps(d),
        st.dictionaries(st.sampled_from(["type", "uuid", "x"]), st.integers(-9, 9), max_size=3),
    ),
)
# The order in which a test reads the sample: each step one access.
_STEP = st.sampled_from(["iter", "bool", "first", "slice", "len", "objects", "lines", "neg"])


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(_LINE, min_size=1, max_size=12),
    last=st.sampled_from([b"\n", b"", b'{"b":1}', b"{"]),
    steps=st.lists(_STEP, max_size=6),
)
def test_lazy_sample_reads_as_the_eager_one_whatever_is_read_first(
    lines: list[bytes], last: bytes, steps: list[str]
) -> None:
    head = b'{"first":0}\n' + b"\n".join(lines) + last  # a first line that is not a document
    values, count, bad = _eager(head)
    objects = [v for v in values if isinstance(v, dict)]
    sample.cache_clear()
    s = sample(head)
    for step in steps:
        if step == "iter":
            assert list(s.values) == values
        elif step == "bool":
            assert bool(s.values) == bool(values)
        elif step == "first":
            assert (s.values[0] if values else None) == (values[0] if values else None)
        elif step == "slice":
            assert s.values[1:3] == values[1:3] and s.objects[:2] == objects[:2]
        elif step == "len":
            assert len(s.values) == len(values)
        elif step == "objects":
            assert list(s.objects) == objects
        elif step == "lines":
            assert (s.lines, s.bad) == (count, bad)
        elif step == "neg":
            assert s.values[-1:] == values[-1:]
    assert list(s.values) == values and list(s.objects) == objects
    assert (s.lines, s.bad) == (count, bad)
    sample.cache_clear()


def test_a_claude_code_session_is_detected_from_its_first_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Claude Code fixture of many lines: detection parses two of them, not the head."""
    path = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
    head = path.read_bytes()
    assert head.count(b"\n") > 4
    parsed = first_args(monkeypatch, detection, "parse_json")
    sample.cache_clear()
    found = registry.detect(head, str(path))
    sample.cache_clear()
    assert found is not None and found[0].id == "claude-code"
    assert len(parsed) <= 2, len(parsed)


def test_threads_reading_one_cached_head_each_see_every_line_once() -> None:
    """`sample` is cached, so threads detecting files with the same head (a threaded Dask
    worker, a library caller) share one lazy head: each must read every line once, in order,
    while another parses it (the lines are parsed under a lock)."""
    head = b"".join(orjson.dumps({"i": i, "type": "x"}) + b"\n" for i in range(200))
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for _ in range(60):
            sample.cache_clear()
            s = sample(head)
            seen: list[list[int]] = []

            def read(s: Any = s, seen: list[list[int]] = seen) -> None:
                seen.append([v["i"] for v in s.values])

            threads = [threading.Thread(target=read) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert seen == [list(range(200))] * 4
            assert (s.lines, s.bad, len(s.objects)) == (200, 0, 200)
    finally:
        sys.setswitchinterval(before)
        sample.cache_clear()


@pytest.mark.parametrize("access", ["iter", "len", "slice"])
def test_a_reader_arriving_while_the_last_line_is_parsed_waits_for_it(
    monkeypatch: pytest.MonkeyPatch, access: str
) -> None:
    """The window CI found (stop 34): `done` read the line cursor, which moved before the
    line's value was appended, so a reader arriving mid-parse took the plain list one item
    short. Here a second reader starts exactly then; it must still see every line."""
    head = b"".join(orjson.dumps({"i": i}) + b"\n" for i in range(5))
    real = detection.parse_json
    seen: list[list[int]] = []
    started: list[threading.Thread] = []

    def read(s: Any) -> None:
        values = s.values
        if access == "iter":
            got = [v for v in values]  # not `list()`: that asks `len` first, which waits
        else:
            got = values[: len(values)] if access == "len" else values[:5]
        seen.append([v["i"] for v in got])

    def parse_json(piece: bytes) -> Any:
        if piece.startswith(b'{"i":4}') and not started:  # the last line, mid-parse
            reader = threading.Thread(target=read, args=(s,))
            started.append(reader)
            reader.start()
            reader.join(0.2)  # a correct reader waits on the lock, so it cannot finish yet
        return real(piece)

    monkeypatch.setattr(detection, "parse_json", parse_json)
    sample.cache_clear()
    try:
        s = sample(head)
        assert [v["i"] for v in s.values] == [0, 1, 2, 3, 4]
        started[0].join()
    finally:
        sample.cache_clear()
    assert seen == [[0, 1, 2, 3, 4]]
