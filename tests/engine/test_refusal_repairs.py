"""#21 item 3: refusals that are repairs. A message that keeps a tool call needs no text, so
an all-reasoning text beside one is repaired (not refused), and the repaired copy rescans
clean; a valid JSON document split across lines is read as one document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from thinkfix.engine.repair import RepairOptions, WriteMode, repair_paths
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan import scan
from thinkfix.engine.scan_options import ScanOptions

#: The issue's repro: an assistant message whose string content is only reasoning, beside
#: `tool_calls` (the model emitted `<think>` and then called a tool).
CHAT: dict[str, Any] = {
    "model": "m",
    "messages": [
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "<think>I will run ls.</think>",
            "reasoning": "I will run ls.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "assistant", "content": "One file."},
    ],
}
HERMES: dict[str, Any] = {
    "session_id": "20260412_093015_a1b2c3",
    "model": "MiniMax-M2.7",
    "platform": "cli",
    "session_start": "2026-04-12T09:30:15",
    "system_prompt": "You are Hermes.",
    "tools": [],
    "message_count": 4,
    "messages": CHAT["messages"],
}


def _repair(tmp_path: Path, source: Path) -> Path:
    out = tmp_path / "o"
    result = repair_paths(
        [str(source)],
        RepairOptions(mode=WriteMode.OUT, out_dir=str(out), run_dir=str(tmp_path / "run"), jobs=1),
    )
    assert not result.all_errors, result.all_errors
    return out / source.name


@pytest.mark.parametrize(
    ("doc", "name", "fmt", "empty"),
    [(CHAT, "s.json", "openai-chat", None), (HERMES, "session_x.json", "hermes", "")],
    ids=["openai-chat", "hermes"],
)
def test_repair_all_reasoning_content_beside_tool_calls(
    tmp_path: Path, doc: dict[str, Any], name: str, fmt: str, empty: str | None
) -> None:
    source = tmp_path / name
    source.write_text(json.dumps(doc, indent=2))
    before = scan([str(source)], ScanOptions())
    assert before.summary.by_file[str(source)].format == fmt
    assert [f.refused for f in before.findings] == [None]  # scan no longer calls it refused
    repaired = _repair(tmp_path, source)
    after = scan([str(repaired)], ScanOptions())
    assert after.exit_code() is ExitCode.CLEAN, after.findings
    message = json.loads(repaired.read_text())["messages"][1]
    # what each runtime writes beside tool calls: Hermes `""`, the Chat Completions API `null`
    assert message["content"] == empty
    assert message["tool_calls"] == doc["messages"][1]["tool_calls"]
    assert message["reasoning"] == "I will run ls."  # the duplicate is not appended twice
