"""Kimi CLI contexts: kosong messages, string or part-list content, `think` parts replayed
as reasoning_content, and the runtime's own `_checkpoint`/`_usage` lines."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.formats.support import FIXTURES, read, repair, scores, site_at, sites
from thinkfix.engine.inputs.discover import discover
from thinkfix.formats import registry
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import PlacementKind, Repair

FMT = get("kimi-cli")
SESSIONS = FIXTURES / "kimi-cli/sessions/0923ed9e609e90f4690ffaf2aab37d39"
LEAKY = SESSIONS / "0f8e2d4c-6b1a-4e3f-9c7d-2a5b8e1f4c06/context.jsonl"
DATA = LEAKY.read_bytes()
CLEAN = SESSIONS / "4c1d9e7b-2f3a-4b8c-a6d5-9e0f1a2b3c4d/context.jsonl"


def test_kimi_folder_is_the_md5_of_the_work_dir() -> None:
    """As kimi_cli/metadata.py WorkDirMeta.sessions_dir names it."""
    assert LEAKY.parts[-3] == hashlib.md5(b"/home/dev/parser").hexdigest()


def test_kimi_cli_is_claimed_over_the_generic_chat_reader() -> None:
    for path in (LEAKY, CLEAN):
        confidence = scores(path.read_bytes()[:65536], "context.jsonl")
        assert confidence["kimi-cli"] == 0.95 > confidence["openai-chat"]
    # plain chat lines are Kimi's only where Kimi keeps them
    plain = b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"Hello."}\n'
    assert scores(plain, "/x/chat.jsonl")["kimi-cli"] == 0.0
    assert scores(plain, "/h/.kimi/sessions/abc/def/context_1.jsonl")["kimi-cli"] == 0.9
    found = registry.detect(plain, "/h/.kimi/sessions/abc/def/context_1.jsonl")
    assert found is not None and found[0] is FMT


def test_kimi_cli_sites_and_native_think_parts() -> None:
    records = read(FMT, DATA)
    found = sites(FMT, records)
    assert [(s.line, s.json_path) for s in found] == [
        (4, "content"),
        (8, "content[1].text"),
        (11, "content"),
    ]
    assert found[1].followed_by_tool_call and "</think>" in (found[1].native_reasoning or "")
    # the runtime's own entries are read, never messages
    assert [r.data["role"] for r in records if r.data["role"].startswith("_")] == [
        "_system_prompt",
        "_checkpoint",
        "_usage",
        "_checkpoint",
        "_usage",
        "_usage",
    ]
    assert sum(FMT.assistant_messages(r) for r in records) == 3


def test_kimi_cli_string_content_becomes_the_parts_kimi_writes_for_thinking() -> None:
    site = site_at(sites(FMT, read(FMT, DATA)), 4)
    out = repair(
        FMT, DATA, [Repair(site, "vLLM runs without a reasoning parser.", ("Parser off.",))]
    )
    assert out.after[3].data["content"] == [
        {"type": "think", "think": "Parser off.", "encrypted": None},
        {"type": "text", "text": "vLLM runs without a reasoning parser."},
    ]
    assert out.placements[0].kind is PlacementKind.BLOCK
    # pydantic's compact dump, as the message lines are written; json.dumps lines untouched
    assert b'"content":[{"type":"think","think":"Parser off.","encrypted":null},' in out.data
    assert b'{"role": "_checkpoint", "id": 1}\n' in out.data


def test_kimi_cli_reasoning_joins_the_unsigned_think_part_before_the_text() -> None:
    """Kimi replays a message's think parts joined with no separator, and merges adjacent
    unsigned ones itself: the reasoning is appended to that part, after a blank line."""
    site = site_at(sites(FMT, read(FMT, DATA)), 8)
    out = repair(FMT, DATA, [Repair(site, "Reading `serve.toml` now.", ("Need the flags.",))])
    content = out.after[7].data["content"]
    assert [p["type"] for p in content] == ["think", "text"]
    assert content[0]["think"].endswith("what the template emits.\n\nNeed the flags.")
    assert content[0]["encrypted"] is None
    assert out.placements[0].json_path == "content[0]"


def test_kimi_cli_a_signed_think_part_is_left_alone_and_a_new_one_inserted() -> None:
    line = {
        "role": "assistant",
        "content": [
            {"type": "think", "think": "signed", "encrypted": "c2ln"},
            {"type": "text", "text": "<think>new</think>Answer."},
        ],
    }
    data = json.dumps(line, separators=(",", ":")).encode() + b"\n"
    out = repair(FMT, data, [Repair(sites(FMT, read(FMT, data))[0], "Answer.", ("new",))])
    assert out.after[0].data["content"] == [
        {"type": "think", "think": "signed", "encrypted": "c2ln"},
        {"type": "think", "think": "new", "encrypted": None},
        {"type": "text", "text": "Answer."},
    ]


def test_kimi_cli_all_reasoning_text_with_only_a_think_part_is_refused() -> None:
    line = {
        "role": "assistant",
        "content": [
            {"type": "think", "think": "x", "encrypted": None},
            {"type": "text", "text": "<think>y</think>"},
        ],
    }
    data = json.dumps(line, separators=(",", ":")).encode() + b"\n"
    site = sites(FMT, read(FMT, data))[0]
    assert repair(FMT, data, [Repair(site, "", ("y",))]).placements[0].kind is PlacementKind.REFUSED


def test_kimi_cli_all_reasoning_string_beside_tool_calls_becomes_a_think_part() -> None:
    """What Kimi writes when the model thought and then only called a tool."""
    line = {
        "role": "assistant",
        "content": "<think>Read the file first.</think>",
        "tool_calls": [
            {
                "type": "function",
                "id": "ReadFile:1",
                "function": {"name": "ReadFile", "arguments": "{}"},
            }
        ],
    }
    data = json.dumps(line, separators=(",", ":")).encode() + b"\n"
    out = repair(FMT, data, [Repair(sites(FMT, read(FMT, data))[0], "", ("Read the file first.",))])
    assert out.after[0].data["content"] == [
        {"type": "think", "think": "Read the file first.", "encrypted": None}
    ]
    assert out.after[0].data["tool_calls"] == line["tool_calls"]
    assert out.placements[0].applied and out.placements[0].text_path is None
    # without the calls there would be nothing left to show: refused
    del line["tool_calls"]
    data = json.dumps(line, separators=(",", ":")).encode() + b"\n"
    refused = repair(FMT, data, [Repair(sites(FMT, read(FMT, data))[0], "", ("x",))])
    assert refused.placements[0].kind is PlacementKind.REFUSED


def test_kimi_cli_folders_and_share_dir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert FMT.default_locations({}, home) == [home / ".kimi/sessions"]
    assert FMT.default_locations({"KIMI_SHARE_DIR": str(tmp_path / "k")}, home) == [
        tmp_path / "k/sessions"
    ]
    (home / ".kimi/sessions/0923ed9e609e90f4690ffaf2aab37d39").mkdir(parents=True)
    assert str(home / ".kimi/sessions") in discover(env={"PWD": str(home)}, home=home)


#: An interpreter with Kimi CLI installed (it needs Python >= 3.12, thinkfix supports 3.10):
#:   python3.12 -m venv /tmp/kimi && /tmp/kimi/bin/pip install kimi-cli
#:   THINKFIX_KIMI_PYTHON=/tmp/kimi/bin/python pytest tests/formats/test_kimi_cli.py
KIMI_PYTHON = os.environ.get("THINKFIX_KIMI_PYTHON", "")


@pytest.mark.skipif(not KIMI_PYTHON, reason="THINKFIX_KIMI_PYTHON names no Kimi CLI interpreter")
def test_kimi_cli_restores_the_repaired_context_itself(tmp_path: Path) -> None:
    """Kimi CLI's own `Context.restore` (what `kimi --continue` runs) reads the repaired file:
    the same messages, checkpoints and token count; the text without the reasoning, which
    its Kimi provider now sends as `reasoning_content`."""
    records = read(FMT, DATA)
    found = sites(FMT, records)
    repaired = repair(
        FMT,
        DATA,
        [
            Repair(
                site_at(found, 4), "Your server is returning the raw reasoning.", ("Parser off.",)
            ),
            Repair(site_at(found, 8), "Reading `serve.toml` now.", ("Need the flags.",)),
        ],
    )
    fixed = tmp_path / "context.jsonl"
    fixed.write_bytes(repaired.data)
    script = Path(__file__).with_name("kimi_restore.py")
    run = subprocess.run(
        [KIMI_PYTHON, str(script), str(LEAKY), str(fixed)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    before, after = json.loads(run.stdout)
    for key in ("token_count", "checkpoints", "system_prompt"):
        assert before[key] == after[key]
    assert [m["role"] for m in before["messages"]] == [m["role"] for m in after["messages"]]
    changed = [(old, new) for old, new in zip(before["messages"], after["messages"]) if old != new]
    assert [new["content"] for _, new in changed] == [
        "Your server is returning the raw reasoning.",
        "Reading `serve.toml` now.",
    ]
    assert changed[0][1]["reasoning_content"] == "Parser off."
    assert changed[1][1]["reasoning_content"].endswith("emits.\n\nNeed the flags.")
    assert changed[1][1]["tool_calls"] == changed[1][0]["tool_calls"]
