"""A session replaced by another file of its name (a save by rename) while `--jobs N` reads it
in pieces (review10). Each piece opens the file by its name, so the pieces read before the
rename read the old file and the others the new one; the merge joined them. With the new
file at least as long, `rewritten` (a size check) saw nothing: a session whose leak moved
from its second half to its first was counted clean, though both versions leak."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.telemetry import sessions
from thinkfix.engine.inputs.files import Candidate
from thinkfix.engine.scan import split
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.io.errors import ErrorKind

OPTIONS = ScanOptions()


def test_a_session_replaced_between_its_pieces_is_changed_not_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(split, "MIN_PIECE", 4096)
    clean = b"".join(sessions.claude_code(i, leak=False) for i in range(40))
    leaking = b"".join(sessions.claude_code(i, leak=i == 45) for i in range(40, 80))
    path = tmp_path / "s.jsonl"
    path.write_bytes(clean + leaking)  # the leak in the second half
    item = Candidate(str(path), str(path), True, path.stat().st_size)
    pieces = [t for t in split.plan([item], OPTIONS, 2) if isinstance(t, split.Piece)]
    assert len(pieces) >= 4
    half = len(pieces) // 2

    first = [split.scan_piece(p, OPTIONS) for p in pieces[:half]]
    replacement = tmp_path / "s.jsonl.new"
    replacement.write_bytes(leaking + clean)  # the same lines, the leak now in the first half
    os.replace(replacement, path)
    rest = [split.scan_piece(p, OPTIONS) for p in pieces[half:]]
    merged = split.merge(first + rest, OPTIONS)

    assert merged.findings or any(e.kind is ErrorKind.CHANGED for e in merged.errors), merged
    assert any(e.kind is ErrorKind.CHANGED and "replaced" in e.message for e in merged.errors), (
        merged.errors
    )


def test_pieces_of_a_file_left_alone_are_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(split, "MIN_PIECE", 4096)
    data = b"".join(sessions.claude_code(i, leak=i == 45) for i in range(80))
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    item = Candidate(str(path), str(path), True, len(data))
    pieces = [t for t in split.plan([item], OPTIONS, 2) if isinstance(t, split.Piece)]
    merged = split.merge([split.scan_piece(p, OPTIONS) for p in pieces], OPTIONS)
    assert merged.errors == ()
    assert len(merged.findings) == 1
