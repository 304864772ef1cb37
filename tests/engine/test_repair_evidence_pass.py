"""Repair's rule-4 evidence pass is the scan's (#26 item 4): a text that waits for a tool
call on a later record of its message is settled by reading only the lines that name its
message (`evidence.calls_after_from`), not by a record made of every line before and after."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from pathlib import Path

import pytest

from tests.engine.test_evidence_records import LEAK, PLAN, _codex_lines, _repair
from tests.engine.test_refusal_repairs import _claude_lines
from thinkfix.engine.repair.model import WriteMode
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import Record


def _records_seen(monkeypatch: pytest.MonkeyPatch, owner: type) -> list[int]:
    """The indices of the records `owner.calls_after` reads, in order, from now on."""
    real = owner.calls_after  # type: ignore[attr-defined]
    seen: list[int] = []

    def counting(self: object, records: Iterable[Record], indices: Collection[int]) -> object:
        def each() -> Iterable[Record]:
            for record in records:
                seen.append(record.index)
                yield record

        return real(self, each(), indices)

    monkeypatch.setattr(owner, "calls_after", counting)
    return seen


def test_the_evidence_pass_reads_only_the_lines_naming_the_waiting_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _claude_lines(LEAK)
    # 400 lines before the waiting text and 400 after its tool_use, none naming its message
    filler = [json.dumps(lines[0])] * 400
    body = [json.dumps(line) for line in lines]
    source = tmp_path / "7e1d0c52-3b4a-4f6e-9d8c-1a2b3c4d5e6f.jsonl"
    source.write_text("\n".join(filler + body[:3] + filler + body[3:]) + "\n")
    fmt = type(registry.get("claude-code"))
    assert fmt.calls_after is SessionFormat.calls_after  # spied on where it is defined
    seen = _records_seen(monkeypatch, SessionFormat)
    result = _repair(tmp_path, source, WriteMode.DRY_RUN)
    (change,) = result.files[0].changes
    assert change.findings and change.extracted == (PLAN,)  # the evidence was found
    assert seen == [401, 402]  # the waiting text's record and its tool_use's, no other


def test_a_look_ahead_pass_starts_at_the_first_waiting_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex pairs a text with the call items after it (no id to search for): the pass reads
    from the waiting text's line on, not from the file's start (evidence lies only after)."""
    lines = [json.dumps(line) for line in _codex_lines(LEAK)]
    source = tmp_path / "rollout-2026-03-01T10-00-01-0199a1b2-c3d4.jsonl"
    source.write_text("\n".join(lines[:4] + [lines[3]] * 400 + lines[4:]) + "\n")
    fmt = type(registry.get("codex"))
    seen = _records_seen(monkeypatch, fmt)
    result = _repair(tmp_path, source, WriteMode.DRY_RUN)
    (change,) = result.files[0].changes
    assert change.extracted == (PLAN,)  # the call item after it was found
    assert seen and seen[0] == 0 and len(seen) < 10, seen  # numbered from the text, as given
