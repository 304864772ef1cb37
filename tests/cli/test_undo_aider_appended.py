"""Undo keeps the chat Aider appended to a repaired history since (store20's request 1).

Aider only appends to `.aider.chat.history.md` (Aider-AI/aider `aider/io.py`,
`InputOutput.append_chat_history` opens it with "a"), yet an undo after Aider wrote another
chat was refused, "changed since the repair ... restoring it would lose those changes": the
format did not say its runtime appends whole lines (`SessionFormat.appends_lines`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.commands import invoke

LEAKY = Path(__file__).resolve().parents[2] / "fixtures/aider/leaking/.aider.chat.history.md"
pytestmark = pytest.mark.usefixtures("isolated_cli")


def test_undo_keeps_the_chat_aider_appended_since(tmp_path: Path) -> None:
    work, manifest = tmp_path / ".aider.chat.history.md", tmp_path / "m.json"
    shutil.copy(LEAKY, work)
    args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest"]
    assert invoke(*args, str(manifest), str(work)).exit_code in (0, 1)
    assert work.read_bytes() != LEAKY.read_bytes()
    appended = b"\n#### and then?\n\n<think>x</think>Sure.\n\n"
    with open(work, "ab") as fp:
        fp.write(appended)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output
    assert work.read_bytes() == LEAKY.read_bytes() + appended
