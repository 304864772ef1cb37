"""Bounded work on hostile input (issue 11, items 8 and 10): a record of millions of
delimiters, a record or a decompressed stream larger than the limit, and many clean files."""

from __future__ import annotations

from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.inputs import InputOptions
from thinkfix.engine.scan import ScanOptions, capped_findings, scan
from thinkfix.normalizer import DEFAULT, normalize

HOSTILE = "</think><think>"
CHAT = InputOptions(format="openai-chat")


def _chat(path: Path, text: str) -> Path:
    path.write_bytes(orjson.dumps({"role": "assistant", "content": text}) + b"\n")
    return path


def test_a_hostile_message_reports_the_cap_and_says_how_much_was_not_examined(
        tmp_path: Path) -> None:
    # 600 KB of `</think><think>`: 40,000 findings before the cap, which used to take ~1.3 s
    # to normalize whole; now the stream stops after the first 1000.
    text = HOSTILE * 40_000
    report = scan([str(_chat(tmp_path / "h.jsonl", text))], ScanOptions(inputs=CHAT))
    assert report.summary.findings == 1000
    assert report.summary.leaking_messages == 1
    [error] = report.errors
    assert error.kind == "too_many_findings" and error.line == 1
    assert "more than 1000 findings" in error.message and "not examined" in error.message
    assert report.exit_code().value == 2  # never called fully read


def test_capped_findings_are_the_first_findings_of_normalize() -> None:
    text = HOSTILE * 3000
    capped = capped_findings(text, None, DEFAULT, 100)
    assert capped.findings == normalize(text).findings[:100]
    # Stopped well before the end: a hostile text costs about what its first chunk does.
    assert capped.unexamined > len(text) - 40_000 and capped.more > 0


def test_the_cap_is_configurable_and_zero_turns_it_off(tmp_path: Path) -> None:
    path = str(_chat(tmp_path / "h.jsonl", HOSTILE * 300))
    assert scan([path], ScanOptions(inputs=CHAT, max_findings=50)).summary.findings == 50
    full = scan([path], ScanOptions(inputs=CHAT, max_findings=0))
    assert full.summary.findings == len(normalize(HOSTILE * 300).findings) and not full.errors


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["<think>", "</think>", "a", " ", "`", "\n", "[", "x<"]),
                max_size=80), st.integers(min_value=1, max_value=12))
def test_under_the_cap_findings_equal_normalize(parts: list[str], cap: int) -> None:
    text = "".join(parts)
    capped = capped_findings(text, None, DEFAULT, cap)
    full = normalize(text).findings
    assert capped.findings == full[:cap]
    if not capped.unexamined:
        assert capped.more == max(0, len(full) - cap)
