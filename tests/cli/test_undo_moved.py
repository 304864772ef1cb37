"""Undo finds the records a repair wrote where they moved to (undo11): lines added or dropped
before them since the repair move them, and undo puts back those records alone, keeping every
other line; a record it cannot find exactly once, unchanged and in its order, refuses the
file, naming the record, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_undo_appended import _repaired
from tests.cli.test_undo_two_repairs import CODEX, PI
from tests.commands import invoke

pytestmark = pytest.mark.usefixtures("isolated_cli")

SUMMARY = b'{"type":"summary","summary":"Flood fill","leafUuid":"x"}\n'


@pytest.mark.parametrize("original", [CODEX, PI], ids=["codex", "pi"])
def test_undo_keeps_a_line_put_before_the_records_the_repair_wrote(
    tmp_path: Path, original: Path
) -> None:
    """A line put first since the repair moves every record it wrote by one: they are put
    back where they are now, the line kept. Before: refused, `changed since the repair`."""
    work, manifest = _repaired(tmp_path, True, original)
    work.write_bytes(SUMMARY + work.read_bytes())
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output
    assert "keeping the lines written since the repair" in result.stderr
    assert work.read_bytes() == SUMMARY + original.read_bytes()
    again = invoke("undo", str(manifest))
    assert again.exit_code == 0 and "already" in again.stderr, again.output


def test_undo_refuses_a_session_rewritten_whole_naming_a_record(tmp_path: Path) -> None:
    """A runtime that saved the session again in its own spelling changed every record the
    repair wrote: refused, the first of them named, the file as it is."""
    work, manifest = _repaired(tmp_path, True, CODEX)
    work.write_bytes(work.read_bytes().replace(b'","', b'", "'))
    now = work.read_bytes()
    result = invoke("undo", str(manifest))
    assert result.exit_code == 2, result.output
    line = min(r["after"]["line"] for r in json.loads(manifest.read_text())["files"][0]["records"])
    assert "changed since the repair" in result.stderr
    assert f"the record it wrote at line {line} is not there as it wrote it" in result.stderr
    assert work.read_bytes() == now


def test_undo_refuses_a_moved_record_found_twice(tmp_path: Path) -> None:
    """Moved, and a copy of a record the repair wrote appended: which of the two it wrote
    cannot be told, so undo refuses, naming both lines, rather than guess."""
    work, manifest = _repaired(tmp_path, True, CODEX)
    entry = json.loads(manifest.read_text())["files"][0]
    lines = work.read_bytes().splitlines(keepends=True)
    first = min(entry["records"], key=lambda r: r["after"]["index"])["after"]
    copy = lines[first["index"]]
    work.write_bytes(SUMMARY + b"".join(lines) + copy)
    now = work.read_bytes()
    result = invoke("undo", str(manifest))
    assert result.exit_code == 2, result.output
    where = f"lines {first['line'] + 1}, {len(lines) + 2}"
    assert f"the record it wrote at line {first['line']} is there 2 times ({where})" in (
        result.stderr
    )
    assert work.read_bytes() == now


def test_undo_in_place_ignores_a_copy_of_a_record_elsewhere(tmp_path: Path) -> None:
    """Where every record is still where the repair wrote it, a copy of one appended later is
    a line written since like any other: kept."""
    work, manifest = _repaired(tmp_path, True, CODEX)
    entry = json.loads(manifest.read_text())["files"][0]
    lines = work.read_bytes().splitlines(keepends=True)
    copy = lines[entry["records"][0]["after"]["index"]]
    lines[0] = lines[0].replace(b'"type"', b'"type" ', 1)  # rewritten: no longer a prefix
    work.write_bytes(b"".join(lines) + copy)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output
    want = CODEX.read_bytes().splitlines(keepends=True)
    want[0] = lines[0]
    assert work.read_bytes() == b"".join(want) + copy
