"""Continue sessions: told by content and name, read with their thinking items, and repaired
into the assistant item's own `reasoning` object, which Continue never replays."""

from __future__ import annotations

import json
from pathlib import Path

from tests.formats.support import FIXTURES, read, repair, scores, site_at, sites
from thinkfix.formats import continue_dev, registry
from thinkfix.formats.detection import HEAD_BYTES
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair
from thinkfix.normalizer.batch import normalize

FMT = get("continue")
SESSIONS = FIXTURES / "continue" / "sessions"
LEAKY = SESSIONS / "3f6c1d2e-8a4b-4c7d-9e1f-5b2a6c8d0e41.json"
DATA = LEAKY.read_bytes()
#: The GUI's own stamp on the session's one reasoning object (history[8].reasoning.endAt).
STAMP = 1775484313894


def test_continue_session_and_index_are_continues_alone() -> None:
    for path in sorted(SESSIONS.glob("*.json")):
        data = path.read_bytes()
        found = registry.detect(data, str(path))
        assert found is not None and found[0] is FMT, path.name
        others = [v for k, v in scores(data, str(path)).items() if k != "continue"]
        assert max(others) < found[1]
    # the index holds no message
    index = (SESSIONS / "sessions.json").read_bytes()
    assert sum(FMT.assistant_messages(r) for r in read(FMT, index)) == 0


def test_continue_truncated_head_is_told_by_its_leading_keys() -> None:
    doc = json.loads(DATA)
    doc["history"][0]["contextItems"][0]["content"] = "x" * (2 * HEAD_BYTES)
    big = json.dumps(doc, indent=2).encode()
    found = registry.detect(big[:HEAD_BYTES], "renamed.json")
    assert found is not None and found[0] is FMT


def test_continue_other_json_objects_are_not_claimed() -> None:
    assert FMT.detect(b'{"sessionId": "s", "history": []}', "x.json") == 0.0
    assert FMT.detect(b'[{"sessionId": "s", "title": "t"}]', "sessions.json") == 0.0


def test_continue_sites_are_assistant_contents_with_thinking_items_and_reasoning() -> None:
    found = sites(FMT, read(FMT, DATA))
    assert [s.json_path for s in found] == [
        "history[1].message.content",
        "history[2].message.content",
        "history[4].message.content",
        "history[6].message.content",
        "history[8].message.content",
    ]
    assert {s.session_id for s in found} == {"3f6c1d2e-8a4b-4c7d-9e1f-5b2a6c8d0e41"}
    assert {s.model for s in found} == {"Qwen3 32B (Ollama)"}
    by_path = {s.json_path: s for s in found}
    # the tool call follows the text (rule 4's evidence)
    assert by_path["history[1].message.content"].followed_by_tool_call
    # a `thinking` item right before the answer, and the GUI's own reasoning object
    assert "<think> blocks are removed" in (
        by_path["history[6].message.content"].native_reasoning or ""
    )
    assert by_path["history[8].message.content"].native_reasoning == (
        "One line under Fixed is enough."
    )
    kinds = [
        [f.kind.value for f in normalize(s.text, native_reasoning=s.native_reasoning).findings]
        for s in found
    ]
    assert kinds == [["orphan_close"], ["block"], [], [], ["orphan_close"]]


def test_continue_repair_creates_the_reasoning_object_the_gui_writes() -> None:
    site = site_at(sites(FMT, read(FMT, DATA)), 1, "history[2].message.content")
    visible = "The pattern in `strip_tags` is greedy."
    out = repair(FMT, DATA, [Repair(site, visible, ("The pattern is greedy.",))])
    item = out.after[0].data["history"][2]
    assert item["reasoning"] == {
        "text": "The pattern is greedy.",
        "startAt": STAMP,
        "endAt": STAMP,
        "active": False,
    }
    assert list(item) == ["message", "contextItems", "promptLogs", "reasoning"]
    # promptLogs is the log of what the provider sent: left as it was
    assert item["promptLogs"][0]["completion"] == site.text
    placement = out.placements[0]
    assert placement.kind is PlacementKind.FIELD
    assert placement.json_path == "history[2].reasoning.text"
    # Continue's two-space indentation, and no trailing newline, as JSON.stringify wrote it
    assert b'\n      "reasoning": {\n        "text": "The pattern is greedy.",' in out.data
    assert not out.data.endswith(b"\n")


def test_continue_repair_stamps_a_session_without_reasoning_objects_the_same_every_run() -> None:
    doc = json.loads(DATA)
    del doc["history"][8]["reasoning"]
    data = json.dumps(doc, indent=2, ensure_ascii=False).encode()
    site = site_at(sites(FMT, read(FMT, data)), 1, "history[1].message.content")
    outs = [
        repair(FMT, data, [Repair(site, "I'll read the parser first.", ("Read it first.",))])
        for _ in range(2)
    ]
    reasoning = outs[0].after[0].data["history"][1]["reasoning"]
    assert (reasoning["startAt"], reasoning["endAt"]) == (continue_dev.NO_TIME,) * 2
    # a set endAt is what the GUI reads as a finished block ("Thought", not "Thinking...")
    assert reasoning["endAt"] and not reasoning["active"]
    assert outs[0].data == outs[1].data


def test_continue_repair_appends_to_reasoning_the_gui_already_cut_out() -> None:
    site = site_at(sites(FMT, read(FMT, DATA)), 1, "history[8].message.content")
    out = repair(
        FMT,
        DATA,
        [Repair(site, "Added a line under **Fixed**.", ("Also mention the CLI flag.",))],
    )
    reasoning = out.after[0].data["history"][8]["reasoning"]
    assert reasoning["text"] == "One line under Fixed is enough.\n\nAlso mention the CLI flag."
    assert (reasoning["startAt"], reasoning["endAt"]) == (1775484312207, 1775484313894)
    assert out.placements[0].json_path == "history[8].reasoning.text"


def test_continue_repair_of_every_leak_rescans_clean() -> None:
    found = sites(FMT, read(FMT, DATA))
    repairs = []
    for s in found:
        result = normalize(s.text, native_reasoning=s.native_reasoning)
        if result.findings:
            repairs.append(Repair(s, result.visible, tuple(result.thinking)))
    out = repair(FMT, DATA, repairs)
    assert all(p.applied for p in out.placements)
    again = sites(FMT, out.reread)
    assert not [s for s in again if normalize(s.text, native_reasoning=s.native_reasoning).findings]
    # the thinking item (replayed) and the user's context items are untouched
    before, after = json.loads(DATA), out.after[0].data
    assert after["history"][5] == before["history"][5]
    assert after["history"][0] == before["history"][0]


def test_continue_turns_show_thinking_items_tool_results_and_reasoning() -> None:
    turns = list(FMT.turns(read(FMT, DATA)[0]))
    roles = [t.role.value for t in turns]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "assistant",
        "user",
        "assistant",
    ]
    assert [p.kind.value for p in turns[6].parts] == ["thinking", "text"]
    assert turns[8].parts[0].text == "One line under Fixed is enough."


def test_continue_is_discovered_in_its_folder_and_under_its_override(tmp_path: Path) -> None:
    from thinkfix.engine.inputs.discover import discover, locations

    home = tmp_path / "home"
    (home / ".continue" / "sessions").mkdir(parents=True)
    moved = tmp_path / "cdir"
    (moved / "sessions").mkdir(parents=True)
    env = {"PWD": str(tmp_path)}
    assert str(home / ".continue" / "sessions") in discover(env=env, home=home)
    found = discover(env={**env, "CONTINUE_GLOBAL_DIR": str(moved)}, home=home)
    assert str(moved / "sessions") in found
    assert str(home / ".continue" / "sessions") not in found
    # `~` is the home folder, as for the other runtimes' variables
    tilde = {loc.path for loc in locations(env={**env, "CONTINUE_GLOBAL_DIR": "~/c"}, home=home)}
    assert str(home / "c" / "sessions") in tilde
