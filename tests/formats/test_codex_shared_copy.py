"""Codex: an `agent_message` event between two assistant messages of the same text is the
copy of one of them, never of both (two edits on one span refused the whole file: hypothesis
found it in test_repair_fast_identical's codex case)."""

from __future__ import annotations

from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import run
from tests.formats.support import read, repair, sites
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("codex")
TEXT = "<think>check the caller</think>The fix is in."
STAMP = '"timestamp":"2026-03-02T10:21:19.004Z"'
ITEM = (
    "{" + STAMP + ',"type":"response_item","payload":{"type":"message","role":"assistant",'
    '"content":[{"type":"output_text","text":"' + TEXT + '"}]}}'
)
EVENT = (
    "{" + STAMP + ',"type":"event_msg","payload":{"type":"agent_message","message":"' + TEXT + '"}}'
)
LEGACY = (
    '{"id":"3f9d2c7e-1b4a-4e8f-9a6d-5c2e7b0f1d83","timestamp":"2025-06-14T09:12:40.517Z",'
    '"instructions":"Prefer small, reviewable patches."}'
)
# What hypothesis found: a message, its event copy, a second message of the same text.
ROLLOUT = f"{ITEM}\n{EVENT}\n{ITEM}\n{LEGACY}\n{LEGACY}\n".encode()


def _payloads(data: bytes) -> list[object]:
    return [orjson.loads(line).get("payload") for line in data.splitlines()]


def test_event_between_two_equal_messages_is_the_copy_of_the_second_only() -> None:
    found = sites(FMT, read(FMT, ROLLOUT))
    assert len(found) == 2
    out = repair(FMT, ROLLOUT, [Repair(s, "The fix is in.", ("check the caller",)) for s in found])
    assert [p.kind for p in out.placements] == [PlacementKind.RECORD, PlacementKind.RECORD]
    assert all(p.applied for p in out.placements)
    # Codex writes a message's event, then its item (codex-rs handle_output_item_done emits
    # the completed turn item before recording it): the event is the second message's copy.
    assert [p.mirrors for p in out.placements] == [(), ("record 3: payload.message",)]
    reasoning = {"type": "reasoning", "summary": [], "encrypted_content": None}
    reasoning["content"] = [{"type": "reasoning_text", "text": "check the caller"}]
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "The fix is in."}],
    }
    shown = {"type": "agent_reasoning", "text": "check the caller"}
    assert _payloads(out.data)[:7] == [
        reasoning,
        shown,
        message,
        {"type": "agent_message", "message": "The fix is in."},
        reasoning,
        shown,
        message,
    ]


def test_each_message_of_the_same_text_keeps_its_own_event_as_codex_writes_them() -> None:
    """Event, item, event, item (a turn of two equal messages): one copy each, not the first
    message's event and both after it."""
    data = f"{EVENT}\n{ITEM}\n{EVENT}\n{ITEM}\n".encode()
    found = sites(FMT, read(FMT, data))
    out = repair(FMT, data, [Repair(s, "The fix is in.", ("check the caller",)) for s in found])
    assert all(p.applied for p in out.placements)
    assert [len(p.mirrors) for p in out.placements] == [1, 1]
    assert b"<think>" not in out.data


def test_repair_of_the_file_then_undo_restores_its_bytes(tmp_path: Path) -> None:
    work = tmp_path / "codex.jsonl"
    work.write_bytes(ROLLOUT)
    forced = ScanOptions(inputs=InputOptions(format="codex"))
    assert len(scan([str(work)], forced, jobs=1).findings) == 2
    result = run([work], WriteMode.IN_PLACE, tmp_path, scan=forced)
    assert result.exit_code() is ExitCode.CLEAN, result
    assert not scan([str(work)], forced, jobs=1).findings
    assert result.manifest_path is not None
    undone = restore.undo(result.manifest_path)
    assert undone.exit_code() is ExitCode.CLEAN, undone
    assert work.read_bytes() == ROLLOUT


OTHER = (
    "{" + STAMP + ',"type":"response_item","payload":{"type":"message","role":"assistant",'
    '"content":[{"type":"output_text","text":"Done."}]}}'
)
USER = "{" + STAMP + ',"type":"event_msg","payload":{"type":"user_message","message":"go"}}'
LINES = {"item": ITEM, "event": EVENT, "other": OTHER, "user": USER, "legacy": LEGACY}


def _owned(kinds: list[str], j: int) -> bool:
    """Is the event at `j` beside a leaking message (no other message or turn between)?"""
    for step in (-1, 1):
        k = j + step
        while 0 <= k < len(kinds) and kinds[k] in ("event", "legacy"):
            k += step
        if 0 <= k < len(kinds) and kinds[k] == "item":
            return True
    return False


@settings(deadline=None, max_examples=150)
@given(st.lists(st.sampled_from(sorted(LINES)), min_size=1, max_size=9))
def test_every_leak_and_each_of_its_event_copies_is_repaired_once(kinds: list[str]) -> None:
    data = "\n".join([*(LINES[k] for k in kinds), ""]).encode()
    found = [s for s in sites(FMT, read(FMT, data)) if s.text == TEXT]
    assert len(found) == kinds.count("item")
    out = repair(FMT, data, [Repair(s, "The fix is in.", ("check the caller",)) for s in found])
    assert all(p.kind is PlacementKind.RECORD and p.applied for p in out.placements)
    mirrored = [m for p in out.placements for m in p.mirrors]
    assert len(mirrored) == len(set(mirrored))
    events = [(j, k) for j, k in enumerate(kinds) if k == "event"]
    after = [r for r in out.after if not r.inserted]
    for j, _ in events:
        leaking = "<think>" in after[j].data["payload"]["message"]
        assert leaking is not _owned(kinds, j)
