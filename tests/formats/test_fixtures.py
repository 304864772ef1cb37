"""fixtures/README.md is exact: per file, its format, assistant messages and leaking messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.formats.support import (
    FIXTURES,
    detect,
    fixture_table,
    fixture_totals,
    read,
    session_files,
    sites,
)

TABLE = fixture_table()


def test_fixtures_readme_lists_every_session_file() -> None:
    files = {str(p.relative_to(FIXTURES)) for p in session_files(FIXTURES)}
    assert files == set(TABLE)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_fixtures_format_and_assistant_message_count(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    fmt = detect(data, FIXTURES / name)
    assert fmt.id == TABLE[name]["format"]
    records = read(fmt, data, FIXTURES / name)
    assert all(r.error is None for r in records)
    assert sum(fmt.assistant_messages(r) for r in records) == int(TABLE[name]["messages"])


def _normalize():  # type: ignore[no-untyped-def]
    from thinkfix.normalizer.batch import normalize

    try:
        normalize("x")
    except NotImplementedError:
        pytest.skip("the normalizer is not implemented yet")
    return normalize


@pytest.mark.parametrize("name", sorted(TABLE))
def test_fixtures_leaking_message_count(name: str) -> None:
    """The documented count is what the normalizer finds in these sites."""
    normalize = _normalize()
    path: Path = FIXTURES / name
    data = path.read_bytes()
    fmt = detect(data, path)
    leaking = {
        (s.record_index, s.message_index)
        for s in sites(fmt, read(fmt, data, path))
        if normalize(s.text, native_reasoning=s.native_reasoning).findings
    }
    assert len(leaking) == int(TABLE[name]["leaking"])


def test_fixtures_readme_totals_add_up() -> None:
    totals = fixture_totals()
    assert totals.files == len(TABLE)
    assert totals.messages == sum(int(r["messages"]) for r in TABLE.values())
    assert totals.leaking == sum(int(r["leaking"]) for r in TABLE.values())
