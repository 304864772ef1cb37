"""A text of many delimiter characters is normalized no more often than it must be (#26 item 4).

A text with more candidate characters than two per `max-findings` is first streamed through
the normalizer with the cap (`capped_findings`: its findings, all of them when it is under the
cap) before it is normalized whole for its repair. One made of `<think>step</think>answer `
repeated (a leak, then prose mentions) cost a dry run ~240 µs a mention: streamed and
normalized in the survey, then streamed and normalized again when the repaired record was
re-scanned, though the stream had already shown the repaired text holds no finding to
repair. A text whose complete findings need no repair (none of a selected kind changes the
text, none waits for a later tool call) is now not normalized again. Counts, not time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_evidence_records import _repair
from tests.engine.test_repair_record_memory import _session
from thinkfix.engine.repair import plan
from thinkfix.engine.repair.model import WriteMode

UNIT = "<think>step</think>answer "
FLOOD = 0.08  # MB: ~3,000 units, past `may_pass` at the default cap (1,000)


def _normalized(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the texts repair normalizes whole (`plan.normalize`), from now on."""
    real, sizes = plan.normalize, []

    def counting(text: str, **kwargs: Any) -> Any:
        sizes.append(len(text))
        return real(text, **kwargs)

    monkeypatch.setattr(plan, "normalize", counting)
    return sizes


@pytest.mark.parametrize("mode", [WriteMode.DRY_RUN, WriteMode.OUT])
def test_a_flood_of_mentions_is_normalized_whole_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: WriteMode
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    session = _session(folder, FLOOD, UNIT)
    sizes = _normalized(monkeypatch)
    result = _repair(tmp_path, session, mode)
    (found,) = result.files
    assert len(found.changes) == 2  # the ordinary leak and the flood's leading one
    flood = [n for n in sizes if n > 10_000]
    assert len(flood) == 1, sizes  # the survey's; the re-scan's stream proved the rest clean


def test_a_repaired_flood_still_rescans_to_nothing(tmp_path: Path) -> None:
    """What the re-scan's stream decides is what normalizing it would (no leak left)."""
    folder = tmp_path / "in"
    folder.mkdir()
    session = _session(folder, FLOOD, UNIT)
    result = _repair(tmp_path, session, WriteMode.OUT)
    (found,) = result.files
    out = next((tmp_path / "o").rglob("*.jsonl"))
    assert out.read_bytes() != session.read_bytes()
    again = _repair(tmp_path / "again", out, WriteMode.DRY_RUN)
    assert not again.files[0].changes, again.files[0].changes
    assert found.changes[1].findings  # the flood's leak was found and repaired
