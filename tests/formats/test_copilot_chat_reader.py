"""A repaired Copilot Chat session in a reader that is not ours: copilotexport (PyPI), which
collects `workspaceStorage/*/chatSessions/*.json` and renders each session as Markdown.

It reads the flat file only (not the 1.109+ log). Rendered before and after repair, the
same turns come out, the users' text unchanged and the answers without their delimiters.
It prints every part that carries a `value`, VS Code's `thinking` parts included, so the
moved reasoning still shows there, run into the answer as that reader shows any thinking.
Skipped where copilotexport is not installed (the `readers` extra installs it).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.engine.repair_helpers import run
from tests.formats.support import FIXTURES
from thinkfix.engine.repair.model import WriteMode
from thinkfix.normalizer.batch import normalize

exporter = pytest.importorskip("copilotexport.exporter")

FLAT = FIXTURES / "copilot-chat" / "chatSessions" / "4a7c2e91-3b5d-4f6a-9c8e-1d2f3a4b5c6d.json"
_TURN = re.compile(r"^## Turn (\d+) — (.+)$", re.MULTILINE)


def _turns(page: str) -> list[tuple[str, str]]:
    """(heading, body) per rendered turn."""
    heads = list(_TURN.finditer(page))
    return [
        (h.group(0), page[h.end() : heads[i + 1].start() if i + 1 < len(heads) else None])
        for i, h in enumerate(heads)
    ]


def _render(tmp_path: Path, session: Path) -> str:
    storage = tmp_path / "workspaceStorage"
    chat = storage / "0f1e2d3c4b5a69788796a5b4c3d2e1f0" / "chatSessions"
    chat.mkdir(parents=True)
    shutil.copyfile(session, chat / session.name)
    (found,) = exporter.collect_sessions(storage)
    page: str = exporter.render_markdown(found)
    return page


def test_copilot_chat_reader_renders_the_repaired_session_turn_for_turn(tmp_path: Path) -> None:
    result = run([FLAT], WriteMode.OUT, tmp_path, out_dir=str(tmp_path / "out"), jobs=1)
    assert not result.all_errors, result.all_errors
    before = _turns(_render(tmp_path / "a", FLAT))
    after = _turns(_render(tmp_path / "b", tmp_path / "out" / FLAT.name))
    assert [h for h, _ in after] == [h for h, _ in before]
    doc = json.loads(FLAT.read_bytes())
    for (head, old), (_, new) in zip(before, after):
        if not head.endswith("GitHub Copilot"):
            assert new == old  # the users' turns
            continue
        assert not normalize(new).findings
        if not normalize(old).findings:
            assert new == old  # a clean answer renders as it did
    # the leaked texts were in the original rendering, their answers are in the repaired one
    leaked = [
        p["value"]
        for r in doc["requests"]
        for p in r["response"]
        if "</think>" in p.get("value", "")
    ]
    page_before = "".join(b for _, b in before)
    page_after = "".join(b for _, b in after)
    assert all(text in page_before for text in leaked)
    assert all(normalize(text).visible in page_after for text in leaked)
