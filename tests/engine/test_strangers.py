"""#21 item 1: a file a format claims but cannot read is an input error, never a clean count.

A runtime thinkfix does not know can wear a known format's envelope: Qwen Code's chats are
Claude-Code-like lines around a Gemini-like `message: {role: "model", parts: [...]}`, and
were read as claude-code with 0 assistant messages, exit 0. The shapes below are generic
strangers (not any one runtime's reader), so the guard holds for the next unknown runtime.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.processes import run_thinkfix
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.io.errors import ErrorKind
from thinkfix.reporters.base import OutputFormat
from thinkfix.reporters.registry import get_reporter


def _line(**kw: object) -> str:
    return json.dumps(kw, separators=(",", ":"))


ENVELOPE = {"parentUuid": None, "sessionId": "s1", "cwd": "/p", "version": "0.1"}
USER = _line(uuid="u1", type="user", message={"role": "user", "content": "list files"}, **ENVELOPE)
CLAUDE_ASSISTANT = _line(
    uuid="u9",
    type="assistant",
    message={"role": "assistant", "model": "m", "content": [{"type": "text", "text": "Hi."}]},
    **ENVELOPE,
)
#: Qwen Code's shape: Claude Code's envelope, `type: assistant`, a Gemini-like body.
QWEN_LIKE = _line(
    uuid="u2",
    type="assistant",
    model="qwen3-coder",
    message={
        "role": "model",
        "parts": [
            {"text": "I will run ls.", "thought": True},
            {"text": "<think>plan</think>Running ls."},
            {"functionCall": {"name": "ls", "args": {}}},
        ],
    },
    **ENVELOPE,
)
#: A stranger whose turn says "model" and nowhere "assistant": the sparse reader, which jumps
#: to lines holding the format's marker (`"assistant"`), must not skip it.
MODEL_ONLY = _line(
    uuid="u3",
    type="turn",
    message={"role": "model", "content": "<think>x</think>Done."},
    **ENVELOPE,
)
#: ... and one whose body is spaced as a pretty printer would (`"role": "model"`).
MODEL_SPACED = json.dumps(
    {"uuid": "u4", "type": "reply", "message": {"role": "model", "text": "Done."}, **ENVELOPE}
)
STRANGERS = {"qwen-like": QWEN_LIKE, "model-only": MODEL_ONLY, "model-spaced": MODEL_SPACED}


def _session(tmp_path: Path, *lines: str, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.parametrize("prefilter", [True, False], ids=["sparse", "parse-all"])
@pytest.mark.parametrize("name", sorted(STRANGERS))
def test_scan_stranger_turn_is_an_input_error(tmp_path: Path, name: str, prefilter: bool) -> None:
    path = _session(tmp_path, USER, STRANGERS[name], CLAUDE_ASSISTANT)
    report = scan([str(path)], ScanOptions(prefilter=prefilter))
    assert report.summary.by_file[str(path)].format == "claude-code"
    assert [(e.line, e.kind) for e in report.errors] == [(2, ErrorKind.BAD_SHAPE)]
    assert "claude-code cannot read" in report.errors[0].message
    assert report.summary.assistant_messages == 1  # the line it can read still counts
    assert report.exit_code() is ExitCode.ERROR


def test_scan_stranger_turn_in_a_pretty_document(tmp_path: Path) -> None:
    """A whole-document file takes the same guard (one record: the document)."""
    path = tmp_path / "chat.json"
    doc = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "model", "content": "<think>x</think>Hello"},
        ],
    }
    path.write_text(json.dumps(doc, indent=2))
    report = scan([str(path)], ScanOptions(inputs=_forced("openai-chat")))
    assert [e.kind for e in report.errors] == [ErrorKind.BAD_SHAPE]
    assert report.exit_code() is ExitCode.ERROR


def _forced(name: str):  # type: ignore[no-untyped-def]
    from thinkfix.engine.inputs.files import InputOptions

    return InputOptions(format=name)


@pytest.mark.parametrize("output", list(OutputFormat), ids=lambda o: o.value)
def test_scan_stranger_turn_is_named_in_every_report(tmp_path: Path, output: OutputFormat) -> None:
    path = _session(tmp_path, USER, QWEN_LIKE, name="chat-7f3c.jsonl")
    report = scan([str(path)], ScanOptions())
    text = get_reporter(output).render(report)
    if output is OutputFormat.OPENMETRICS:  # counts only: the error is counted by its kind
        assert 'thinkfix_errors{kind="bad_shape"} 1' in text
        return
    assert "chat-7f3c.jsonl" in text, output
    assert "cannot read" in text or "bad_shape" in text, output


def test_cli_scan_stranger_exits_2(tmp_path: Path) -> None:
    path = _session(tmp_path, USER, QWEN_LIKE)
    env = dict(os.environ, THINKFIX_STATE_DIR=str(tmp_path / "state"))
    for args in (["scan", str(path)], ["scan", "--output-format", "json", str(path)]):
        done = run_thinkfix(*args, env=env, timeout=60)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "bad_shape" in done.stdout  # the text report may cut the message to its width


def test_scan_known_records_with_the_words_are_not_strangers(tmp_path: Path) -> None:
    """`"model"` as a key, "assistant" in text, a progress entry's nested copy of a message,
    a header with no content (OpenCode's message files): none of these is an unread turn."""
    progress = _line(
        uuid="u5",
        type="progress",
        data={"message": {"type": "assistant", "message": {"role": "assistant", "content": "x"}}},
        **ENVELOPE,
    )
    header = _line(uuid="u6", type="system", role="model", model="m", **ENVELOPE)
    quoted = _line(
        uuid="u7", type="user", message={"role": "user", "content": '"model"'}, **ENVELOPE
    )
    path = _session(tmp_path, USER, progress, header, quoted, CLAUDE_ASSISTANT)
    for prefilter in (True, False):
        report = scan([str(path)], ScanOptions(prefilter=prefilter))
        assert report.errors == ()
        assert report.summary.assistant_messages == 1


LINES = [USER, CLAUDE_ASSISTANT, QWEN_LIKE, MODEL_ONLY, MODEL_SPACED, '{"type":"summary"}']


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=25))
def test_sparse_guard_equals_the_full_read(tmp_path_factory, lines: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The fast path (sparse reader, lines skipped by markers) reports exactly the stranger
    lines a full parse of every line reports (tests/engine/test_sparse.py holds the reader
    to the same lines at every block size)."""
    path = _session(tmp_path_factory.mktemp("s"), USER, *lines)
    fast = scan([str(path)], ScanOptions())
    full = scan([str(path)], ScanOptions(prefilter=False))
    assert fast.errors == full.errors
    assert fast.summary == full.summary
    strangers = [i + 2 for i, line in enumerate(lines) if line in STRANGERS.values()]
    assert [e.line for e in fast.errors] == strangers
