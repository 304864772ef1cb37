"""A leak inside a text field of a shape the runtime never writes is an error, never clean.

Review 9: each reader skipped what it did not expect where an assistant's visible text lives
(an object where the runtime writes a string or a list of parts, a part that is no object or
has no `type`, a text that is a list), so a file whose only leak sat in such a field was
scanned as 0 findings, 0 errors, exit 0. Every case here holds a leak in such a field, written
beside the runtime's own records field for field; the scan must exit 2 and name the line.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.engine.repair_helpers import run
from tests.formats import crush_db, cursor_db, goose_db, opencode_db, support, zed_db
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.repairs import Repair

LEAK = "<think>plan the answer</think>The answer."


def _lines(*records: Any) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _scan(path: Path, text: str, fmt: str) -> tuple[int, list[tuple[int | None, str]]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    report = scan([str(path)], jobs=1)
    assert {f for f in report.summary.by_format} <= {fmt}
    return int(report.exit_code()), [(e.line, e.message) for e in report.errors]


def _assert_error(path: Path, text: str, fmt: str, line: int | None) -> None:
    code, errors = _scan(path, text, fmt)
    assert code == ExitCode.ERROR, (code, errors)
    assert any(at == line and "unknown shape" in message for at, message in errors), errors


# --- Kimi CLI: kosong's Message.content is a string or a list of typed parts -------------

_KIMI_HEAD = (
    {"role": "_system_prompt", "content": "You are Kimi"},
    {"role": "user", "content": "hi"},
)


@pytest.mark.parametrize(
    "content",
    [
        {"type": "text", "text": LEAK},
        [LEAK],
        [{"text": LEAK}],
        [{"type": "text", "text": [LEAK]}],
        [{"type": ["text"], "text": LEAK}],
    ],
    ids=["object", "string part", "untyped part", "list text", "list type"],
)
def test_kimi_cli_text_of_an_unexpected_shape_is_an_error(tmp_path: Path, content: Any) -> None:
    path = tmp_path / ".kimi" / "sessions" / "a" / "b" / "context.jsonl"
    text = _lines(*_KIMI_HEAD, {"role": "assistant", "content": content})
    _assert_error(path, text, "kimi-cli", 3)


# --- Qwen Code: a Gemini `Content`'s parts are objects, a part's `text` a string ---------


def _qwen(parts: Any) -> str:
    envelope = {"sessionId": "s1", "cwd": "/w", "version": "0.0.14", "gitBranch": "main"}
    user = {"uuid": "u1", "parentUuid": None, **envelope, "type": "user"}
    user["message"] = {"role": "user", "parts": [{"text": "hi"}]}
    answer = {"uuid": "u2", "parentUuid": "u1", **envelope, "type": "assistant"}
    answer |= {"model": "qwen3-coder-plus", "message": {"role": "model", "parts": parts}}
    return _lines(user, answer)


@pytest.mark.parametrize(
    "parts",
    [[{"text": [LEAK]}], [{"text": {"text": LEAK}}], [7, {"text": LEAK}]],
    ids=["list text", "object text", "number part"],
)
def test_qwen_code_text_of_an_unexpected_shape_is_an_error(tmp_path: Path, parts: Any) -> None:
    path = tmp_path / ".qwen" / "projects" / "-w" / "chats" / "s1.jsonl"
    _assert_error(path, _qwen(parts), "qwen-code", 2)


def test_qwen_code_string_part_is_read_and_repaired(tmp_path: Path) -> None:
    """A bare string part is text Qwen Code replays as the turn's content
    (`processContent` in core/openaiContentGenerator/converter.ts): its leak is found, and
    the reasoning goes into a `{text, thought: true}` part before it."""
    path = tmp_path / ".qwen" / "projects" / "-w" / "chats" / "s1.jsonl"
    code, errors = _scan(path, _qwen(["Checking.", LEAK]), "qwen-code")
    assert (code, errors) == (ExitCode.FINDINGS, [])
    fmt = registry.get("qwen-code")
    records = support.read(fmt, path.read_bytes(), path)
    site = next(s for r in records for s in fmt.sites(r) if "<think>" in s.text)
    assert site.json_path == "message.parts[1]"
    after, placements = fmt.apply(records, [Repair(site, "The answer.", ("plan the answer",))])
    parts = json.loads(support.write(fmt, after).splitlines()[1])["message"]["parts"]
    assert parts == ["Checking.", {"text": "plan the answer", "thought": True}, "The answer."]
    assert placements[0].applied


# --- Copilot CLI: `assistant.message`'s `data.content` is a string (copilot-sdk) --------


def _copilot_event(kind: str, data: Any, n: int) -> dict[str, Any]:
    at = f"2026-03-18T14:02:{n:02}.000Z"
    return {"type": kind, "data": data, "id": f"e{n}", "timestamp": at, "parentId": f"e{n - 1}"}


def _copilot_log(answer: Any) -> tuple[Path, str]:
    """An events.jsonl path and a log whose third event is `assistant.message` with `answer`."""
    start = {"sessionId": "s1", "version": 1, "producer": "copilot-agent", "startTime": "t"}
    text = _lines(
        _copilot_event("session.start", start, 1),
        _copilot_event("user.message", {"content": "hi", "attachments": []}, 2),
        _copilot_event("assistant.message", answer, 3),
    )
    return Path(".copilot") / "session-state" / "s1" / "events.jsonl", text


@pytest.mark.parametrize(
    "content",
    [[LEAK], {"text": LEAK}, [{"type": "text", "text": LEAK}]],
    ids=["list", "object", "parts"],
)
def test_copilot_cli_event_content_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, content: Any
) -> None:
    answer = {"messageId": "m1", "content": content, "toolRequests": [], "reasoningText": None}
    path, text = _copilot_log(answer)
    _assert_error(tmp_path / path, text, "copilot-cli", 3)


def test_copilot_cli_legacy_content_of_an_unexpected_shape_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / ".copilot" / "history-session-state" / "session_s1_1759957816398.json"
    doc = {
        "sessionId": "s1",
        "startTime": "2025-10-08T21:10:16.398Z",
        "chatMessages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": LEAK}]},
        ],
        "timeline": [],
    }
    _assert_error(path, json.dumps(doc, indent=2), "copilot-cli", 1)


# --- Factory Droid (and every reader of Anthropic-style block lists: common.block_slots) -


@pytest.mark.parametrize(
    "content",
    [
        [LEAK],
        [{"text": LEAK}],
        [{"type": "text", "text": [LEAK]}],
        {"type": "text", "text": LEAK},
    ],
    ids=["string block", "untyped block", "list text", "object content"],
)
def test_factory_droid_text_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, content: Any
) -> None:
    path = tmp_path / ".factory" / "sessions" / "-w" / "s1.jsonl"
    text = _lines(
        {"type": "session_start", "id": "s1", "title": "t", "owner": "dev", "version": 2},
        {
            "type": "message",
            "id": "m1",
            "timestamp": "2026-02-11T10:30:02.114Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        },
        {
            "type": "message",
            "id": "m2",
            "timestamp": "2026-02-11T10:30:09.877Z",
            "message": {"role": "assistant", "content": content},
            "parentId": "m1",
        },
    )
    _assert_error(path, text, "factory-droid", 3)


# --- Goose: `MessageContent` items are serde-tagged objects; a text item's text a string --

_GOOSE_ITEMS = [
    [LEAK],
    [{"text": LEAK}],
    [{"type": "text", "text": [LEAK]}],
    [{"type": "thinking", "thinking": {"t": LEAK}, "signature": ""}, {"type": "text", "text": "A"}],
]
_GOOSE_IDS = ["string item", "untyped item", "list text", "object thinking"]


@pytest.mark.parametrize("content", _GOOSE_ITEMS, ids=_GOOSE_IDS)
def test_goose_jsonl_item_of_an_unexpected_shape_is_an_error(tmp_path: Path, content: Any) -> None:
    path = tmp_path / ".local" / "share" / "goose" / "sessions" / "20250310_091530.jsonl"
    meta = {"working_dir": "/w", "description": "d", "message_count": 2, "total_tokens": 10}
    user = {"role": "user", "created": 1741597000, "content": [{"type": "text", "text": "hi"}]}
    answer = {"role": "assistant", "created": 1741597010, "content": content}
    answer["metadata"] = goose_db.VISIBLE
    _assert_error(path, _lines(meta, user, answer), "goose", 3)


@pytest.mark.parametrize(
    "content", [*_GOOSE_ITEMS, {"type": "text", "text": LEAK}], ids=[*_GOOSE_IDS, "object"]
)
def test_goose_store_item_of_an_unexpected_shape_is_an_error(tmp_path: Path, content: Any) -> None:
    session = (
        "20260409_1",
        "ollama",
        "qwen3:32b",
        [("user", [goose_db.text("hi")]), ("assistant", content)],
    )
    store = goose_db.build(tmp_path / "sessions.db", [session])
    report = scan([str(store)], jobs=1)
    assert int(report.exit_code()) == ExitCode.ERROR, report.errors
    assert [e.line for e in report.errors] == [2], report.errors


# --- a document of many messages: one of an unexpected shape beside messages that read ---


def test_claw_code_document_message_of_an_unexpected_shape_is_an_error(tmp_path: Path) -> None:
    """claw-code's legacy `.json` (`Session` with `messages: [{role, blocks}]`, keys sorted):
    a message whose blocks are an object was skipped while the others read."""
    doc = {
        "messages": [
            {"blocks": [{"text": "list the crates", "type": "text"}], "role": "user"},
            {"blocks": {"text": LEAK, "type": "text"}, "role": "assistant"},
            {"blocks": [{"text": "Four crates.", "type": "text"}], "role": "assistant"},
        ],
        "version": 1,
    }
    path = tmp_path / ".claw" / "sessions" / "session-1775123456789.json"
    _assert_error(path, json.dumps(doc, separators=(",", ":"), sort_keys=True), "claw-code", 1)


def test_cline_history_message_of_an_unexpected_shape_is_an_error(tmp_path: Path) -> None:
    """Cline's `api_conversation_history.json`: an assistant entry whose content is an object
    beside entries that read."""
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nhi\n</task>"}], "ts": 1},
        {"role": "assistant", "content": {"type": "text", "text": LEAK}, "ts": 2},
        {"role": "user", "content": [{"type": "text", "text": "and?"}], "ts": 3},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "ts": 4},
    ]
    path = tmp_path / "tasks" / "1775400000100" / "api_conversation_history.json"
    _assert_error(path, json.dumps(history, separators=(",", ":")), "cline", 1)


# --- Gemini CLI: a message's content is a PartListUnion (string, Part, or list of both) ---


def _gemini_chat(content: Any) -> str:
    doc = {
        "sessionId": "s1",
        "projectHash": "ab12",
        "startTime": "2026-02-03T10:15:00.000Z",
        "lastUpdated": "2026-02-03T10:16:00.000Z",
        "messages": [
            {"id": "m1", "timestamp": "2026-02-03T10:15:01.000Z", "type": "user", "content": "hi"},
            {
                "id": "m2",
                "timestamp": "2026-02-03T10:15:09.000Z",
                "type": "gemini",
                "content": content,
                "thoughts": [],
                "model": "gemini-2.5-pro",
            },
        ],
    }
    return json.dumps(doc, indent=2)


@pytest.mark.parametrize(
    "content",
    [{"text": LEAK}, [LEAK], [{"text": "Checking."}, LEAK]],
    ids=["part", "string", "mixed"],
)
def test_gemini_cli_part_list_union_content_is_read_and_repaired(
    tmp_path: Path, content: Any
) -> None:
    """A `Part` or a string item is text Gemini CLI shows: its leak is found, and the repair
    moves the reasoning into the message's `thoughts` (display only) as for a string."""
    path = tmp_path / ".gemini" / "tmp" / "ab12" / "chats" / "session-2026-02-03T10-15-s1.json"
    code, errors = _scan(path, _gemini_chat(content), "gemini-cli")
    assert (code, errors) == (ExitCode.FINDINGS, [])
    fmt = registry.get("gemini-cli")
    records = support.read(fmt, path.read_bytes(), path)
    site = next(s for r in records for s in fmt.sites(r) if "<think>" in s.text)
    after, placements = fmt.apply(records, [Repair(site, "The answer.", ("plan the answer",))])
    doc = json.loads(support.write(fmt, after))
    message = doc["messages"][1]
    assert [t["description"] for t in message["thoughts"]] == ["plan the answer"]
    assert "<think>" not in json.dumps(message["content"])
    assert placements[0].applied


@pytest.mark.parametrize(
    "content",
    [[[LEAK]], [{"text": [LEAK]}], {"text": {"t": LEAK}}],
    ids=["list", "list text", "part"],
)
def test_gemini_cli_content_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, content: Any
) -> None:
    path = tmp_path / ".gemini" / "tmp" / "ab12" / "chats" / "session-2026-02-03T10-15-s1.json"
    _assert_error(path, _gemini_chat(content), "gemini-cli", 1)


# --- Copilot Chat (VS Code): response parts as chatSessionOperationLog.ts stores them ------


def _copilot_chat(response: list[Any]) -> str:
    flat = json.loads(
        (support.FIXTURES / "copilot-chat" / "chatSessions").glob("*.json").__next__().read_text()
    )
    request = flat["requests"][1]
    request["response"] = response
    request["result"] = {"metadata": {"toolCallRounds": []}}
    flat["requests"] = [request]
    return json.dumps(flat, separators=(",", ":"))


def _markdown(text: Any) -> dict[str, Any]:
    return {"value": text, "supportThemeIcons": False, "supportHtml": False}


def test_copilot_chat_markdown_vuln_part_is_read_and_repaired(tmp_path: Path) -> None:
    """`markdownVuln` (`IChatAgentMarkdownContentWithVulnerability`) is model text VS Code
    shows and stores as is: its leak is found, and the reasoning goes into a `thinking`
    part before it, as for a markdown part."""
    vuln = {"kind": "markdownVuln", "content": _markdown(LEAK), "vulnerabilities": []}
    path = tmp_path / "User" / "workspaceStorage" / "w1" / "chatSessions" / "s1.json"
    code, errors = _scan(path, _copilot_chat([vuln]), "copilot-chat")
    assert (code, errors) == (ExitCode.FINDINGS, [])
    fmt = registry.get("copilot-chat")
    records = support.read(fmt, path.read_bytes(), path)
    site = next(s for r in records for s in fmt.sites(r))
    assert site.json_path == "requests[0].response[0].content.value"
    after, placements = fmt.apply(records, [Repair(site, "The answer.", ("plan the answer",))])
    parts = json.loads(support.write(fmt, after))["requests"][0]["response"]
    assert parts[0] == {"kind": "thinking", "value": "plan the answer"}
    assert parts[1]["content"]["value"] == "The answer."
    assert placements[0].applied


@pytest.mark.parametrize(
    "response",
    [
        [_markdown("Checking."), LEAK],
        [_markdown([LEAK])],
        [_markdown("Checking."), {"kind": "markdownVuln", "content": LEAK}],
    ],
    ids=["string part", "list value", "vuln string content"],
)
def test_copilot_chat_part_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, response: list[Any]
) -> None:
    path = tmp_path / "User" / "workspaceStorage" / "w1" / "chatSessions" / "s1.json"
    _assert_error(path, _copilot_chat(response), "copilot-chat", 1)


# --- Crush: parts as `unmarshalParts` (internal/message/message.go) reads them back ------


@pytest.mark.parametrize(
    "parts",
    [
        [LEAK],
        [{"data": {"text": LEAK}}],
        [{"type": "text", "data": LEAK}],
        [{"type": "text", "data": {"text": [LEAK]}}],
        [{"type": "markdown", "data": {"text": LEAK}}],
        {"type": "text", "data": {"text": LEAK}},
    ],
    ids=["string part", "untyped part", "string data", "list text", "unknown type", "object"],
)
def test_crush_part_of_an_unexpected_shape_is_an_error(tmp_path: Path, parts: Any) -> None:
    store = tmp_path / "shop" / ".crush" / "crush.db"
    store.parent.mkdir(parents=True)
    messages = [("m1", "user", [crush_db.text("hi")]), ("m2", "assistant", parts)]
    crush_db.build(store, messages, "s1")
    report = scan([str(store)], jobs=1)
    assert int(report.exit_code()) == ExitCode.ERROR, report.errors
    assert [e.line for e in report.errors] == [2], report.errors


# --- Zed: a thread's messages are serde's externally tagged `Message` ---------------------

_LEGACY = {  # agent 1's SerializedMessage, which DbThread::from_json still upgrades
    "id": 1,
    "role": "assistant",
    "segments": [{"type": "text", "text": LEAK}],
    "tool_uses": [],
    "tool_results": [],
    "context": "",
    "creases": [],
    "is_hidden": False,
}


@pytest.mark.parametrize(
    "message",
    [
        zed_db.agent({"Text": [LEAK]}),
        zed_db.agent(LEAK),
        {"Agent": {"content": {"Text": LEAK}, "tool_results": {}}},
        {**_LEGACY, "segments": [{"type": "text", "text": [LEAK]}]},
        {"role": "assistant", "content": LEAK},
    ],
    ids=["list text", "string item", "object content", "legacy list text", "role message"],
)
def test_zed_message_of_an_unexpected_shape_is_an_error(tmp_path: Path, message: Any) -> None:
    """Beside a message that reads (so the thread is not empty of messages)."""
    doc = zed_db.thread("t", [zed_db.user("hi"), zed_db.agent({"Text": "Hello."}), message])
    store = zed_db.build(tmp_path / "threads.db", [("t1", doc)])
    report = scan([str(store)], jobs=1)
    assert int(report.exit_code()) == ExitCode.ERROR, report.errors
    assert [e.line for e in report.errors] == [1], report.errors


# --- Cursor: an assistant bubble's `text` is the string the chat shows --------------------


@pytest.mark.parametrize("text", [[LEAK], {"text": LEAK}], ids=["list", "object"])
def test_cursor_bubble_text_of_an_unexpected_shape_is_an_error(tmp_path: Path, text: Any) -> None:
    bubbles = [cursor_db.user("b1", "hi"), cursor_db.assistant("b2", "x")]
    bubbles[1]["text"] = text
    store = cursor_db.build(tmp_path / "state.vscdb", {"c1": bubbles})
    report = scan([str(store)], jobs=1)
    assert int(report.exit_code()) == ExitCode.ERROR, report.errors
    assert any("unknown shape" in e.message for e in report.errors), report.errors


# --- OpenCode (and Kilo): a message row and its part rows as OpenCode stores them --------


def _opencode(tmp_path: Path, part: Any, *, message_data: str | None = None) -> Path:
    store = tmp_path / "opencode.db"
    messages: list[opencode_db.Message] = [
        ("msg_01", "user", {}, [("prt_01", {"type": "text", "text": "hi"})]),
        ("msg_02", "assistant", {"modelID": "MiniMax-M2"}, [("prt_02", {"type": "text"})]),
    ]
    opencode_db.build(store, messages)
    with closing(sqlite3.connect(store)) as db:
        raw = part if isinstance(part, str) else json.dumps(part)
        db.execute("UPDATE part SET data = ? WHERE id = 'prt_02'", (raw,))
        if message_data is not None:
            db.execute("UPDATE message SET data = ? WHERE id = 'msg_02'", (message_data,))
        db.commit()
    return store


@pytest.mark.parametrize(
    ("part", "message_data"),
    [
        ({"type": "text", "text": [LEAK]}, None),
        ({"text": LEAK}, None),
        ('{"type":"text","text":"' + LEAK, None),  # a row cut short: not JSON
        ({"type": "text", "text": LEAK}, '{"role":"assistant",'),
    ],
    ids=["list text", "untyped part", "part not JSON", "message not JSON"],
)
def test_opencode_store_row_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, part: Any, message_data: str | None
) -> None:
    store = _opencode(tmp_path, part, message_data=message_data)
    report = scan([str(store)], jobs=1)
    assert int(report.exit_code()) == ExitCode.ERROR, report.errors
    assert [e.line for e in report.errors] == [2], report.errors


# --- Continue: a session's history is ChatHistoryItems -----------------------------------


def _continue(entry: Any) -> str:
    def item(role: str, content: Any) -> dict[str, Any]:
        return {"message": {"id": role, "role": role, "content": content}, "contextItems": []}

    doc = {
        "sessionId": "s1",
        "title": "t",
        "workspaceDirectory": "file:///w",
        # past the 200 entries detection weighs, so the file is Continue's
        "history": [item("user", "hi"), item("assistant", "Hello.")] * 100 + [entry],
    }
    return json.dumps(doc, indent=2)


@pytest.mark.parametrize(
    "entry",
    [
        {"message": {"role": "assistant", "content": LEAK}},
        {"message": {"role": "assistant", "text": LEAK}, "contextItems": []},
        {
            "message": {"role": "assistant", "content": {"type": "text", "text": LEAK}},
            "contextItems": [],
        },
        {"message": {"role": "assistant", "content": [{"text": LEAK}]}, "contextItems": []},
    ],
    ids=["no contextItems", "no content", "object content", "untyped part"],
)
def test_continue_history_entry_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, entry: Any
) -> None:
    path = tmp_path / ".continue" / "sessions" / "s1.json"
    _assert_error(path, _continue(entry), "continue", 1)


# --- a record that names itself a message, of a shape the runtime never writes -----------


@pytest.mark.parametrize(
    "data",
    [LEAK, [{"content": LEAK}], {"messageId": "m1", "text": LEAK}],
    ids=["string data", "list data", "no content"],
)
def test_copilot_cli_assistant_event_of_an_unexpected_shape_is_an_error(
    tmp_path: Path, data: Any
) -> None:
    path, text = _copilot_log(data)
    _assert_error(tmp_path / path, text, "copilot-cli", 3)


@pytest.mark.parametrize("role", [["assistant"], "model", None], ids=["list", "model", "none"])
def test_goose_message_of_an_unexpected_role_is_an_error(tmp_path: Path, role: Any) -> None:
    """rmcp's Role is user or assistant; a line naming the assistant any other way was
    skipped with its leak."""
    path = tmp_path / ".local" / "share" / "goose" / "sessions" / "20250310_091530.jsonl"
    meta = {"working_dir": "/w", "description": "d", "message_count": 2, "total_tokens": 10}
    user = {"role": "user", "created": 1741597000, "content": [{"type": "text", "text": "hi"}]}
    user["metadata"] = goose_db.VISIBLE
    answer = {"role": role, "created": 1741597010, "content": [{"type": "text", "text": LEAK}]}
    answer["metadata"] = {"assistant": True, **goose_db.VISIBLE}
    _assert_error(path, _lines(meta, user, answer), "goose", 3)


def test_zed_legacy_thread_is_read_and_its_repair_refused_with_the_reason(tmp_path: Path) -> None:
    """An agent-1 thread (`SerializedThread`, no "0.3" version) that Zed still loads: its
    assistant segments are read, so its leak is found; repair leaves it and says why."""
    user = {**_LEGACY, "id": 0, "role": "user", "segments": [{"type": "text", "text": "hi"}]}
    doc = {"summary": "t", "updated_at": "2025-05-01T10:00:00Z", "messages": [user, _LEGACY]}
    doc |= {"version": "0.2.0", "title": "t"}
    store = zed_db.build(tmp_path / "threads.db", [("t1", doc)])
    report = scan([str(store)], jobs=1)
    assert (int(report.exit_code()), report.errors) == (ExitCode.FINDINGS, ())
    assert [f.json_path for f in report.findings] == ["thread.messages[1].segments[0].text"]
    before = support.content(store)
    result = run([store], WriteMode.IN_PLACE, tmp_path)
    assert support.content(store) == before
    reasons = [c.placement.reason for f in result.files for c in f.changes]
    assert any("legacy agent-1 thread" in (r or "") for r in reasons), result.files
