"""Undo of a session document its runtime saved again since the repair (the living store).

Gemini CLI, Continue, Cline and Copilot Chat write a session JSON whole on every change. A
session used after a repair (a turn added, `lastUpdated` set) no longer held the bytes the
repair wrote, and undo refused it: "changed since the repair ... restoring it would lose those
changes". Now the repair records the values it changed in the document (`tree_changes`), and
undo puts back those alone where they still hold what the repair left, keeping everything the
runtime saved since; a value the runtime changed since still refuses, naming it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.commands import invoke
from thinkfix.engine.ledger import docwise, integrity
from thinkfix.engine.ledger.journal import load_manifest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GEMINI = FIXTURES / "gemini-cli" / "session-2026-02-03T10-15-4f2a9c1e.json"
CONTINUE = FIXTURES / "continue" / "sessions" / "3f6c1d2e-8a4b-4c7d-9e1f-5b2a6c8d0e41.json"

pytestmark = pytest.mark.usefixtures("isolated_cli")


def _repaired(tmp: Path, original: Path) -> tuple[Path, Path]:
    work = tmp / "s" / original.name
    work.parent.mkdir(parents=True)
    shutil.copy(original, work)
    manifest = tmp / "m.json"
    args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest", str(manifest)]
    result = invoke(*args, str(work))
    assert result.exit_code in (0, 1) and manifest.exists(), result.output
    assert work.read_bytes() != original.read_bytes()
    return work, manifest


def _resave(path: Path, change: Any) -> dict[str, Any]:
    """The runtime's save: the whole session, `JSON.stringify(session, null, 2)`."""
    doc: dict[str, Any] = json.loads(path.read_bytes())
    change(doc)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    return doc


def _gemini_turn(doc: dict[str, Any]) -> None:
    doc["messages"].append(
        {"id": "later-1", "timestamp": "2026-02-03T10:30:00.000Z", "type": "user", "content": "ok"}
    )
    doc["lastUpdated"] = "2026-02-03T10:30:00.000Z"


def _continue_turn(doc: dict[str, Any]) -> None:
    doc["history"].append(
        {
            "message": {"role": "user", "content": "Thanks."},
            "contextItems": [],
        }
    )
    doc["title"] = "Renamed since"


@pytest.mark.parametrize(
    ("original", "turn", "key"),
    [(GEMINI, _gemini_turn, "messages"), (CONTINUE, _continue_turn, "history")],
    ids=["gemini-cli", "continue"],
)
def test_undo_of_a_resaved_document_keeps_what_the_runtime_saved_since(
    tmp_path: Path, original: Path, turn: Any, key: str
) -> None:
    work, manifest = _repaired(tmp_path, original)
    saved = _resave(work, turn)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output  # before: 2, "changed since the repair"
    assert "keeping what the runtime saved since the repair" in result.output
    now = json.loads(work.read_bytes())
    before = json.loads(original.read_bytes())
    assert now[key][:-1] == before[key]  # every repaired message as it was
    assert now[key][-1] == saved[key][-1]  # the turn saved since, kept
    assert {k: v for k, v in now.items() if k != key} == {
        k: v for k, v in saved.items() if k != key
    }
    assert work.read_text().startswith('{\n  "')  # the runtime's layout kept
    again = invoke("undo", str(manifest))
    assert again.exit_code == 0 and "already" in again.output


CLINE_TASK = FIXTURES / "cline" / "tasks" / "1775300000123"


def test_undo_of_a_cline_task_keeps_the_messages_cline_appended_since(tmp_path: Path) -> None:
    """Cline saves both task files compact and whole; the repair inserted a reasoning message
    into `ui_messages.json` (a list of another length: one change, its repaired length kept),
    and Cline appended to both since."""
    task = tmp_path / "tasks" / CLINE_TASK.name
    shutil.copytree(CLINE_TASK, task)
    manifest = tmp_path / "m.json"
    args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest", str(manifest)]
    assert invoke(*args, str(task)).exit_code in (0, 1)
    later = {
        "api_conversation_history.json": {
            "role": "user",
            "content": [{"type": "text", "text": "next"}],
        },
        "ui_messages.json": {"ts": 1775300999999, "type": "say", "say": "text", "text": "later"},
    }
    for name, item in later.items():
        doc = json.loads((task / name).read_bytes())
        (task / name).write_text(json.dumps([*doc, item], separators=(",", ":")))
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output  # before: 2, "changed since the repair"
    for name, item in later.items():
        now = json.loads((task / name).read_bytes())
        assert now == [*json.loads((CLINE_TASK / name).read_bytes()), item]


def test_undo_refuses_a_repaired_value_the_runtime_changed_since(tmp_path: Path) -> None:
    work, manifest = _repaired(tmp_path, GEMINI)

    def edit_repaired(doc: dict[str, Any]) -> None:
        doc["messages"][1]["content"] = "Edited in the app since."

    _resave(work, edit_repaired)
    kept = work.read_bytes()
    result = invoke("undo", str(manifest))
    assert result.exit_code == 2
    assert "messages[1].content changed since the repair" in result.output
    assert work.read_bytes() == kept


@pytest.mark.parametrize(
    "bad",
    [
        [],
        [{"path": [], "after_sha256": "0" * 64}],
        [{"path": ["a", 1.5], "after_sha256": "0" * 64}],
        [{"path": ["a"], "after_sha256": "zz"}],
        {"path": ["a"]},
        [{"path": ["a"], "length": -1, "after_sha256": "0" * 64}],
    ],
)
def test_a_manifest_with_odd_tree_changes_fails_its_check(tmp_path: Path, bad: Any) -> None:
    _, manifest = _repaired(tmp_path, GEMINI)
    doc = load_manifest(str(manifest))
    doc["files"][0]["records"][0]["tree_changes"] = bad
    with pytest.raises(integrity.IntegrityError, match="tree_changes"):
        integrity.check_document(doc, str(manifest))


# --- the merge itself, on generated documents --------------------------------------------

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
message = st.fixed_dictionaries({"id": st.integers(0, 99), "content": texts})


@given(
    st.lists(message, min_size=1, max_size=5),
    st.data(),
    st.lists(message, max_size=3),
    texts,
    st.sampled_from([0, 1, 2, 4]),
)
def test_merged_puts_back_the_repaired_values_and_keeps_the_rest(
    messages: list[dict[str, Any]],
    data: st.DataObject,
    later: list[dict[str, Any]],
    title: str,
    indent: int,
) -> None:
    """A repair changes some messages' content or adds a `thoughts` key; the runtime then
    appends messages and sets the title, saving the whole document in its layout. Undo gives
    the original messages, the appended ones and the new title; a second undo changes
    nothing."""
    before = {"title": "t", "messages": messages}
    after = json.loads(json.dumps(before))
    for m in after["messages"]:
        how = data.draw(st.sampled_from(["same", "content", "thoughts"]))
        if how == "content":
            m["content"] = m["content"] + "!"
        elif how == "thoughts":
            m["thoughts"] = [{"description": "why"}]
    if data.draw(st.booleans()):  # a reasoning message inserted before an answer
        at = data.draw(st.integers(0, len(after["messages"])))
        after["messages"].insert(at, {"id": -1, "content": "reasoning"})
    changes = docwise.tree_changes(orjson.dumps(before), orjson.dumps(after))
    if after == before:
        assert changes is None
        return
    assert changes is not None
    now = {"title": title, "messages": after["messages"] + later}
    raw = json.dumps(now, indent=indent or None, ensure_ascii=False).encode()
    record = {"tree_changes": changes}
    new, why = docwise.merged(record, orjson.dumps(before), raw)
    assert new is not None, why
    assert json.loads(new) == {"title": title, "messages": messages + later}
    assert docwise.merged(record, orjson.dumps(before), new) == (new, "")
