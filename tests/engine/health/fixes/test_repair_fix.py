"""`thinkfix repair --fix`: the fixes go through repair's write, proof, manifest and undo."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from thinkfix.cli import main
from thinkfix.engine.health.run import check_bytes
from thinkfix.engine.report.checks import Check
from thinkfix.formats import registry

ENV = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": "s1"}
TOKEN = "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ12"


def _line(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, separators=(",", ":")).encode()


def _user(uid: str, parent: str | None, text: str) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        **ENV,
        "version": "2.1.90",
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uid,
        "timestamp": "2026-01-01T00:00:00Z",
    }


def _assistant(uid: str, parent: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        **ENV,
        "version": "2.1.90",
        "message": {
            "id": "msg_" + uid,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": blocks,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
        "requestId": "req_" + uid,
        "type": "assistant",
        "uuid": uid,
        "timestamp": "2026-01-01T00:00:01Z",
    }


CALL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}


def _damaged() -> bytes:
    """A Claude Code session with each problem the lines and tool-pairs fixes repair: a call
    left without a result, NUL padding before a record, two records glued, a cut last line."""
    return (
        _line(_user("u1", None, "list files"))
        + b"\n"
        + _line(_assistant("a1", "u1", [CALL]))
        + b"\n"
        + b"\x00" * 9
        + _line(_user("u2", "a1", "never mind"))
        + b"\n"
        + _line(_user("u3", "u2", "one"))
        + _line(_user("u4", "u3", "two"))
        + b"\n"
        + _line(_user("u5", "u4", "three"))[:30]
    )


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, ["repair", "--include-active", *args], catch_exceptions=False)


def _problems(data: bytes, checks: set[Check]) -> list[str]:
    health = check_bytes(data, registry.get("claude-code"), checks)
    return [str(f.problem) for f in health.findings]


def _manifest(result: Result) -> str:
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("undo with: ")]
    return line.removeprefix("undo with: thinkfix undo ")


def test_repair_fix_lines_and_tool_pairs_leaves_a_session_every_check_passes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_damaged())
    checks = {Check.LINES, Check.TOOL_PAIRS}
    assert sorted(_problems(path.read_bytes(), checks)) == [
        "call-without-result",
        "glued",
        "nul-padding",
        "truncated",
    ]
    result = invoke("--fix", "lines,tool-pairs", "--in-place", str(path))
    assert result.exit_code == 0, result.output
    assert "4 fixes" in result.stderr
    fixed = path.read_bytes()
    assert _problems(fixed, checks) == []
    entries = [json.loads(x) for x in fixed.splitlines() if x.strip()]
    assert [e["uuid"] for e in entries][:2] == ["u1", "a1"]
    assert entries[2]["message"]["content"][0]["tool_use_id"] == "toolu_1"
    assert [e["uuid"] for e in entries][3:] == ["u2", "u3", "u4"]
    assert entries[3]["parentUuid"] == entries[2]["uuid"]
    # a second run finds nothing left to fix
    again = invoke("--fix", "lines,tool-pairs", "--check", str(path))
    assert again.exit_code == 0, again.output


def test_repair_fix_is_undone_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    original = _damaged()
    path.write_bytes(original)
    result = invoke("--fix", "lines,tool-pairs", "--in-place", str(path))
    assert path.read_bytes() != original
    undone = CliRunner().invoke(main, ["undo", _manifest(result)], catch_exceptions=False)
    assert undone.exit_code == 0, undone.output
    assert path.read_bytes() == original


def test_repair_fix_without_backup_is_undone_from_the_manifest(tmp_path: Path) -> None:
    """A cut tail cannot be rebuilt record by record: the manifest keeps the whole file."""
    path = tmp_path / "s1.jsonl"
    original = _damaged()
    path.write_bytes(original)
    result = invoke("--fix", "lines", "--in-place", "--no-backup", str(path))
    manifest = json.loads(Path(_manifest(result)).read_text().split("\n#")[0])
    (entry,) = manifest["files"]
    assert entry["content"]["rebuildable"] is False and "bytes" in entry["before"]
    assert [f["problem"] for f in entry["fixes"]] == ["nul-padding", "glued", "truncated"]
    CliRunner().invoke(main, ["undo", _manifest(result)], catch_exceptions=False)
    assert path.read_bytes() == original


def test_repair_without_fix_changes_none_of_it(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_damaged())
    result = invoke("--in-place", str(path))
    assert result.exit_code == 2  # its unreadable lines are errors, and nothing is fixed
    assert path.read_bytes() == _damaged()
    assert " fix" not in result.stderr


def test_repair_fix_unknown_name_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_damaged())
    result = invoke("--fix", "lines,colour", "--check", str(path))
    assert result.exit_code == 2 and "unknown fix colour" in result.stderr
    assert path.read_bytes() == _damaged()


def test_repair_fix_beside_a_leak_repair_in_one_file(tmp_path: Path) -> None:
    """The leak is repaired and the call answered in the same run, one manifest for both."""
    text = {"type": "text", "text": "<think>plan</think>Listing."}
    path = tmp_path / "s1.jsonl"
    path.write_bytes(
        _line(_user("u1", None, "list"))
        + b"\n"
        + _line(_assistant("a1", "u1", [text, CALL]))
        + b"\n"
        + _line(_user("u2", "a1", "stop"))
        + b"\n"
    )
    result = invoke("--fix", "tool-pairs", "--in-place", str(path))
    assert result.exit_code == 0, result.output
    entries = [json.loads(x) for x in path.read_bytes().splitlines()]
    assert entries[1]["message"]["content"][0]["text"] == "Listing."
    assert entries[2]["message"]["content"][0]["tool_use_id"] == "toolu_1"
    assert entries[3]["parentUuid"] == entries[2]["uuid"]
    manifest = json.loads(Path(_manifest(result)).read_text().split("\n#")[0])
    (entry,) = manifest["files"]
    assert entry["repairs"][0]["extracted"] == ["plan"]
    assert entry["fixes"][0]["fix"] == "tool-pairs"


def test_repair_fix_secrets_masks_the_file_and_the_report(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    original = _line(_user("u1", None, f"deploy with {TOKEN}")) + b"\n"
    path.write_bytes(original)
    report = tmp_path / "r.json"
    result = invoke("--fix", "secrets", "--in-place", "--report", str(report), str(path))
    assert result.exit_code == 0, result.output
    assert TOKEN.encode() not in path.read_bytes()
    assert b"[REDACTED:github-token]" in path.read_bytes()
    doc = json.loads(report.read_text())
    assert [f["fix"] for f in doc["fixes"]] == ["secrets"] and TOKEN not in report.read_text()
    CliRunner().invoke(main, ["undo", _manifest(result)], catch_exceptions=False)
    assert path.read_bytes() == original


def test_repair_fix_signature_drops_the_unsigned_block_and_keeps_its_reasoning(
    tmp_path: Path,
) -> None:
    unsigned = {"type": "thinking", "thinking": "check the folder first"}
    done = {"type": "text", "text": "Done."}
    path = tmp_path / "s1.jsonl"
    path.write_bytes(
        _line(_user("u1", None, "go"))
        + b"\n"
        + _line(_assistant("a1", "u1", [unsigned, done]))
        + b"\n"
    )
    report = tmp_path / "r.json"
    result = invoke(
        "--fix", "signature", "--out", str(tmp_path / "o"), "--report", str(report), str(path)
    )
    assert result.exit_code == 0, result.output
    out = [json.loads(x) for x in (tmp_path / "o" / "s1.jsonl").read_bytes().splitlines()]
    assert out[1]["message"]["content"] == [done]
    (fix,) = json.loads(report.read_text())["fixes"]
    assert fix["problem"] == "missing-signature"
    assert fix["dropped"] == ["check the folder first"]


@pytest.mark.parametrize("fmt", ["codex", "pi"])
def test_repair_fix_tool_pairs_in_codex_and_pi(tmp_path: Path, fmt: str) -> None:
    if fmt == "codex":
        name = "rollout-2026-01-01T00-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
        lines = [
            {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
            {
                "timestamp": "t1",
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": "{}",
                    "call_id": "c1",
                },
            },
        ]
    else:
        name = "2026-01-01T00-00-00-000Z_0199a1b2.jsonl"
        lines = [
            {"type": "session", "version": 3, "id": "s", "timestamp": "t0", "cwd": "/w"},
            {
                "type": "message",
                "id": "a1",
                "parentId": None,
                "timestamp": "t1",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}],
                    "stopReason": "toolUse",
                },
            },
        ]
    path = tmp_path / name
    path.write_bytes(b"".join(_line(x) + b"\n" for x in lines))
    result = invoke("--fix", "tool-pairs", "--format", fmt, "--in-place", str(path))
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    records = list(registry.get(fmt).read(io.BytesIO(data)))
    assert len(records) == 3
    health = check_bytes(data, registry.get(fmt), {Check.TOOL_PAIRS})
    assert health.findings == ()


def test_claude_code_log_reads_codex_aborted_output_as_the_calls_result(tmp_path: Path) -> None:
    """A reader that is not ours (claude-code-log's Codex provider) pairs the call with the
    output the fix wrote, as it pairs Codex's own."""
    codex = pytest.importorskip("claude_code_log.providers.codex")
    name = "rollout-2026-01-01T00-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    meta = {"id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "cwd": "/w", "cli_version": "0.50.0"}
    call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "call_1"}
    lines = [
        {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": meta},
        {"timestamp": "2026-01-01T00:00:02.000Z", "type": "response_item", "payload": call},
        {
            "timestamp": "2026-01-01T00:00:03.000Z",
            "type": "event_msg",
            "payload": {"type": "turn_aborted"},
        },
    ]
    path = tmp_path / name
    path.write_bytes(b"".join(_line(x) + b"\n" for x in lines))

    def results() -> list[str]:
        entries = codex.CodexProvider().load_session_from_path(path)
        return [
            item.tool_use_id
            for e in entries
            for item in (getattr(e.message, "content", None) or [])
            if getattr(item, "type", None) == "tool_result"
        ]

    assert results() == []
    assert invoke("--fix", "tool-pairs", "--in-place", str(path)).exit_code == 0
    assert results() == ["call_1"]


def test_repair_fix_tool_pairs_in_opencode_sets_the_running_part_to_its_aborted_error(
    tmp_path: Path,
) -> None:
    """OpenCode's file store: the part is rewritten in place as OpenCode's own cleanup does."""
    storage = tmp_path / "storage"
    message = storage / "message" / "ses_1" / "msg_2.json"
    part = storage / "part" / "msg_2" / "prt_3.json"
    message.parent.mkdir(parents=True)
    part.parent.mkdir(parents=True)
    message.write_text(
        json.dumps(
            {"id": "msg_2", "role": "assistant", "sessionID": "ses_1", "time": {"created": 1}},
            indent=2,
        )
    )
    state = {"status": "running", "input": {"command": "ls"}, "time": {"start": 1775700002000}}
    tool = {
        "id": "prt_3",
        "sessionID": "ses_1",
        "messageID": "msg_2",
        "type": "tool",
        "callID": "call_9",
        "tool": "bash",
        "state": state,
    }
    part.write_text(json.dumps(tool, indent=2))
    result = invoke("--fix", "tool-pairs", "--in-place", str(storage))
    assert result.exit_code == 0, result.output
    fixed = json.loads(part.read_text())
    assert fixed["state"] == {
        "status": "error",
        "input": {"command": "ls"},
        "time": {"start": 1775700002000, "end": 1775700002000},
        "error": "Tool execution aborted",
    }
    assert list(fixed["state"]) == ["status", "input", "time", "error"]
    assert {k: v for k, v in fixed.items() if k != "state"} == {
        k: v for k, v in tool.items() if k != "state"
    }


def test_diff_fix_reports_the_fixes_and_exits_1(tmp_path: Path) -> None:
    """`thinkfix diff --fix` is the auditor's preview: the fixes listed, nothing written."""
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_damaged())
    result = CliRunner().invoke(
        main,
        ["diff", "--fix", "lines", "--output-format", "json", str(path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert [f["problem"] for f in doc["fixes"]] == ["nul-padding", "glued", "truncated"]
    assert path.read_bytes() == _damaged()


def test_claude_code_log_reads_every_record_the_lines_fix_salvaged(tmp_path: Path) -> None:
    """A reader that is not ours (claude-code-log) skips the damaged lines before the fix and
    reads every record after it, the interrupted result included."""
    converter = pytest.importorskip("claude_code_log.converter")
    path = tmp_path / "s1.jsonl"
    path.write_bytes(_damaged())

    def uuids() -> list[str]:
        return [e.uuid for e in converter.load_transcript(path, silent=True)]

    assert uuids() == ["u1", "a1"]
    assert invoke("--fix", "lines,tool-pairs", "--in-place", str(path)).exit_code == 0
    got = uuids()
    assert got[:2] == ["u1", "a1"] and got[3:] == ["u2", "u3", "u4"] and len(got) == 6
