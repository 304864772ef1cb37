"""Two repairs of a living session whose reasoning goes to a sidecar undo in either order.

Codex sessions on OpenAI-hosted models get `<session>.thinkfix.json` (`--codex-mode auto`, the
default), and so do claw-code's: each repair adds its reasoning entries to that file. Built by
hand (store20's review): repair, Codex appends a turn that leaks, repair again, undo the
older repair first: refused, "s.jsonl.thinkfix.json: changed since the repair", because the
second repair had extended the sidecar; the session itself would have been merged. Now undo
takes out of the sidecar the entries its repair added, keeping the others."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.commands import invoke

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CODEX = (
    FIXTURES / "codex" / "rollout-2025-06-14T09-12-40-3f9d2c7e-1b4a-4e8f-9a6d-5c2e7b0f1d83.jsonl"
)
TURN = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "<think>\nsecond thought\n</think>\n\nMore."}],
}
APPENDED = (json.dumps(TURN) + "\n").encode()

pytestmark = pytest.mark.usefixtures("isolated_cli")


def _repair(work: Path, manifest: Path) -> None:
    args = ["repair", "--in-place", "--isolated", "--include-active", "--codex-mode", "sidecar"]
    result = invoke(*args, "--manifest", str(manifest), str(work))
    assert result.exit_code in (0, 1) and manifest.exists(), result.output


def _reasoning(sidecar: Path) -> list[str]:
    return [r for e in json.loads(sidecar.read_text())["reasoning"] for r in e["reasoning"]]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_two_repairs_with_a_sidecar_undo_in_either_order(
    tmp_path: Path, order: tuple[int, int]
) -> None:
    work = tmp_path / "s" / "s.jsonl"
    work.parent.mkdir()
    shutil.copy(CODEX, work)
    sidecar = work.parent / "s.jsonl.thinkfix.json"
    manifests = [tmp_path / "m0.json", tmp_path / "m1.json"]
    _repair(work, manifests[0])
    with open(work, "ab") as fp:
        fp.write(APPENDED)
    _repair(work, manifests[1])
    assert len(_reasoning(sidecar)) == 2  # not vacuous: both repairs wrote to the sidecar
    first = invoke("undo", str(manifests[order[0]]))
    assert first.exit_code == 0, first.output
    left = _reasoning(sidecar)  # the other repair's reasoning alone
    assert len(left) == 1 and ("second thought" in left[0]) == (order[0] == 0)
    again = invoke("undo", str(manifests[order[0]]))
    assert again.exit_code == 0 and "already" in again.stderr, again.output
    last = invoke("undo", str(manifests[order[1]]))
    assert last.exit_code == 0, last.output
    assert "removed" in last.stderr and "keeping the reasoning" not in last.stderr  # none left
    assert work.read_bytes() == CODEX.read_bytes() + APPENDED
    assert not sidecar.exists()  # created by the repairs, gone with them


def test_a_sidecar_undo_keeps_what_was_there_before_the_repairs(tmp_path: Path) -> None:
    """A sidecar that held entries before the first repair keeps them, whatever the order."""
    work = tmp_path / "s" / "s.jsonl"
    work.parent.mkdir()
    shutil.copy(CODEX, work)
    sidecar = work.parent / "s.jsonl.thinkfix.json"
    old = {"schema_version": 1, "tool": "thinkfix", "source": "s.jsonl", "format": "codex"}
    sidecar.write_text(json.dumps(old | {"reasoning": [{"reasoning": ["kept"]}]}))
    original = sidecar.read_bytes()
    manifests = [tmp_path / "m0.json", tmp_path / "m1.json"]
    _repair(work, manifests[0])
    with open(work, "ab") as fp:
        fp.write(APPENDED)
    _repair(work, manifests[1])
    for manifest in manifests:  # the older first
        result = invoke("undo", str(manifest))
        assert result.exit_code == 0, result.output
    assert _reasoning(sidecar) == ["kept"]
    assert json.loads(sidecar.read_bytes()) == json.loads(original)
    assert work.read_bytes() == CODEX.read_bytes() + APPENDED


def test_skip_changed_keeps_the_sidecar_of_a_session_it_leaves_repaired(tmp_path: Path) -> None:
    """`undo --skip-changed` over a session its runtime rewrote since: the session stays
    repaired, so its sidecar (the reasoning that repair took out of it) stays too. Before, the
    sidecar was removed alone, the reasoning gone from beside the session (built by hand)."""
    work = tmp_path / "s" / "s.jsonl"
    work.parent.mkdir()
    shutil.copy(CODEX, work)
    sidecar = work.parent / "s.jsonl.thinkfix.json"
    manifest = tmp_path / "m.json"
    _repair(work, manifest)
    kept = sidecar.read_bytes()
    work.write_bytes(work.read_bytes().replace(b'"text":"Let me', b'"text":"Let  me'))
    result = invoke("undo", "--skip-changed", str(manifest))
    assert result.exit_code == 2, result.output
    assert "changed since the repair" in result.stderr
    assert sidecar.read_bytes() == kept
    assert "its session" in result.stderr


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(order=st.permutations(range(3)))
def test_three_repairs_with_a_sidecar_undo_in_any_order(
    tmp_path_factory: pytest.TempPathFactory, order: list[int]
) -> None:
    """Repair, a leaking turn appended, repair, another, repair: undone in any order, the
    session is the original followed by both turns and the sidecar is gone; every undo but
    the last leaves the other repairs' reasoning in it."""
    tmp = tmp_path_factory.mktemp("three")
    work = tmp / "s" / "s.jsonl"
    work.parent.mkdir()
    shutil.copy(CODEX, work)
    sidecar = work.parent / "s.jsonl.thinkfix.json"
    manifests = [tmp / f"m{k}.json" for k in range(3)]
    turns = [APPENDED, APPENDED.replace(b"second thought", b"third thought")]
    _repair(work, manifests[0])
    for k, turn in enumerate(turns, 1):
        with open(work, "ab") as fp:
            fp.write(turn)
        _repair(work, manifests[k])
    for done, k in enumerate(order, 1):
        result = invoke("undo", str(manifests[k]))
        assert result.exit_code == 0, result.output
        assert len(_reasoning(sidecar)) == 3 - done if done < 3 else not sidecar.exists()
    assert work.read_bytes() == CODEX.read_bytes() + b"".join(turns)
