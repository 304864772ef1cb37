"""Edges still open, each pinned by a strict xfail so the day it is fixed the suite says so.

A canonical line counted from its bytes (the block counter, `quick_messages`) is proven one
message of its model and day, its text free of delimiters, and one JSON value; its content
parts' shapes are not proven. Since the seventeenth session the readers refuse a part of a
shape the runtime never writes (review9: `formats/values.py`): a parse of such a line says
`bad_shape`, exit 2, where the fast paths count it clean, exit 0. Only a line without a
delimiter is affected (one with a delimiter is parsed, and refused, on every path). Found by
the hypothesis search that damages generated sessions byte by byte
(tests/engine/test_first_line.py's family).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.engine.test_bulk import _json, _reports, session_files

# A Codex assistant line as Codex writes it, its part's `type` key spelled `\type` (a tab and
# "ype" to a parser): no part type, so no part the reader knows.
UNTYPED = (
    b'{"timestamp":"2026-03-02T12:30:00Z","type":"response_item","payload":{"type":"message",'
    b'"role":"assistant","content":[{"\\type":"output_text","text":"Done."}]}}'
)


@pytest.mark.xfail(
    strict=True,
    reason="open: the fast paths do not prove a content part's shape (docs/performance.md)",
)
def test_a_counted_line_whose_part_has_no_type_is_reported_as_a_parse_reports_it(
    tmp_path: Path,
) -> None:
    ((name, path, options),) = session_files(tmp_path, {"codex": [UNTYPED]}, by_day=True)
    parsed = _json([str(path)], options._replace(prefilter=False))
    assert [e["kind"] for e in orjson.loads(parsed)["errors"]] == ["bad_shape"]
    assert _reports([str(path)], options, [name]) == [parsed] * 3
