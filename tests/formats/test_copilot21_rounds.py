"""Copilot Chat's `result.metadata.toolCallRounds[].response`: the round text Copilot replays
as the assistant message of an earlier turn (vscode-copilot-chat `toolCalling.tsx`,
`ChatToolCallRound`: `<AssistantMessage>{round.response}`). A leak only there (no markdown
part holds the same text) is read on its own, once, and repaired into the round's own
`thinking` (`ThinkingData {id, text}`); a round of a shape Copilot never writes is an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.support import FIXTURES, read, repair, sites
from tests.formats.test_copilot_chat import _fixed
from thinkfix.cli import main
from thinkfix.engine.report import ExitCode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind
from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.grammar import grammar_for
from thinkfix.normalizer.policy import DEFAULT

FMT = get("copilot-chat")
FLAT = FIXTURES / "copilot-chat" / "chatSessions" / "4a7c2e91-3b5d-4f6a-9c8e-1d2f3a4b5c6d.json"
LOG = (
    FIXTURES
    / "copilot-chat"
    / "emptyWindowChatSessions"
    / ("9e3d1c7b-5a2f-4e8d-b6c4-0f1e2d3c4b5a.jsonl")
)
ROUND = "requests[2].result.metadata.toolCallRounds[0]"
LEAK = "<think>Check the changelog first.</think>Added a line under **Fixed**."


def _doc() -> Any:
    """The flat fixture with every markdown leak cleaned, so only what a test adds leaks."""
    doc = json.loads(FLAT.read_bytes())
    for request in doc["requests"]:
        for part in request["response"]:
            if "kind" not in part:
                part["value"] = normalize(part["value"]).visible
        for round_ in request["result"]["metadata"]["toolCallRounds"]:
            round_["response"] = normalize(round_["response"]).visible
    return doc


def _dump(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def _with_round(response: Any, thinking: Any = None, *, markdown: str | None = None) -> bytes:
    doc = _doc()
    request = doc["requests"][2]
    round_ = request["result"]["metadata"]["toolCallRounds"][0]
    round_["response"] = response
    if thinking is not None:
        round_["thinking"] = thinking
    if markdown is not None:
        request["response"][0]["value"] = markdown
    return _dump(doc)


def _leaks(data: bytes) -> list[tuple[str, str]]:
    return [
        (s.json_path, s.text)
        for s in sites(FMT, read(FMT, data))
        if normalize(s.text, native_reasoning=s.native_reasoning).findings
    ]


def _round(data: bytes, request: int = 2, index: int = 0) -> Any:
    return json.loads(data)["requests"][request]["result"]["metadata"]["toolCallRounds"][index]


def test_copilot21_a_leak_only_in_a_round_is_read() -> None:
    """Failed before: the round was never read, so scan said clean."""
    data = _with_round(LEAK)
    assert _leaks(data) == [(f"{ROUND}.response", LEAK)]
    found = [s for s in sites(FMT, read(FMT, data)) if "toolCallRounds" in s.json_path]
    assert [(s.message_id, s.model) for s in found] == [("round_0004a8b9", "ollama/qwen3:32b")]


def test_copilot21_a_round_with_a_markdown_twin_is_counted_once() -> None:
    data = _with_round(LEAK, markdown=LEAK)
    assert _leaks(data) == [("requests[2].response[0].value", LEAK)]
    out = repair(FMT, data, _fixed(data))
    assert _round(out.data)["response"] == "Added a line under **Fixed**."
    assert out.placements[0].mirrors == (f"record 0: {ROUND}.response",)


def test_copilot21_a_round_split_over_markdown_parts_is_counted_once() -> None:
    """Copilot's linkifier puts an anchor part between two markdown parts: the round holds
    both texts and the link between them, and its leak is the markdown part's."""
    doc = _doc()
    request = doc["requests"][2]
    request["response"] = [
        {"value": "<think>Check it.</think>See ", "supportThemeIcons": False},
        {"kind": "inlineReference", "inlineReference": {"path": "/x/CHANGELOG.md"}},
        {"value": " for the entry.", "supportThemeIcons": False},
    ]
    request["result"]["metadata"]["toolCallRounds"][0]["response"] = (
        "<think>Check it.</think>See [CHANGELOG.md](CHANGELOG.md) for the entry."
    )
    data = _dump(doc)
    assert [p for p, _ in _leaks(data)] == ["requests[2].response[0].value"]
    out = repair(FMT, data, _fixed(data))
    assert _round(out.data)["response"] == "See [CHANGELOG.md](CHANGELOG.md) for the entry."


def test_copilot21_round_repair_moves_the_reasoning_into_its_thinking() -> None:
    """Failed before: nothing to repair (the round was not read)."""
    data = _with_round(LEAK)
    out = repair(FMT, data, _fixed(data))
    round_ = _round(out.data)
    assert round_["response"] == "Added a line under **Fixed**."
    assert round_["thinking"] == {
        "id": "thinkfix_round_0004a8b9",
        "text": "Check the changelog first.",
    }
    (placement,) = out.placements
    assert placement.kind is PlacementKind.FIELD
    assert placement.json_path == f"{ROUND}.thinking.text"
    assert placement.text_path == f"{ROUND}.response"
    assert not _leaks(out.data)
    # a second repair changes nothing
    assert not _fixed(out.data)


def test_copilot21_round_reasoning_is_appended_to_an_unsigned_thinking() -> None:
    data = _with_round(LEAK, {"id": "t1", "text": "Earlier."})
    out = repair(FMT, data, _fixed(data))
    assert _round(out.data)["thinking"] == {
        "id": "t1",
        "text": "Earlier.\n\nCheck the changelog first.",
    }
    data = _with_round(LEAK, {"id": "t2", "text": ["Ear", "lier."]})
    out = repair(FMT, data, _fixed(data))
    assert _round(out.data)["thinking"] == {
        "id": "t2",
        "text": ["Ear", "lier.", "\n\nCheck the changelog first."],
    }


def test_copilot21_round_native_thinking_dedupes_a_repeated_block() -> None:
    data = _with_round(LEAK, {"id": "t1", "text": "Check the changelog first."})
    out = repair(FMT, data, _fixed(data))
    assert _round(out.data)["thinking"] == {"id": "t1", "text": "Check the changelog first."}
    assert out.placements[0].kind is PlacementKind.NONE


def test_copilot21_a_signed_round_thinking_is_never_touched() -> None:
    """`encrypted` is the provider's signature over the text (messagesApi.ts sends it as an
    Anthropic thinking block's `signature`): the reasoning stays in the manifest."""
    thinking = {"id": "t1", "text": "Signed.", "encrypted": "c2ln"}
    data = _with_round(LEAK, thinking)
    out = repair(FMT, data, _fixed(data))
    round_ = _round(out.data)
    assert round_["thinking"] == thinking
    assert round_["response"] == "Added a line under **Fixed**."
    assert out.placements[0].kind is PlacementKind.MANIFEST


def _log_with_round(text: str, copies: int = 1) -> bytes:
    lines = LOG.read_bytes().splitlines()
    out = []
    for line in lines:
        entry = json.loads(line)
        if entry.get("k", [None])[-1:] == ["response"] or entry.get("k") == ["requests"]:
            line = normalize(line.decode()).visible.encode()  # only the added leak remains
        if entry.get("k") == ["requests", 0, "result"]:
            listed = entry["v"]["metadata"]["toolCallRounds"]
            listed[0]["response"] = normalize(listed[0]["response"]).visible
            listed[1]["response"] = text
            line = json.dumps(entry, separators=(",", ":")).encode()
            out += [line] * (copies - 1)
        out.append(line)
    return b"\n".join(out) + b"\n"


def test_copilot21_log_round_leak_is_read_once_on_its_result_line() -> None:
    """Failed before: the result line of the log held the only copy and was not read."""
    data = _log_with_round(LEAK)
    assert _leaks(data) == [("v.metadata.toolCallRounds[1].response", LEAK)]
    # the same result written twice is the same text: counted once
    assert len(_leaks(_log_with_round(LEAK, copies=2))) == 1
    out = repair(FMT, data, _fixed(data))
    entry = json.loads(out.data.splitlines()[7])
    assert entry["v"]["metadata"]["toolCallRounds"][1]["thinking"]["text"] == (
        "Check the changelog first."
    )
    assert not _leaks(out.data)


@pytest.mark.parametrize(
    ("response", "thinking"),
    [
        (5, None),
        (["<think>a</think>b"], None),
        (LEAK, "a string"),
        (LEAK, {"id": "t", "text": 7}),
        (LEAK, {"id": "t", "text": ["a", 7]}),
    ],
)
def test_copilot21_a_round_of_no_shape_copilot_writes_is_an_error(
    tmp_path: Path, response: Any, thinking: Any
) -> None:
    path = tmp_path / "chatSessions" / "s.json"
    path.parent.mkdir()
    path.write_bytes(_with_round(response, thinking))
    report = scan([str(path)], ScanOptions(), jobs=1)
    assert report.exit_code() == ExitCode.ERROR, report.errors
    assert "toolCallRounds[0]" in report.errors[0].message


def test_copilot21_rounds_not_a_list_is_an_error(tmp_path: Path) -> None:
    doc = _doc()
    doc["requests"][1]["result"]["metadata"]["toolCallRounds"] = {"0": {"response": LEAK}}
    path = tmp_path / "chatSessions" / "s.json"
    path.parent.mkdir()
    path.write_bytes(_dump(doc))
    report = scan([str(path)], ScanOptions(), jobs=1)
    assert report.exit_code() == ExitCode.ERROR, report.errors


def test_copilot21_round_repair_diff_and_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(state))
    path = tmp_path / "chatSessions" / "s.json"
    path.parent.mkdir()
    data = _with_round(LEAK)
    path.write_bytes(data)
    runner = CliRunner()
    shown = runner.invoke(main, ["diff", "--isolated", str(path), "--output-format", "json"])
    assert shown.exit_code == 1, shown.output
    assert "toolCallRounds[0].response" in shown.stdout
    fixed = runner.invoke(main, ["repair", "--in-place", "--include-active", str(path)])
    assert fixed.exit_code == 0, fixed.output
    assert _round(path.read_bytes())["thinking"]["text"] == "Check the changelog first."
    manifest = next(state.glob("runs/*/manifest.json"))
    undone = runner.invoke(main, ["undo", str(manifest)])
    assert undone.exit_code == 0, undone.output
    assert path.read_bytes() == data


def test_copilot21_delimiter_chars_are_the_default_grammars() -> None:
    from thinkfix.formats.copilot_rounds import DELIMITER_CHARS

    grammar = grammar_for(DEFAULT)
    assert {lit[0] for lit in grammar.literals} | {"<"} == set(DELIMITER_CHARS)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    reasoning=st.text(st.sampled_from("xyz "), min_size=1, max_size=8).filter(str.strip),
    answer=st.text(st.sampled_from("pq. "), min_size=1, max_size=8).filter(str.strip),
    twin=st.sampled_from(["none", "same", "split"]),
)
def test_copilot21_each_round_leak_is_counted_once_and_repaired(
    reasoning: str, answer: str, twin: str
) -> None:
    """Whatever markdown the request shows, a round's leak is one site; a repair leaves no
    leak in the file, keeps the round's answer, and puts the reasoning in the file once."""
    text = f"<think>{reasoning}</think>{answer}"
    doc = _doc()
    request = doc["requests"][2]
    if twin == "same":
        request["response"][0]["value"] = text
    elif twin == "split":
        request["response"][0]["value"] = text
        request["response"].append({"kind": "inlineReference", "inlineReference": {}})
        request["response"].append({"value": " tail"})
        text += "[x](x) tail"
    request["result"]["metadata"]["toolCallRounds"][0]["response"] = text
    data = _dump(doc)
    found = _leaks(data)
    assert len(found) == 1
    out = repair(FMT, data, _fixed(data))
    assert not _leaks(out.data)
    round_ = _round(out.data)
    assert "</think>" not in round_["response"] and answer.strip() in round_["response"]
    placed = json.dumps(json.loads(out.data)).count(json.dumps(reasoning.strip())[1:-1])
    assert placed >= 1


@pytest.mark.parametrize("own", [False, True])
def test_copilot21_engine_repairs_a_log_round_and_its_markdown_twins(
    tmp_path: Path, own: bool
) -> None:
    """The engine's planner reads records without their context (but a site's): which rounds
    a scan read on their own must come out the same there (without `own` it failed before
    the planner rebuilt them: the result line, no site, had its mirrored round taken for
    one read on its own and left leaking)."""
    lines = LOG.read_bytes().splitlines()
    entry = json.loads(lines[7])
    if own:
        entry["v"]["metadata"]["toolCallRounds"][1]["response"] = LEAK
    lines[7] = json.dumps(entry, separators=(",", ":")).encode()
    path = tmp_path / "chatSessions" / "s.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\n".join(lines) + b"\n")
    runner = CliRunner()
    out = tmp_path / "out"
    fixed = runner.invoke(main, ["repair", "--isolated", "--out", str(out), str(path)])
    assert fixed.exit_code == 0, fixed.output
    (written,) = out.rglob("s.jsonl")
    report = scan([str(written)], ScanOptions(), jobs=1)
    assert (report.exit_code(), report.summary.leaking_messages) == (ExitCode.CLEAN, 0)
    rounds = json.loads(written.read_bytes().splitlines()[7])["v"]["metadata"]["toolCallRounds"]
    assert rounds[0]["response"] == "Let me read the parser."
    assert ("thinking" in rounds[1]) is own
