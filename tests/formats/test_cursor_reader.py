"""A repaired Cursor store in a reader that is not ours: mycursordata (PyPI), which exports
every `bubbleId:*` row of state.vscdb as text, a bubble's `thinking.text` in a <THINKING>
block before its `text`.

Exported before and after repair, the same conversations come out with the same messages in
the same order; the leaking answer shows its visible text alone, its reasoning moved into the
<THINKING> block, and every other message is exported exactly as before. Skipped where
mycursordata is not installed (the `readers` extra installs it, on Python 3.11 and later).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.repair_helpers import run
from tests.formats import cursor_db
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.report import ExitCode

parser = pytest.importorskip("mycursordata.parser")

REASONING = "The total is summed as floats; integer cents fix it."
VISIBLE = "Store prices as integer cents; the total is then exact."


def _export(db: Path) -> list[str]:
    """Every message as the reader formats it, conversation by conversation."""
    with parser.CursorDataParser(db) as reader:
        projects = reader.get_all_conversations()
    return [
        parser.format_message(message)
        for conversations in projects.values()
        for _, messages in sorted(conversations.items())
        for message in messages
    ]


def test_cursor_reader_exports_the_repaired_store_message_for_message(tmp_path: Path) -> None:
    db = cursor_db.build(tmp_path / "state.vscdb", cursor_db.LEAKY)
    out = tmp_path / "out"
    result = run([db], WriteMode.OUT, tmp_path, out_dir=str(out))
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    before, after = _export(db), _export(out / "state.vscdb")
    assert len(before) == len(after) == 4
    changed = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
    assert changed == [1]
    assert "<think>" in before[1] and "<THINKING>" not in before[1]
    assert after[1].endswith(f"<THINKING>\n{REASONING}\n</THINKING>\n\n{VISIBLE}")
    assert "<think>" not in after[1]
