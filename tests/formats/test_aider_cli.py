"""Aider through the commands: scan, repair in place and to `--out`, undo, diff, where."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.commands import invoke
from tests.formats.aider_history import FIXTURES, History
from tests.formats.support import FIXTURES as ROOT
from thinkfix.engine.inputs.discover import discover
from thinkfix.formats.registry import detect_file

NAME = ".aider.chat.history.md"
LEAKING = ROOT / "aider" / "leaking" / NAME


pytestmark = pytest.mark.usefixtures("isolated_cli")


def repos(tmp_path: Path) -> Path:
    root = tmp_path / "repos"
    shutil.copytree(ROOT / "aider", root)
    return root


def test_aider_fixtures_are_what_the_writer_port_writes() -> None:
    for name, build in FIXTURES.items():
        assert (ROOT / "aider" / name / NAME).read_text("utf-8") == build()


def test_aider_scan_finds_the_answer_leaks_by_day_and_model(tmp_path: Path) -> None:
    result = invoke("scan", "--output-format", "json", str(repos(tmp_path)))
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    summary = report["summary"]
    assert summary["files"] == 3 and summary["by_format"]["aider"]["assistant_messages"] == 8
    found = [(f["line"], f["kind"], f["model"]) for f in report["findings"]]
    assert found == [
        (12, "block", "ollama_chat/qwen3:32b"),
        (33, "orphan_close", "ollama_chat/qwen3:32b"),
        (59, "duplicate", "deepseek/deepseek-reasoner"),
        (66, "block", "deepseek/deepseek-reasoner"),
    ]
    days = {day: d["assistant_messages"] for day, d in summary["by_day"].items()}
    assert days == {"2026-03-02": 2, "2026-03-03": 2, "2026-03-04": 2, "2026-03-05": 2}


def test_aider_repair_in_place_then_undo_restores_bytes(tmp_path: Path) -> None:
    root = repos(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob(NAME)}
    result = invoke("repair", "--in-place", str(root))
    assert result.exit_code == 0, result.stderr
    assert "repaired 4 messages in 1 file" in result.stderr
    assert invoke("scan", str(root)).exit_code == 0
    changed = root / "leaking" / NAME
    assert changed.read_bytes() != before[changed]
    manifest = result.stderr.split("undo with: thinkfix undo ")[1].split("\n")[0]
    undone = invoke("undo", manifest)
    assert undone.exit_code == 0, undone.stderr
    assert {p: p.read_bytes() for p in root.rglob(NAME)} == before


def test_aider_repair_out_writes_a_copy_and_keeps_the_reasoning_in_the_manifest(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    result = invoke("repair", "--out", str(out), str(LEAKING))
    assert result.exit_code == 0, result.stderr
    assert LEAKING.read_bytes() != (out / NAME).read_bytes()
    manifest = json.loads(
        Path(result.stderr.split("undo with: thinkfix undo ")[1].split("\n")[0]).read_text()
    )
    text = json.dumps(manifest)
    assert "I should check config.py" in text and '"manifest"' in text
    assert "I should check config.py" not in (out / NAME).read_text()


def test_aider_diff_shows_each_changed_reply(tmp_path: Path) -> None:
    result = invoke("diff", "--output-format", "json", str(LEAKING))
    assert result.exit_code == 1
    messages = json.loads(result.stdout)["messages"]
    assert [(m["line"], m["placement"]["kind"]) for m in messages] == [
        (12, "manifest"),
        (33, "manifest"),
        (59, "none"),
        (66, "manifest"),
    ]
    assert messages[-1]["after"] == (
        "The timeout is 30 seconds. It is set in `config.py` as `TIMEOUT`."
    )
    unified = invoke("repair", "--diff", str(LEAKING))
    assert "-<think>The loop retries three times with backoff.</think>" in unified.stdout


def test_aider_is_detected_renamed_and_a_look_alike_is_not(tmp_path: Path) -> None:
    renamed = tmp_path / "history.txt"
    shutil.copyfile(LEAKING, renamed)
    assert detect_file(str(renamed)).id == "aider"
    notes = tmp_path / NAME
    notes.write_text("# Notes\n\n#### not a prompt\n\n> a quote\n")
    assert invoke("scan", str(notes)).exit_code == 2


def test_aider_where_names_the_history_in_the_git_root_and_the_override(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    h = History()
    h.start("2026-03-02 10:21:07")
    (repo / NAME).write_text(h.text)
    env = {"PWD": str(repo / "src")}
    assert discover(env=env, home=tmp_path) == [str(repo / NAME)]
    elsewhere = tmp_path / "kept.md"
    elsewhere.write_text(h.text)
    found = discover(env={**env, "AIDER_CHAT_HISTORY_FILE": str(elsewhere)}, home=tmp_path)
    assert found == [str(elsewhere), str(repo / NAME)]
