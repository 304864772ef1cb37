"""`--fix tool-pairs` for the JSON-document runtimes whose pairing the check reads as they load
it (`health/loaded.py`): Continue, and the Gemini CLI result whose call its message's
`content` does not make. Each case runs the CLI: the runtime's record, nothing left for the
check, nothing planned again, every byte back on undo."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from thinkfix.cli import main
from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.engine.health.run import check_bytes, check_file
from thinkfix.engine.report.checks import Check
from thinkfix.formats import registry
from thinkfix.formats.repairs import Edits

DATA = Path(__file__).resolve().parents[3] / "data" / "health"
CONTINUE = "continue/tool-pairs/sessions/5e8a2c4f-1b3d-4e6a-9c7f-2d0b4a6e8c13.json"


def _problems(path: Path, fmt: str) -> list[tuple[str, str]]:
    found = check_file(str(path), registry.get(fmt), {Check.TOOL_PAIRS}).findings
    return sorted((str(f.problem), f.detail) for f in found)


def _repair(fmt: str, *args: str) -> Result:
    argv = ["repair", "--include-active", "--fix", "tool-pairs", "--format", fmt, *args]
    return CliRunner().invoke(main, argv, catch_exceptions=False)


def _fix_and_undo(path: Path, fmt: str) -> bytes:
    """Fix `path` in place; check that nothing is left and nothing planned again, undo, check
    every byte came back; the fixed bytes."""
    original = path.read_bytes()
    result = _repair(fmt, "--in-place", str(path))
    assert result.exit_code == 0, result.output
    fixed = path.read_bytes()
    assert fixed != original
    assert _problems(path, fmt) == []
    again = _repair(fmt, "--check", str(path))
    assert again.exit_code == 0, again.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("undo with: ")]
    undone = CliRunner().invoke(
        main, ["undo", line.removeprefix("undo with: thinkfix undo ")], catch_exceptions=False
    )
    assert undone.exit_code == 0, undone.output
    assert path.read_bytes() == original
    return fixed


def test_continue_open_call_gets_the_canceled_state_and_an_orphan_state_leaves(
    tmp_path: Path,
) -> None:
    """A `message.toolCalls` entry without a `toolCallStates` entry gets the state Continue
    keeps for a call the user cancelled (`constructMessages` then sends "The user cancelled
    this tool call."); a state whose call the message does not make leaves the list."""
    path = tmp_path / CONTINUE
    path.parent.mkdir(parents=True)
    shutil.copyfile(DATA / CONTINUE, path)
    before = json.loads(path.read_bytes())
    assert _problems(path, "continue") == [
        ("call-without-result", "call_Hd4tR6mJx1Ve"),
        ("result-without-call", "call_Wy2cF9hJm4Rp"),
    ]
    history = json.loads(_fix_and_undo(path, "continue"))["history"]
    call = before["history"][4]["message"]["toolCalls"][1]
    assert history[4]["toolCallStates"] == [
        before["history"][4]["toolCallStates"][0],
        {
            "toolCallId": "call_Hd4tR6mJx1Ve",
            "toolCall": call,
            "status": "canceled",
            "parsedArgs": {"command": "pytest -q tests/test_round.py", "waitForCompletion": True},
        },
    ]
    kept = before["history"][6]["toolCallStates"]
    assert history[6]["toolCallStates"] == [
        s for s in kept if s["toolCall"]["id"] != "call_Wy2cF9hJm4Rp"
    ]
    assert len(history[6]["toolCallStates"]) == len(kept) - 1
    # everything else is as it was
    for i in (4, 6):
        history[i]["toolCallStates"] = before["history"][i]["toolCallStates"]
    assert history == before["history"]


def _plan(fmt: str, data: bytes) -> bytes:
    records = list(registry.get(fmt).read(io.BytesIO(data)))
    found = check_bytes(data, registry.get(fmt), {Check.TOOL_PAIRS}).findings
    planned = plan_fixes(fmt, records, found, {Fix.TOOL_PAIRS})
    edits, _ = merged(Edits(len(records), {}, {}), planned)
    return b"".join(r.raw + r.eol for r in edits.after(records))


def _continue_doc(item: dict[str, Any]) -> bytes:
    user = {"message": {"id": "u", "role": "user", "content": "go"}, "contextItems": []}
    doc = {"sessionId": "s", "title": "t", "workspaceDirectory": "", "history": [user, item]}
    return json.dumps(doc, indent=2).encode()


def test_continue_item_without_states_gets_the_key_after_its_context_items() -> None:
    """An assistant item Continue saved before any state was made (no `toolCallStates` key):
    the key comes after `contextItems`, the states in the order of the calls; arguments that
    are not JSON stay the string (`tryParseJson`)."""
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "grep", "arguments": "{bad"}},
    ]
    message = {"id": "a", "role": "assistant", "content": "", "toolCalls": calls}
    data = _continue_doc({"message": message, "contextItems": []})
    out = _plan("continue", data)
    item = json.loads(out)["history"][1]
    assert list(item) == ["message", "contextItems", "toolCallStates"]
    assert [(s["toolCallId"], s["status"], s["parsedArgs"]) for s in item["toolCallStates"]] == [
        ("c1", "canceled", {}),
        ("c2", "canceled", "{bad"),
    ]
    assert _plan("continue", out) == out


def test_gemini_entry_whose_call_the_content_does_not_make_leaves(tmp_path: Path) -> None:
    """`convertSessionToClientHistory` sends a current message's `content` as its calls and a
    `functionResponse` for every `toolCalls` entry with a result: an entry whose call is not
    in `content` answers nothing and leaves `toolCalls` (kept in the manifest)."""
    header = {"sessionId": "s1", "projectHash": "h", "startTime": "t", "lastUpdated": "t"}

    def entry(call_id: str) -> dict[str, Any]:
        response = {"id": call_id, "name": "read_file", "response": {"output": "x"}}
        return {
            "id": call_id,
            "name": "read_file",
            "args": {"path": call_id},
            "result": [{"functionResponse": response}],
            "status": "success",
        }

    call = {"id": "c1", "name": "read_file", "args": {"path": "c1"}}
    message = {
        "id": "g-1",
        "timestamp": "2026-06-01T09:00:02.000Z",
        "type": "gemini",
        "content": [{"text": "Reading."}, {"functionCall": call}],
        "toolCalls": [entry("c1"), entry("c2")],
        "model": "gemini-2.5-pro",
    }
    path = tmp_path / "chats" / "session-2026-06-01T09-00-1a2b3c4d.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in (header, message)))
    assert _problems(path, "gemini-cli") == [("result-without-call", "c2")]
    lines = [json.loads(x) for x in _fix_and_undo(path, "gemini-cli").splitlines()]
    assert lines[1] == {**message, "toolCalls": [entry("c1")]}
