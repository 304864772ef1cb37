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


#: `printf '{"messages": [...},\n {...}]}\n'`: one valid JSON document, split across lines
#: without the usual indentation. `json.load` reads it; it was `unknown_format` (and every
#: line a `bad_line` with `--format openai-chat`).
SPLIT = (
    b'{"messages": [{"role": "user", "content": "hi"},\n'
    b' {"role": "assistant", "content": "<think>x</think>Hello"}]}\n'
)


@pytest.mark.parametrize("forced", [None, "openai-chat"])
def test_scan_reads_a_document_split_across_lines(tmp_path: Path, forced: str | None) -> None:
    from thinkfix.engine.inputs import InputOptions

    source = tmp_path / "split.json"
    source.write_bytes(SPLIT)
    assert json.loads(SPLIT)  # what json.load reads
    for prefilter in (True, False):
        report = scan(
            [str(source)], ScanOptions(inputs=InputOptions(format=forced), prefilter=prefilter)
        )
        assert report.errors == ()
        assert report.summary.by_file[str(source)].format == "openai-chat"
        assert [(f.line, f.json_path, f.kind.value) for f in report.findings] == [
            (1, "messages[1].content", "block")
        ]
    repaired = _repair(tmp_path, source)
    assert json.loads(repaired.read_bytes())["messages"][1]["content"] == "Hello"
    assert scan([str(repaired)], ScanOptions()).exit_code() is ExitCode.CLEAN


def test_scan_jsonl_with_a_broken_first_line_is_still_read_by_line(tmp_path: Path) -> None:
    """A first line that opens an object and does not parse is not always a split document:
    when the whole does not parse either, the file is still read line by line."""
    source = tmp_path / "chat.jsonl"
    source.write_bytes(
        b'{"role": "assistant", "content": "cut off\n'
        b'{"role": "assistant", "content": "<think>x</think>Hello"}\n'
        b'{"role": "user", "content": "more"}\n'
    )
    from thinkfix.engine.inputs import InputOptions

    report = scan([str(source)], ScanOptions(inputs=InputOptions(format="openai-chat")))
    assert [(e.line, e.kind.value) for e in report.errors] == [(1, "bad_line")]
    assert [f.line for f in report.findings] == [2]
