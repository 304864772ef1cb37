"""Copilot Chat sessions as VS Code keeps them: the flat file and the mutation log, read by
content; repaired into a `thinking` part, with the round text Copilot replays fixed too,
and never by an insert that a later line of the log would index past."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.formats.support import FIXTURES, read, repair, scores, site_at, sites
from thinkfix.formats import registry
from thinkfix.formats.detection import HEAD_BYTES
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair
from thinkfix.normalizer.batch import normalize

FMT = get("copilot-chat")
ROOT = FIXTURES / "copilot-chat"
FLAT = ROOT / "chatSessions" / "4a7c2e91-3b5d-4f6a-9c8e-1d2f3a4b5c6d.json"
LOG = ROOT / "emptyWindowChatSessions" / "9e3d1c7b-5a2f-4e8d-b6c4-0f1e2d3c4b5a.jsonl"


def replay(data: bytes) -> Any:
    """The session a log replays to, as VS Code's `ObjectMutationLog.read` builds it."""
    state: Any = None
    for line in data.splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        if entry["kind"] == 0:
            state = entry["v"]
            continue
        *parents, last = entry["k"]
        target = state
        for key in parents:
            target = target[key]
        if entry["kind"] == 1:
            target[last] = entry["v"]
        elif entry["kind"] == 3:
            target.pop(last, None)
        else:
            items = target[last]
            if "i" in entry:
                del items[entry["i"] :]
            items.extend(entry.get("v") or [])
    return state


def _fixed(data: bytes) -> list[Repair]:
    out = []
    for s in sites(FMT, read(FMT, data)):
        result = normalize(s.text, native_reasoning=s.native_reasoning)
        if result.findings:
            out.append(Repair(s, result.visible, tuple(result.thinking)))
    return out


def test_copilot_chat_both_stores_are_claimed_by_content_alone() -> None:
    for path in (FLAT, LOG):
        data = path.read_bytes()
        found = registry.detect(data[:HEAD_BYTES], "renamed.bin")
        assert found is not None and found[0] is FMT
        assert max(v for k, v in scores(data).items() if k != FMT.id) < found[1]


def test_copilot_chat_long_first_line_is_told_by_its_opening_keys() -> None:
    doc = json.loads(FLAT.read_bytes())
    doc["requests"][0]["message"]["text"] = "x" * (2 * HEAD_BYTES)
    head = json.dumps(doc, separators=(",", ":")).encode()[:HEAD_BYTES]
    assert registry.detect(head, "s.json")[0] is FMT  # type: ignore[index]
    first = LOG.read_bytes().split(b"\n", 1)[0]
    entry = json.loads(first)
    entry["v"]["inputState"]["inputText"] = "y" * (2 * HEAD_BYTES)
    head = json.dumps(entry, separators=(",", ":")).encode()[:HEAD_BYTES]
    assert registry.detect(head, "s.jsonl")[0] is FMT  # type: ignore[index]


def test_copilot_chat_log_lines_without_the_first_are_not_claimed() -> None:
    tail = b"\n".join(LOG.read_bytes().splitlines()[1:]) + b"\n"
    assert FMT.detect(tail, "x.jsonl") == 0.0
    # a log whose later lines are something else is not this log
    first = LOG.read_bytes().split(b"\n", 1)[0]
    assert FMT.detect(first + b'\n{"role":"user","content":"hi"}\n', "x.jsonl") == 0.0


def test_copilot_chat_sites_are_markdown_parts_not_tool_messages_or_thinking() -> None:
    found = sites(FMT, read(FMT, FLAT.read_bytes()))
    assert [s.json_path for s in found] == [
        "requests[0].response[0].value",
        "requests[0].response[2].value",
        "requests[1].response[1].value",
        "requests[2].response[0].value",
    ]
    assert found[0].followed_by_tool_call and not found[1].followed_by_tool_call
    assert found[2].model == "copilot/claude-sonnet-4.5"
    assert "<think>.*</think>" in (found[2].native_reasoning or "")
    assert {s.session_id for s in found} == {"4a7c2e91-3b5d-4f6a-9c8e-1d2f3a4b5c6d"}


def test_copilot_chat_log_counts_each_entry_that_holds_model_text() -> None:
    records = read(FMT, LOG.read_bytes())
    counts = [FMT.assistant_messages(r) for r in records]
    # the pending request (line 3) and the tool call's progress (lines 5, 6) hold no text
    assert counts == [0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1]
    found = sites(FMT, records)
    assert [(s.line, s.json_path) for s in found] == [
        (4, "v[0].value"),
        (7, "v[0].value"),
        (11, "v[0].response[0].value"),
    ]
    # a line that pushes parts does not name the model: the request it belongs to does
    assert {s.model for s in found} == {"ollama/qwen3:32b"}


def test_copilot_chat_flat_repair_adds_a_thinking_part_and_fixes_the_replayed_round() -> None:
    data = FLAT.read_bytes()
    out = repair(FMT, data, _fixed(data))
    doc = out.after[0].data
    first = doc["requests"][0]
    assert first["response"][0] == {
        "kind": "thinking",
        "value": "The user asks why test_parse_args fails. Read the parser before guessing.",
    }
    assert first["response"][1]["value"] == "Let me read the parser first."
    rounds = first["result"]["metadata"]["toolCallRounds"]
    assert rounds[0]["response"] == "Let me read the parser first."
    assert [p.kind for p in out.placements] == [PlacementKind.BLOCK, PlacementKind.BLOCK]
    assert out.placements[0].json_path == "requests[0].response[0]"
    assert out.placements[0].mirrors == (
        "record 0: requests[0].result.metadata.toolCallRounds[0].response",
    )
    # VS Code's compact JSON, no trailing newline
    assert out.data.startswith(b'{"version":3,') and not out.data.endswith(b"\n")
    assert b"</think>" not in out.data.replace(b"<think>.*</think>", b"").replace(
        b"<think>.*?</think>", b""
    )


def test_copilot_chat_log_repair_keeps_every_later_index_right() -> None:
    data = LOG.read_bytes()
    out = repair(FMT, data, _fixed(data))
    kinds = {p.site.line: p.kind for p in out.placements}
    # line 6 truncates request 0's parts at index 1: an insert before line 4's text would
    # make it cut the text instead of the tool call, so line 4 keeps its reasoning in the
    # manifest; line 11's request is written whole and nothing indexes into it
    assert kinds == {4: PlacementKind.MANIFEST, 11: PlacementKind.BLOCK}
    before, after = replay(data), replay(out.data)
    old, new = before["requests"][0]["response"], after["requests"][0]["response"]
    assert [p.get("kind") for p in new] == [p.get("kind") for p in old]
    assert new[0]["value"] == "Let me read the parser."
    assert after["requests"][0]["result"]["metadata"]["toolCallRounds"][0]["response"] == (
        "Let me read the parser."
    )
    second = after["requests"][1]["response"]
    assert [p.get("kind") for p in second] == ["thinking", None]
    assert second[1]["value"] == "Added the entry under **Fixed**."
    # the log still ends with a newline per entry, and only the leaking lines changed
    assert out.data.endswith(b"\n")
    changed = [
        i for i, (a, b) in enumerate(zip(data.splitlines(), out.data.splitlines())) if a != b
    ]
    assert changed == [3, 7, 10]


def test_copilot_chat_repaired_stores_rescan_clean() -> None:
    for path in (FLAT, LOG):
        data = path.read_bytes()
        out = repair(FMT, data, _fixed(data))
        assert not [
            s
            for s in sites(FMT, out.reread)
            if normalize(s.text, native_reasoning=s.native_reasoning).findings
        ]


def test_copilot_chat_an_unsafe_round_copy_is_left_when_it_does_not_hold_the_text() -> None:
    data = FLAT.read_bytes()
    doc = json.loads(data)
    doc["requests"][2]["result"]["metadata"]["toolCallRounds"][0]["response"] = "elsewhere"
    edited = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    site = site_at(sites(FMT, read(FMT, edited)), 1, "requests[2].response[0].value")
    out = repair(FMT, edited, [Repair(site, "Added a line.", ("One line.",))])
    assert out.placements[0].mirrors == ()
    rounds = out.after[0].data["requests"][2]["result"]["metadata"]["toolCallRounds"]
    assert rounds[0]["response"] == "elsewhere"


def test_copilot_chat_locations_are_chat_folders_never_all_of_workspace_storage(
    tmp_path: Path,
) -> None:
    user = tmp_path / ".config" / "Code" / "User"
    for workspace in ("a1b2", "c3d4"):
        (user / "workspaceStorage" / workspace).mkdir(parents=True)
    (user / "workspaceStorage" / "a1b2" / "chatSessions").mkdir()
    (user / "workspaceStorage" / "a1b2" / "state.vscdb").write_bytes(b"SQLite format 3\x00")
    found = {str(p.relative_to(tmp_path)) for p in FMT.default_locations({}, tmp_path)}
    assert ".config/Code/User/workspaceStorage/a1b2/chatSessions" in found
    assert ".config/Code/User/globalStorage/emptyWindowChatSessions" in found
    assert ".config/Code/User/globalStorage/transferredChatSessions" in found
    insiders = ".config/Code - Insiders/User/globalStorage"
    assert f"{insiders}/emptyWindowChatSessions" in found
    assert ".vscode-server/data/User/globalStorage/emptyWindowChatSessions" in found
    assert not any(p.endswith("workspaceStorage") for p in found)
    from thinkfix.engine.inputs.discover import discover

    assert discover(env={"PWD": str(tmp_path)}, home=tmp_path) == [
        str(user / "workspaceStorage" / "a1b2" / "chatSessions")
    ]
    portable = FMT.default_locations({"VSCODE_PORTABLE": str(tmp_path / "vsc")}, tmp_path)
    assert (
        tmp_path / "vsc" / "user-data" / "User" / "globalStorage" / "emptyWindowChatSessions"
        in (portable)
    )
    # %APPDATA% is Windows' folder, listed there only (tests/formats/test_locations.py)
    appdata = FMT.default_locations({"APPDATA": str(tmp_path / "roaming")}, tmp_path)
    assert not any("roaming" in str(p) for p in appdata)


def test_copilot_chat_log_copies_concatenated_are_still_the_log() -> None:
    # a log rewritten whole begins again with its first entry; a file of copies one after
    # another (as a large-session split test builds) is still read as this log
    data = LOG.read_bytes() * 3
    found = registry.detect(data[:HEAD_BYTES], "x.jsonl")
    assert found is not None and found[0] is FMT
    assert sum(FMT.assistant_messages(r) for r in read(FMT, data)) == 9
