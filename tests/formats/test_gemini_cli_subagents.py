"""Gemini CLI keeps sub-agent chats one level deeper: `ChatRecordingService.initialize`
(packages/core/src/services/chatRecordingService.ts) nests a `kind: "subagent"` chat under
`chats/<parent session id>/<session id>.jsonl` (older builds: `.json`, and
`chats/skill-extraction-<id>/<id>.json`). Discovery and a scan of the folder find them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from tests.formats.support import FIXTURES
from thinkfix.cli import main
from thinkfix.engine.inputs.discover import discover

CHAT = FIXTURES / "gemini-cli/session-2026-02-03T10-15-4f2a9c1e.json"
LOG = FIXTURES / "gemini-cli/session-2026-05-11T14-02-7a0c3e5f.jsonl"


def test_nested_sub_agent_chats_are_discovered_and_scanned(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini/tmp/4f2a9c1e/chats"
    nested = {
        chats / "7a0c3e5f-parent/explore-7b1c.jsonl": LOG,
        chats / "4f2a9c1e-parent/agent-7b1c.json": CHAT,
        chats / "skill-extraction-91ad/91ad.json": CHAT,
    }
    for path, source in nested.items():
        path.parent.mkdir(parents=True)
        shutil.copyfile(source, path)
    found = discover(env={"PWD": str(tmp_path)}, home=tmp_path)
    assert found == [str(tmp_path / ".gemini/tmp")]
    result = CliRunner().invoke(main, ["scan", "--output-format", "json", "--no-progress", *found])
    report = json.loads(result.stdout)
    assert sorted(report["summary"]["by_file"]) == sorted(str(p) for p in nested)
    assert {f["format"] for f in report["summary"]["by_file"].values()} == {"gemini-cli"}
    where = CliRunner().invoke(
        main, ["where", "--json"], env={"HOME": str(tmp_path), "PWD": str(tmp_path)}
    )
    assert str(tmp_path / ".gemini/tmp") in where.stdout
