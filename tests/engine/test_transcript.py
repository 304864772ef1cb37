"""Loading a session: errors, compression, damaged lines, merging and the normalized view."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import zstandard

from tests.reporters.transcript.support import DATA, data
from thinkfix.engine.scan.transcript import TranscriptError, load, merge
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.normalizer.policy import DEFAULT


def text(value: str, **kw: object) -> Part:
    return Part(PartKind.TEXT, value, **kw)  # type: ignore[arg-type]


def test_build_missing_file_is_an_error() -> None:
    with pytest.raises(TranscriptError, match="cannot read"):
        load(str(DATA / "no-such-session.jsonl"))


def test_build_directory_is_an_error() -> None:
    with pytest.raises(TranscriptError, match="is a directory"):
        load(str(DATA))


def test_build_unknown_format_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"editor": "vim", "tabs": 4}\n')
    with pytest.raises(TranscriptError, match="not a known session format"):
        load(str(path))


def test_build_forced_format_skips_detection(tmp_path: Path) -> None:
    path = tmp_path / "session.log"
    path.write_bytes((DATA / "pi.jsonl").read_bytes())
    assert load(str(path), "pi").format_id == "pi"


def test_build_nothing_readable_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b'{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u"\n')
    with pytest.raises(TranscriptError, match="nothing readable"):
        load(str(path), "claude-code")


def test_build_damaged_lines_are_left_out_and_named(tmp_path: Path) -> None:
    lines = (DATA / "claude_code.jsonl").read_bytes().splitlines(keepends=True)
    lines[2] = b'{"type":"user", not json\n'
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(b"".join(lines))
    transcript = load(str(path))
    assert len(transcript.problems) == 1 and transcript.problems[0].startswith("line 3: not JSON")
    assert transcript.turns[0].role is Role.SYSTEM and transcript.turns[1].role is Role.ASSISTANT


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_build_compressed_sessions_read_transparently(tmp_path: Path, suffix: str) -> None:
    raw = (DATA / "codex.jsonl").read_bytes()
    packed = gzip.compress(raw) if suffix == ".gz" else zstandard.ZstdCompressor().compress(raw)
    path = tmp_path / f"rollout.jsonl{suffix}"
    path.write_bytes(packed)
    assert load(str(path)).turns == load(data("codex.jsonl")).turns


def test_build_corrupt_compression_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl.gz"
    path.write_bytes(gzip.compress((DATA / "codex.jsonl").read_bytes())[:200])
    with pytest.raises(TranscriptError):
        load(str(path), "codex")


def test_build_merge_joins_one_message_split_over_lines() -> None:
    turns = [
        Turn(Role.ASSISTANT, (text("a"),), message_id="m1", lines=(4, 4)),
        Turn(Role.ASSISTANT, (text("b"),), message_id="m1", note="stop: max_tokens", lines=(5, 5)),
        Turn(Role.ASSISTANT, (text("c"),), message_id="m2", lines=(6, 6)),
    ]
    merged = list(merge(turns))
    assert [len(t.parts) for t in merged] == [2, 1]
    assert merged[0].lines == (4, 5) and merged[0].note == "stop: max_tokens"


def test_build_merge_keeps_messages_without_an_id_apart() -> None:
    turns = [Turn(Role.ASSISTANT, (text("a"),)), Turn(Role.ASSISTANT, (text("b"),))]
    assert len(list(merge(turns))) == 2


def test_build_merge_names_results_after_their_call_and_drops_empty_turns() -> None:
    call = Part(PartKind.TOOL_CALL, "x=1", name="grep", call_id="c1")
    result = Part(PartKind.TOOL_RESULT, "ok", call_id="c1")
    turns = [Turn(Role.ASSISTANT, (call,)), Turn(Role.USER, ()), Turn(Role.TOOL, (result,))]
    merged = list(merge(turns))
    assert [t.role for t in merged] == [Role.ASSISTANT, Role.TOOL]
    assert merged[1].parts[0].name == "grep"


def test_build_merge_drops_a_repeated_system_prompt() -> None:
    prompt = Turn(Role.SYSTEM, (text("Be brief."),), note="system prompt")
    turns = [prompt, Turn(Role.USER, (text("hi"),)), prompt, Turn(Role.USER, (text("again"),))]
    assert [t.role for t in merge(turns)] == [Role.SYSTEM, Role.USER, Role.USER]


def test_build_normalized_leaves_signed_text_alone(tmp_path: Path) -> None:
    # A Gemini part with a thoughtSignature is signed: repair reports it, never splits it.
    path = tmp_path / "signed.json"
    path.write_text(
        '{"sessionId": "s", "projectHash": "p", "messages": [{"id": "m", "type": '
        '"gemini", "content": [{"text": "<think>x</think>Answer", '
        '"thoughtSignature": "sig"}]}]}'
    )
    parts = load(str(path), normalized=True).turns[0].parts
    assert [(p.kind, p.text) for p in parts] == [(PartKind.TEXT, "<think>x</think>Answer")]


def test_build_normalized_follows_the_policy() -> None:
    off = DEFAULT.with_changes(tags=("thinking",))
    parts = load(data("pi.jsonl"), normalized=True, policy=off).turns[1].parts
    assert not any(p.recovered for p in parts)
    assert any("<think>" in p.text for p in parts if p.kind is PartKind.TEXT)


def test_build_normalized_drops_a_copy_of_the_native_reasoning(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text(
        '[{"role": "user", "content": "q"}, {"role": "assistant", '
        '"reasoning_content": "Add them.", "content": "<think>Add them.</think>4"}]'
    )
    parts = load(str(path), normalized=True).turns[1].parts
    assert [(p.text, p.recovered) for p in parts] == [("Add them.", False), ("4", False)]
