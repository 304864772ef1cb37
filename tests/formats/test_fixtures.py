"""fixtures/README.md is exact: per file, its format, assistant messages and leaking messages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.formats.support import FIXTURES, detect, read, session_files, sites

ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| (?P<format>[a-z-]+) [^|]*\| (?P<messages>\d+) \| "
                 r"\*\*(?P<leaking>\d+)\*\* \|", re.MULTILINE)
TABLE = {m["file"]: m for m in ROW.finditer((FIXTURES / "README.md").read_text())}


def test_fixtures_readme_lists_every_session_file() -> None:
    files = {str(p.relative_to(FIXTURES)) for p in session_files(FIXTURES)}
    assert files == set(TABLE)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_fixtures_format_and_assistant_message_count(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    fmt = detect(data, FIXTURES / name)
    assert fmt.id == TABLE[name]["format"]
    records = read(fmt, data)
    assert all(r.error is None for r in records)
    assert sum(fmt.assistant_messages(r) for r in records) == int(TABLE[name]["messages"])


def _normalize():  # type: ignore[no-untyped-def]
    from thinkfix.normalizer import normalize

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
    leaking = {(s.record_index, s.message_index) for s in sites(fmt, read(fmt, data))
               if normalize(s.text, native_reasoning=s.native_reasoning).findings}
    assert len(leaking) == int(TABLE[name]["leaking"])
