"""A leak inside a text field of a shape the runtime never writes is an error, never clean.

Review 9: each reader skipped what it did not expect where an assistant's visible text lives
(an object where the runtime writes a string or a list of parts, a part that is no object or
has no `type`, a text that is a list), so a file whose only leak sat in such a field was
scanned as 0 findings, 0 errors, exit 0. Every case here holds a leak in such a field, written
beside the runtime's own records field for field; the scan must exit 2 and name the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import scan

LEAK = "<think>plan the answer</think>The answer."


def _lines(*records: Any) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _scan(path: Path, text: str, fmt: str) -> tuple[int, list[tuple[int | None, str]]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    report = scan([str(path)], jobs=1)
    assert {f for f in report.summary.by_format} <= {fmt}
    return int(report.exit_code()), [(e.line, e.message) for e in report.errors]


def _assert_error(path: Path, text: str, fmt: str, line: int | None) -> None:
    code, errors = _scan(path, text, fmt)
    assert code == ExitCode.ERROR, (code, errors)
    assert any(at == line and "unexpected" in message for at, message in errors), errors


# --- Kimi CLI: kosong's Message.content is a string or a list of typed parts -------------

_KIMI_HEAD = (
    {"role": "_system_prompt", "content": "You are Kimi"},
    {"role": "user", "content": "hi"},
)


@pytest.mark.parametrize(
    "content",
    [
        {"type": "text", "text": LEAK},
        [LEAK],
        [{"text": LEAK}],
        [{"type": "text", "text": [LEAK]}],
        [{"type": ["text"], "text": LEAK}],
    ],
    ids=["object", "string part", "untyped part", "list text", "list type"],
)
def test_kimi_cli_text_of_an_unexpected_shape_is_an_error(tmp_path: Path, content: Any) -> None:
    path = tmp_path / ".kimi" / "sessions" / "a" / "b" / "context.jsonl"
    text = _lines(*_KIMI_HEAD, {"role": "assistant", "content": content})
    _assert_error(path, text, "kimi-cli", 3)
