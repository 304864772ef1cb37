"""A session's first line that is not JSON is an error on every path (never silently clean).

The sparse reader parses a session's first line for the context hook, whatever it holds,
and dropped the parse's error unless the line held the assistant marker; a first line the
format cannot read made the default scan read the file record by record
(`sparse.is_document`), where a line without the marker was skipped unread. Either way the
file counted clean where `--parse-all` says `not JSON`, exit 2. Found by a hypothesis search
that damages generated sessions byte by byte and compares the two scans.
"""

from __future__ import annotations

from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.test_bulk import _json, _reports, session_files, sessions
from thinkfix.engine.scan import native

# What a damaged first line may look like: quoted whole, a key's quote doubled, cut short
# after a `}`, a stray byte between members.
DAMAGE = st.sampled_from(
    [
        lambda line: b'"' + line,
        lambda line: line.replace(b'{"', b'{""', 1),
        lambda line: line[: line.index(b"}") + 1] + b"x" if b"}" in line else b"x" + line,
        lambda line: line.replace(b",", b",,", 1),
    ]
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=sessions(), damage=DAMAGE, on=st.booleans(), by_day=st.booleans())
def test_a_first_line_that_is_not_json_is_reported_as_a_parse_of_every_line_reports_it(
    data: dict[str, list[bytes]],
    damage: object,
    on: bool,
    by_day: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    for lines in data.values():
        lines[0] = damage(lines[0])  # type: ignore[operator]
    folder = tmp_path_factory.mktemp("first")
    with patch.object(native, "USE", on), patch.object(native, "WARM_UP", 0):
        for name, path, options in session_files(folder, data, by_day=by_day):
            parsed = _json([str(path)], options._replace(prefilter=False))
            errors = orjson.loads(parsed)["errors"]
            assert [e["line"] for e in errors][:1] == [1]  # not vacuous: the line is broken
            assert _reports([str(path)], options, [name]) == [parsed] * 4
