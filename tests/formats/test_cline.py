"""Cline and Roo Code task histories: told apart by path or keys, read with their models,
and repaired without a thinking block (the history is replayed to the provider)."""

from __future__ import annotations

import json

import pytest

from tests.formats.support import FIXTURES, read, repair, site_at, sites
from thinkfix.formats import registry
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

CLINE = get("cline")
TASK = FIXTURES / "cline" / "tasks" / "1775300000123"
HISTORY = (TASK / "api_conversation_history.json").read_bytes()


def _history(extra: dict[str, object]) -> bytes:
    return json.dumps(
        [
            {"role": "user", "content": "hi", "ts": 1},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "<think>x</think>Hi."}],
                "ts": 2,
                **extra,
            },
        ],
        separators=(",", ":"),
    ).encode()


@pytest.mark.parametrize(
    "path,data,expected",
    [
        ("x/saoudrizwan.claude-dev/tasks/1/api_conversation_history.json", _history({}), "cline"),
        (
            "x/rooveterinaryinc.roo-cline/tasks/1/api_conversation_history.json",
            _history({}),
            "roo-code",
        ),
        ("api_conversation_history.json", _history({"isSummary": True}), "roo-code"),
        (
            "copied.json",
            _history({"modelInfo": {"modelId": "m", "providerId": "p", "mode": "act"}}),
            "cline",
        ),
        ("api_conversation_history.json", _history({}), "cline"),
    ],
)
def test_cline_family_detection_names_the_runtime(path: str, data: bytes, expected: str) -> None:
    found = registry.detect(data, path)
    assert found is not None and found[0].id == expected


def test_cline_truncated_history_is_told_by_its_name_and_keys() -> None:
    big = json.dumps(
        [
            {"role": "user", "content": "x" * 200_000, "ts": 1},
            {
                "role": "assistant",
                "content": "ok",
                "ts": 2,
                "modelInfo": {"modelId": "m", "providerId": "p", "mode": "act"},
            },
        ]
    ).encode()
    found = registry.detect(big[:65536], "tasks/9/api_conversation_history.json")
    assert found is not None and found[0].id == "cline"


def test_cline_task_folder_files_are_all_cline_and_metadata_holds_no_message() -> None:
    # ui_messages.json is read too (tests/formats/test_cline_ui.py): its two answers
    expected = {"ui_messages.json": 2, "task_metadata.json": 0}
    for name, count in expected.items():
        data = (TASK / name).read_bytes()
        fmt = registry.detect_or_raise(data, str(TASK / name))
        assert fmt is CLINE
        assert sum(fmt.assistant_messages(r) for r in read(fmt, data)) == count


def test_cline_sites_carry_the_model_of_model_info() -> None:
    found = sites(CLINE, read(CLINE, HISTORY))
    assert [s.json_path for s in found] == [
        "[1].content[0].text",
        "[3].content[0].text",
        "[5].content[0].text",
    ]
    assert {s.model for s in found} == {"deepseek-r1:32b"}


def test_cline_repair_keeps_reasoning_out_of_the_replayed_history() -> None:
    site = site_at(sites(CLINE, read(CLINE, HISTORY)), 1, "[1].content[0].text")
    out = repair(
        CLINE,
        HISTORY,
        [Repair(site, "I'll read the implementation first.", ("Read the test first.",))],
    )
    content = out.after[0].data[1]["content"]
    assert [b["type"] for b in content] == ["text", "tool_use"]
    assert out.placements[0].kind is PlacementKind.MANIFEST
    # Cline writes compact JSON without a trailing newline; so does the repair
    assert out.data.startswith(b'[{"role":"user"') and not out.data.endswith(b"\n")
