"""#21 item 1: a format claims only what it can read.

For every fixture of every format, detection picks the format it belongs to, and any other
format that would claim it (a confidence at or over `registry.THRESHOLD`) reads the same
assistant messages and texts from it: Hermes snapshots are OpenAI chat documents, Cline and
Roo Code histories are Anthropic MessageParam arrays, and nothing else overlaps. A file no
format claims is named as skipped, never counted. The cases are the files: a runtime's
fixtures (`fixtures/<format id>/...`) and tests/data/formats join the matrix by being there.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.formats.support import DATA, FIXTURES, read, session_files, sites
from tests.formats.test_detection import DATA_EXPECTED
from thinkfix.engine.inputs.files import UNKNOWN
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.detection import read_head

#: Fixture folders named after a runtime that a format of another name reads.
ALIASES = {"openclaw": "pi"}


def _owner(path: Path) -> str:
    if path.is_relative_to(DATA):
        return DATA_EXPECTED[path.name]
    runtime = path.relative_to(FIXTURES).parts[0]
    return ALIASES.get(runtime, runtime)


CASES = session_files(FIXTURES) + session_files(DATA)


def _reading(fmt: SessionFormat, data: bytes, path: Path) -> tuple[int, list[tuple[int, str, str]]]:
    """What a format reads from a file: its assistant messages and every visible text."""
    records = read(fmt, data, path)
    count = sum(fmt.assistant_messages(r) for r in records)
    return count, sorted((s.line, s.json_path, s.text) for s in sites(fmt, records))


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name[:24]}")
def test_detection_matrix_only_a_reader_claims_a_file(path: Path) -> None:
    data = path.read_bytes()
    head = read_head(io.BytesIO(data))
    own = _owner(path)
    found = registry.detect(head, str(path))
    assert found is not None and found[0].id == own
    expected = _reading(registry.get(own), data, path)
    for fmt in registry.FORMATS.values():
        if fmt.id == own or registry.confidence(fmt, head, str(path)) < registry.THRESHOLD:
            continue
        assert _reading(fmt, data, path) == expected, (
            f"{fmt.id} claims {path.name} ({own}'s) but does not read it as {own} does"
        )


def test_detection_matrix_a_file_no_format_claims_is_named_as_skipped(tmp_path: Path) -> None:
    known = next(p for p in CASES if _owner(p) == "codex")
    (tmp_path / known.name).write_bytes(known.read_bytes())
    stranger = tmp_path / "notes.jsonl"
    stranger.write_text('{"kind": "note", "body": "hi"}\n{"kind": "note", "body": "bye"}\n')
    report = scan([str(tmp_path)], ScanOptions())
    assert [(s.path, s.reason) for s in report.skipped] == [(str(stranger), UNKNOWN)]
    assert list(report.summary.by_file) == [str(tmp_path / known.name)]
