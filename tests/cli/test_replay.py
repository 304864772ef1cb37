"""`thinkfix replay`: exit codes, stdout for results, stderr for messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
LEAKING = {
    "vllm_qwen3_think_leak.sse",
    "sglang_deepseek_r1_orphan.sse",
    "relay_deepseek_r1_duplicate.sse",
    "anthropic_compat_glm_leak.sse",
    "ollama_deepseek_r1_think_leak.ndjson",
}
CAPTURES = sorted(p.name for p in STREAMS.iterdir() if p.suffix in (".sse", ".ndjson"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["replay", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("name", CAPTURES)
def test_replay_exit_code_says_whether_the_raw_stream_leaked(name: str) -> None:
    code, out, err = run(str(STREAMS / name))
    assert (code, err) == ((1, "") if name in LEAKING else (0, ""))
    assert ("result: LEAKED" in out) is (name in LEAKING)
    assert "normalized message:" in out


def test_replay_text_report_of_a_think_leak() -> None:
    code, out, _ = run(str(STREAMS / "vllm_qwen3_think_leak.sse"))
    assert code == 1
    assert "provider  openai (rule: wire-default)" in out
    assert "model     Qwen/Qwen3-8B" in out
    assert "[thinking, inline]\nOkay, the user is asking for the capital of Australia." in out
    assert "[text]\nThe capital of Australia is **Canberra**.\n" in out
    assert "  block <think> (run 0, 0-152): '<think>\\nOkay, the user" in out


def test_replay_json_document() -> None:
    code, out, err = run("--json", str(STREAMS / "relay_deepseek_r1_duplicate.sse"))
    doc = json.loads(out)
    assert (code, err) == (1, "")
    assert doc["schema_version"] == 1
    assert doc["adapter"] == {"name": "deepseek", "rule": "deepseek-reasoner-model"}
    assert doc["capture"]["encoding"] == "sse" and doc["capture"]["done"] is True
    assert doc["leaked"] is True
    assert [b["type"] for b in doc["message"]["blocks"]] == ["thinking", "text"]
    assert [leak["kind"] for leak in doc["message"]["leaks"]] == ["duplicate"]


def test_replay_json_of_a_clean_capture() -> None:
    code, out, _ = run("--json", str(STREAMS / "anthropic_thinking_tool_use.sse"))
    doc = json.loads(out)
    assert code == 0 and doc["leaked"] is False and doc["message"]["leaks"] == []
    assert doc["message"]["blocks"][0]["signature"].startswith("EqQB")


def test_replay_provider_override(tmp_path: Path) -> None:
    code, out, _ = run("--provider", "fallback", str(STREAMS / "deepseek_reasoner.sse"))
    assert code == 0 and "provider  fallback (rule: explicit)" in out
    assert "[thinking" not in out  # the fallback reads no native reasoning


def test_replay_unknown_provider_is_an_error() -> None:
    code, out, err = run("--provider", "nope", str(STREAMS / "deepseek_reasoner.sse"))
    assert (code, out) == (2, "")
    assert "unknown provider 'nope'" in err


def test_replay_missing_file_is_an_error(tmp_path: Path) -> None:
    code, out, err = run(str(tmp_path / "missing.sse"))
    assert (code, out) == (2, "")
    assert err.startswith("thinkfix: error: cannot read")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"data: {oops\n\n", "not JSON"),
        (b'{"foo": 1}\n', "no provider adapter"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "UTF-8"),
    ],
)
def test_replay_unreadable_or_unknown_capture_is_an_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "capture.sse"
    path.write_bytes(content)
    code, out, err = run(str(path))
    assert (code, out) == (2, "")
    assert message in err


def test_replay_capture_with_no_content_for_the_adapter_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "capture.sse"
    path.write_bytes(b'data: {"type": "ping"}\n\n')
    code, out, err = run(str(path))
    assert (code, out) == (2, "")
    assert "found no content" in err


def test_replay_stream_error_is_reported_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "capture.sse"
    path.write_bytes(
        b'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-x"}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"Hal"}}\n\n'
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n'
    )
    code, out, err = run(str(path))
    assert code == 0 and "Overloaded" in err and "[text]\nHal" in out


def test_replay_help_lists_providers() -> None:
    result = CliRunner().invoke(main, ["replay", "--help"])
    assert result.exit_code == 0 and "openai-responses" in result.stdout
