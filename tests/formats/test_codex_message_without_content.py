"""A Codex message item without its `content` is an error, never a message with no text.

Codex's `ResponseItem::Message { id, role, content: Vec<ContentItem> }` (openai/codex
`codex-rs/protocol/src/models.rs`) has no serde default for `content`, so Codex never writes
a message without it. The reader took such an item for an empty message, so a line holding
a leak under another key (`{"role": "assistant", "blocks": [...]}`, or a payload a newer
build renamed) was counted as one clean assistant message, exit 0 (found when a file at a
Codex session path was read as Codex by its place: `formats.places`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan

STAMP = "2025-06-14T09:12:40.000Z"
META = {"timestamp": STAMP, "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}}


def _session(tmp_path: Path, item: dict[str, object], *, enveloped: bool) -> Path:
    line = {"timestamp": STAMP, "type": "response_item", "payload": item} if enveloped else item
    path = tmp_path / "rollout-2025-06-14T09-12-40-s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (META, line)))
    return path


@pytest.mark.parametrize("enveloped", [True, False], ids=["response_item", "bare"])
@pytest.mark.parametrize("content", ["missing", "null"])
@pytest.mark.parametrize("fast", [True, False], ids=["default", "parse-all"])
def test_a_message_without_content_is_an_error(
    tmp_path: Path, enveloped: bool, content: str, fast: bool
) -> None:
    item: dict[str, object] = {
        "type": "message",
        "role": "assistant",
        "blocks": [{"t": "<think>plan</think>done"}],
    }
    if content == "null":
        item["content"] = None
    path = _session(tmp_path, item, enveloped=enveloped)
    report = scan([str(path)], ScanOptions(prefilter=fast, by_day=True), jobs=1)
    assert report.summary.assistant_messages == 0
    assert list(report.summary.by_format) == ["codex"]
    assert [e.kind.value for e in report.errors] == ["bad_shape"]


def test_a_message_with_its_content_is_read(tmp_path: Path) -> None:
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "<think>plan</think>done"}],
    }
    report = scan([str(_session(tmp_path, item, enveloped=True))], ScanOptions(), jobs=1)
    assert not report.errors
    assert [f.line for f in report.findings] == [2]
