"""Each format's `turns` (the transcript reader `show` uses), on the tests' own session files.

The golden dumps are the reviewed turns of each file, as stored and as repair would
leave them; the tests below pin the facts a reader relies on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reporters.transcript.support import CASES, DATA, GOLDEN, check_golden, data, dump
from thinkfix.engine.scan.transcript import load
from thinkfix.formats import registry
from thinkfix.formats.turns import PartKind, Role

NAMES = sorted(CASES)


def test_adapters_every_format_has_one() -> None:
    # #12: the reader is the format's own `turns`, not a second registry beside the formats
    assert all(callable(fmt.turns) for fmt in registry.FORMATS.values())


def test_adapters_every_format_has_a_case() -> None:
    assert set(CASES.values()) == set(registry.FORMATS)


@pytest.mark.parametrize("name", NAMES)
def test_adapters_case_is_detected_as_its_format(name: str) -> None:
    assert load(data(name)).format_id == CASES[name]


@pytest.mark.parametrize("name", NAMES)
def test_adapters_turns_match_golden(name: str) -> None:
    check_golden(f"{name}.turns", dump(load(data(name))))


@pytest.mark.parametrize("name", NAMES)
def test_adapters_normalized_turns_match_golden(name: str) -> None:
    check_golden(f"{name}.normalized.turns", dump(load(data(name), normalized=True)))


def test_adapters_golden_files_all_have_a_case() -> None:
    expected = {f"{n}{s}" for n in NAMES for s in (".turns", ".normalized.turns", ".txt")}
    assert {p.name for p in GOLDEN.iterdir()} <= expected


# Assistant texts the transcript leaves out on purpose: the history a logged Anthropic
# request replays (the previous response already shows it) and Codex compacted history.
SKIPPED_SITES = {("anthropic.jsonl", 2, "request.messages[1].content[0].text")}


@pytest.mark.parametrize("name", NAMES)
def test_adapters_every_site_is_a_text_part(name: str) -> None:
    """--normalized finds a text's site by path, so every site must have its part."""
    fmt = registry.get(CASES[name])
    adapter = fmt.turns
    with open(DATA / name, "rb") as fp:  # a file, as show opens it (SQLite needs its path)
        records = list(fmt.read(fp))
    for record in records:
        paths = {p.path for t in adapter(record) for p in t.parts if p.kind is PartKind.TEXT}
        for site in fmt.sites(record):
            if (name, record.line, site.json_path) not in SKIPPED_SITES:
                assert site.path in paths, (record.line, site.json_path)


def test_adapters_claude_code_one_response_over_three_lines_is_one_turn() -> None:
    turns = load(data("claude_code.jsonl")).turns
    response = [t for t in turns if t.message_id == "msg_01A"]
    assert len(response) == 1
    assert response[0].lines == (4, 6)
    assert [p.kind for p in response[0].parts] == [
        PartKind.THINKING,
        PartKind.TEXT,
        PartKind.TOOL_CALL,
    ]
    assert response[0].parts[0].signed


def test_adapters_claude_code_tool_result_is_a_tool_turn_named_after_its_call() -> None:
    turns = load(data("claude_code.jsonl")).turns
    result = next(t for t in turns if t.role is Role.TOOL).parts[0]
    assert (result.name, result.error) == ("Bash", True)


def test_adapters_unknown_record_kinds_are_skipped_quietly() -> None:
    transcript = load(data("claude_code.jsonl"))  # file-history-snapshot, turn_duration
    assert transcript.problems == ()
    assert 2 not in {line for t in transcript.turns for line in t.lines}
    codex = load(data("codex.jsonl"))  # session_meta, turn_context, event_msg, world_state
    assert codex.problems == ()
    assert all(t.lines[0] not in (1, 2, 4, 7, 10) for t in codex.turns)


def test_adapters_codex_event_copies_are_not_shown_twice() -> None:
    texts = [p.text for t in load(data("codex.jsonl")).turns for p in t.parts]
    assert sum("I'll grep for them." in t for t in texts) == 1


def test_adapters_codex_items_of_one_response_are_one_turn() -> None:
    turn = load(data("codex.jsonl")).turns[1]
    assert turn.lines == (5, 8) and turn.model == "qwen3:32b"
    assert [p.kind for p in turn.parts] == [PartKind.THINKING, PartKind.TEXT, PartKind.TOOL_CALL]


def test_adapters_pi_signature_is_a_field_name_for_openai_completions() -> None:
    turns = load(data("pi.jsonl")).turns
    thinking = [p for t in turns for p in t.parts if p.kind is PartKind.THINKING]
    assert [(p.text, p.signed) for p in thinking] == [
        ("A plain mv will do.", False),
        ("Confirm and stop.", True),
    ]


def test_adapters_pi_error_message_is_a_note() -> None:
    last = load(data("pi.jsonl")).turns[-1]
    assert (last.role, last.parts, last.note) == (Role.ASSISTANT, (), "stop: error: fetch failed")


def test_adapters_anthropic_request_shows_only_its_new_input() -> None:
    turns = load(data("anthropic.jsonl")).turns
    roles = [t.role for t in turns]
    assert roles == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]


def test_adapters_gemini_thought_part_is_signed_thinking() -> None:
    last = load(data("gemini_cli.json")).turns[-1]
    assert [(p.kind, p.signed) for p in last.parts] == [
        (PartKind.THINKING, True),
        (PartKind.TEXT, False),
    ]


def test_adapters_whole_documents_are_located_by_json_path() -> None:
    turns = load(data("openai_chat.json")).turns
    assert [t.where for t in turns][:3] == ["messages[0]", "messages[1]", "messages[2]"]
    assert {t.lines for t in turns} == {(0, 0)}


def test_adapters_claude_code_marks_sidechain_and_meta_lines(tmp_path: Path) -> None:
    common = '"sessionId":"s","parentUuid":null,"timestamp":"2026-04-01T08:00:00.000Z"'
    path = tmp_path / "side.jsonl"
    path.write_text(
        f'{{"type":"user","isMeta":true,"uuid":"u1",{common},'
        '"message":{"role":"user","content":"Caveat: injected."}}\n'
        f'{{"type":"assistant","isSidechain":true,"uuid":"a1",{common},"message":{{"id":"m",'
        '"role":"assistant","content":[{"type":"text","text":"sub"}],"stop_reason":"refusal"}}\n'
    )
    assert [t.note for t in load(str(path)).turns] == ["meta", "sidechain, stop: refusal"]
