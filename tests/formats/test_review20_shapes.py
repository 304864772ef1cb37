"""Review 20: log entries and records of shapes the newer runtimes never write, holding a
leak, are an error for their line (exit 2), never counted clean.

Each case is built from the runtime's own fixture, one entry changed the way no runtime
writes it; the scan must exit 2 and name the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.formats import support, zed_db
from thinkfix.cli import main
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan

LEAK = "<think>plan the answer</think>The answer."


def _dump(records: list[Any]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


def _errors(
    path: Path, text: str, fmt: str, options: ScanOptions = ScanOptions()
) -> tuple[int, list[tuple[int | None, str]]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    report = scan([str(path)], options, jobs=1)
    assert set(report.summary.by_format) <= {fmt}
    return int(report.exit_code()), [(e.line, e.message) for e in report.errors]


def _assert_error(path: Path, text: str, fmt: str, line: int) -> None:
    code, errors = _errors(path, text, fmt)
    assert code == ExitCode.ERROR, (code, errors)
    assert any(at == line and "unknown shape" in message for at, message in errors), errors


# --- Copilot Chat: VS Code's ObjectMutationLog (objectMutationLog.ts, chatSessionOperationLog.ts)


def _copilot_log() -> list[Any]:
    """The fixture's log with its leaks taken out, and 200 lines of input text after its first
    request, so what follows is past the lines detection weighs."""
    path = next((support.FIXTURES / "copilot-chat" / "emptyWindowChatSessions").glob("*.jsonl"))
    text = path.read_text(encoding="utf-8")
    for tag in ("think", "thinking"):
        text = text.replace(f"<{tag}>", "").replace(f"<\\/{tag}>", "").replace(f"</{tag}>", "")
    entries = [json.loads(line) for line in text.splitlines()]
    filler = {"kind": 1, "k": ["inputState", "inputText"], "v": "typing"}
    return entries[:3] + [filler] * 200 + entries[3:]


_PART = {"value": LEAK, "supportThemeIcons": False, "supportHtml": False}
_REQUEST = {"requestId": "r9", "message": {"text": "hi", "parts": []}, "response": []}


def test_copilot_chat_log_without_the_planted_entry_is_clean(tmp_path: Path) -> None:
    code, errors = _errors(
        tmp_path / "chatSessions" / "s.jsonl", _dump(_copilot_log()), "copilot-chat"
    )
    assert (code, errors) == (ExitCode.CLEAN, [])


@pytest.mark.parametrize(
    "entry",
    [
        # a kind VS Code's reader does not know: `switch (entry.kind)` compares strictly
        {"kind": "2", "k": ["requests", 0, "response"], "v": [_PART]},
        {"kind": True, "k": ["requests", 0, "response"], "v": [_PART]},
        {"kind": 4, "k": ["requests", 0, "response"], "v": [_PART]},
        # a response is pushed or set as a list (`Adapt.array(responsePartSchema)`)
        {"kind": 2, "k": ["requests", 0, "response"], "v": _PART},
        {"kind": 1, "k": ["requests", 0, "response"], "v": LEAK},
        # response parts are values: a changed part is pushed with `i`, never set alone
        {"kind": 1, "k": ["requests", 0, "response", 0], "v": _PART},
        {"kind": 1, "k": ["requests", 0, "response", 0, "value"], "v": LEAK},
        # requests are pushed as requests (`requestSchema`: requestId, message, response)
        {"kind": 2, "k": ["requests"], "v": [{"requestId": "r9", "response": [_PART]}]},
        {"kind": 2, "k": ["requests"], "v": {"requestId": "r9", "response": [_PART]}},
        {"kind": 1, "k": ["requests", 0], "v": {"requestId": "r9", "response": [_PART]}},
        # a request's response is a list of parts
        {"kind": 2, "k": ["requests"], "v": [{**_REQUEST, "response": json.dumps([_PART])}]},
        {"kind": 2, "k": ["requests"], "v": [{**_REQUEST, "response": {"0": _PART}}]},
        {"kind": 1, "k": ["requests", 1], "v": {**_REQUEST, "response": {"0": _PART}}},
    ],
    ids=[
        "string-kind",
        "boolean-kind",
        "unknown-kind",
        "pushed-object",
        "set-string",
        "set-one-part",
        "set-one-value",
        "request-without-message",
        "pushed-request-object",
        "set-request-without-message",
        "pushed-request-string-response",
        "pushed-request-object-response",
        "set-request-object-response",
    ],
)
def test_copilot_chat_log_entry_of_a_shape_vscode_never_writes_is_an_error(
    tmp_path: Path, entry: dict[str, Any]
) -> None:
    log = _copilot_log()
    at = len(log) - 2  # before the last request, after the first one's result
    log.insert(at, entry)
    _assert_error(tmp_path / "chatSessions" / "s.jsonl", _dump(log), "copilot-chat", at + 1)


# --- Kimi CLI wire.jsonl: kimi_cli/wire/file.py WireMessageRecord, kosong ContentPart -------


def _wire(*tail: Any) -> str:
    """The fixture's wire log with its leaks taken out, then a step holding `tail`."""
    path = next((support.FIXTURES / "kimi-wire").rglob("wire.jsonl"))
    text = path.read_text(encoding="utf-8")
    for tag in ("think", "thinking"):
        text = text.replace(f"<{tag}>", "").replace(f"</{tag}>", "")
    lines = [json.loads(line) for line in text.splitlines()]
    stamp = lines[-1]["timestamp"] + 1

    def record(kind: str, payload: Any) -> dict[str, Any]:
        return {"timestamp": stamp, "message": {"type": kind, "payload": payload}}

    step = [record("StepBegin", {"n": 1}), *tail, record("TurnEnd", {})]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [*lines, *step])


_WIRE_PATH = Path(".kimi") / "sessions" / "0923ed9e" / "0f8e2d4c" / "wire.jsonl"


def _part(payload: Any) -> dict[str, Any]:
    return {"timestamp": 1.0, "message": {"type": "ContentPart", "payload": payload}}


def test_kimi_wire_log_without_the_planted_record_is_clean(tmp_path: Path) -> None:
    assert _errors(tmp_path / _WIRE_PATH, _wire(), "kimi-wire") == (ExitCode.CLEAN, [])
    code, _ = _errors(
        tmp_path / _WIRE_PATH, _wire(_part({"type": "text", "text": LEAK})), "kimi-wire"
    )
    assert code == ExitCode.FINDINGS


@pytest.mark.parametrize(
    "record",
    [
        # kosong's TextPart.text is a string; its ContentPart is told apart by a string `type`
        _part({"type": "text", "text": [LEAK]}),
        _part({"type": "text", "text": {"text": LEAK}}),
        _part({"text": LEAK}),
        _part({"type": 1, "text": LEAK}),
        _part(LEAK),
        _part([{"type": "text", "text": LEAK}]),
        # a WireMessageRecord's message is {type: <class name>, payload}
        {"timestamp": 1.0, "message": LEAK},
        {"timestamp": 1.0, "message": {"type": 5, "payload": {"type": "text", "text": LEAK}}},
        {"timestamp": 1.0, "message": {"payload": {"type": "text", "text": LEAK}}},
    ],
    ids=[
        "text-list",
        "text-object",
        "untyped-part",
        "number-type",
        "string-payload",
        "list-payload",
        "string-message",
        "number-message-type",
        "untyped-message",
    ],
)
def test_kimi_wire_record_of_a_shape_kimi_never_writes_is_an_error(
    tmp_path: Path, record: dict[str, Any]
) -> None:
    text = _wire(record)
    line = len(text.splitlines()) - 1
    _assert_error(tmp_path / _WIRE_PATH, text, "kimi-wire", line)


def test_copilot_chat_flat_session_request_of_an_object_response_is_an_error(
    tmp_path: Path,
) -> None:
    path = next((support.FIXTURES / "copilot-chat" / "chatSessions").glob("*.json"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["requests"].append({**_REQUEST, "response": {"0": _PART}})
    _assert_error(tmp_path / "chatSessions" / "s.json", json.dumps(doc), "copilot-chat", 1)


# --- Copilot CLI's legacy history: chatMessages are OpenAI chat messages ------------------


@pytest.mark.parametrize(
    "message",
    [
        json.dumps({"role": "assistant", "content": LEAK}),
        {"content": LEAK},
        [{"role": "assistant", "content": LEAK}],
    ],
    ids=["string", "untyped", "list"],
)
def test_copilot_cli_legacy_message_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, message: Any
) -> None:
    path = next((support.FIXTURES / "copilot-cli" / "history-session-state").glob("*.json"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    for m in doc["chatMessages"]:
        if isinstance(m.get("content"), str):
            m["content"] = m["content"].replace("<think>", "").replace("</think>", "")
    doc["timeline"] = []
    doc["chatMessages"].append(message)
    out = tmp_path / ".copilot" / "history-session-state" / path.name
    _assert_error(out, json.dumps(doc, indent=2), "copilot-cli", 1)


# --- Factory Droid: {type: "message", message: {role, content: [blocks]}} ------------------


@pytest.mark.parametrize(
    "message",
    [
        json.dumps({"role": "assistant", "content": [{"type": "text", "text": LEAK}]}),
        {"content": [{"type": "text", "text": LEAK}]},
        [{"role": "assistant", "content": [{"type": "text", "text": LEAK}]}],
    ],
    ids=["string", "untyped", "list"],
)
def test_factory_droid_message_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, message: Any
) -> None:
    path = next((support.FIXTURES / "factory-droid").rglob("*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines()
    record = {**json.loads(lines[2]), "message": message}
    text = "\n".join([*lines, json.dumps(record)]) + "\n"
    out = tmp_path / ".factory" / "sessions" / "-home-dev" / path.name
    # a line without the quoted role word is parsed under --parse-all only (a default scan
    # checks no line it need not parse: reliability.md, review9)
    code, errors = _errors(out, text, "factory-droid", ScanOptions(prefilter=False))
    assert code == ExitCode.ERROR, (code, errors)
    assert any(at == len(lines) + 1 and "unknown shape" in m for at, m in errors), errors


# --- Zed: agent 0's threads (`LegacySerializedThread`, no version, `{id, role, text}`) ------


def _zed_agent0(answer: Any) -> dict[str, Any]:
    """A thread as the first agent wrote it, which `SerializedThread::from_json` (crates/agent/
    src/legacy_thread.rs) still reads: no version, messages `LegacySerializedMessage`, each
    upgraded to one text segment."""
    user = {"id": 0, "role": "user", "text": "hi", "tool_uses": [], "tool_results": []}
    answer = {"id": 1, "role": "assistant", "text": answer, "tool_uses": [], "tool_results": []}
    return {"summary": "t", "updated_at": "2025-05-01T10:00:00Z", "messages": [user, answer]}


def test_zed_agent0_thread_is_read_and_its_repair_refused_with_the_reason(tmp_path: Path) -> None:
    """Through the CLI: the leak is a finding (exit 1), the repair writes nothing and says
    why, and the store's bytes stay as they were."""
    store = zed_db.build(tmp_path / "threads.db", [("t1", {**_zed_agent0(LEAK), "title": "t"})])
    scanned = CliRunner().invoke(
        main, ["scan", "--isolated", "--output-format", "json", str(store)]
    )
    assert scanned.exit_code == ExitCode.FINDINGS, scanned.output
    found = json.loads(scanned.stdout)
    assert ([f["json_path"] for f in found["findings"]], found["errors"]) == (
        ["thread.messages[1].text"],
        [],
    )
    before = store.read_bytes()
    run_dir = str(tmp_path / "run")
    argv = ["repair", "--isolated", "--in-place", "--include-active", "--run-dir", run_dir]
    repaired = CliRunner().invoke(main, [*argv, str(store)])
    assert "legacy agent-1 thread" in repaired.output, repaired.output
    assert store.read_bytes() == before


def test_zed_agent0_text_of_an_unexpected_shape_is_an_error(tmp_path: Path) -> None:
    store = zed_db.build(tmp_path / "threads.db", [("t1", {**_zed_agent0([LEAK]), "title": "t"})])
    report = scan([str(store)], jobs=1)
    assert int(report.exit_code()) == ExitCode.ERROR, report.errors
    assert "messages[1].text" in report.errors[0].message
