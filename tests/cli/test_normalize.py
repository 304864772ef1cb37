"""`thinkfix normalize`: stdout carries the result, exit codes follow the contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main

CASES = json.loads((Path(__file__).parents[1] / "normalizer" / "cases.json").read_text("utf-8"))


def run(args: list[str], text: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["normalize", *args], input=text.encode("utf-8"))
    return result.exit_code, result.stdout, result.stderr


def test_normalize_prints_visible_text() -> None:
    assert run([], "<think>hidden steps</think>Final answer") == (0, "Final answer", "")


def test_normalize_json_shows_thinking_and_block_finding() -> None:
    code, out, err = run(["--json"], "<think>hidden steps</think>Final answer")
    doc = json.loads(out)
    assert code == 0 and err == ""
    assert doc["schema_version"] == 1
    assert doc["visible"] == "Final answer"
    assert doc["thinking"] == ["hidden steps"]
    assert [f["kind"] for f in doc["findings"]] == ["block"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_normalize_stream_chunk_1_equals_batch(case: dict) -> None:
    args = ["--json"]
    if case.get("native") is not None:
        args += ["--native", case["native"]]
    for key, value in case.get("policy", {}).items():
        flag = "--" + ("native-mode" if key == "native" else key.replace("_", "-"))
        if isinstance(value, bool):
            args.append(flag if value else "--no-" + flag[2:])
        else:
            args += [flag, value]
    for key in ("start_in_reasoning", "followed_by_tool_call"):
        if case.get(key):
            args.append("--" + key.replace("_", "-"))
    if case.get("model"):
        args += ["--model", case["model"]]
    if case.get("policy", {}).get("enabled") is False:
        pytest.skip("the opt-out is a config knob, not a normalize flag")
    batch = json.loads(run(args, case["text"])[1])
    streamed = json.loads(run([*args, "--stream-chunk", "1"], case["text"])[1])
    assert streamed == batch
    assert batch["visible"] == case["visible"]


def test_normalize_native_mode_flag_changes_policy() -> None:
    code, out, _ = run(
        ["--json", "--native", "plan", "--native-mode", "merge"], "<think>plan</think>A"
    )
    assert code == 0
    assert json.loads(out)["thinking"] == ["plan", "plan"]


def test_normalize_rejects_bad_utf8_with_usage_error() -> None:
    result = CliRunner().invoke(main, ["normalize"], input=b"\xff\xfe<think>")
    assert result.exit_code == 2
    assert "not UTF-8" in result.stderr
    assert result.stdout == ""
