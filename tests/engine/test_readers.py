"""A repaired session must still read the same in a reader that is not ours (issue 10).

claude-code-log (PyPI) renders Claude Code transcripts to HTML: one `message` element
per rendered entry, with each assistant entry's token usage beside it. It drops an
assistant entry whose only block is an empty text (with its usage: output 752 -> 564 on
the GLM fixture), which is what repair used to write for an all-reasoning message. Here
the fixtures are repaired and rendered before and after: the same messages and the same
usage, and in archive mode the moved reasoning is shown as thinking. The ccusage-style
totals (`message.usage` summed once per API message) are checked without the tool.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.engine.repair_helpers import FIXTURES
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.formats.repairs import ApplyOptions

CLAUDE_CODE = sorted((FIXTURES / "claude-code").glob("*.jsonl"))
MODES = ["resumable", "archive", "annotate"]

_MESSAGE = re.compile(r"class='message ([a-z-]+)")
_USAGE = re.compile(r"class='token-usage'>([^<]*)<")


def _repaired(tmp_path: Path, source: Path, mode: str) -> tuple[Path, list[str]]:
    """The repaired copy, and the reasoning segments that went into it."""
    out = tmp_path / mode
    result = repair_paths(
        [str(source)],
        RepairOptions(
            mode=WriteMode.OUT,
            out_dir=str(out),
            run_dir=str(tmp_path / f"run-{mode}"),
            apply=ApplyOptions(claude_code_mode=mode),
            jobs=1,
        ),
    )
    assert not result.all_errors, result.all_errors
    placed = [
        s
        for c in result.changes
        if c.applied and c.placement.kind.value == "block"
        for s in c.extracted
    ]
    return out / source.name, placed


def _plain(page: str) -> str:
    """The page's text, whitespace squashed (to find a passage whatever its markup)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _render(tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """claude-code-log's HTML for one transcript (no cache, nothing written outside tmp)."""
    converter = pytest.importorskip("claude_code_log.converter")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = tmp_path / f"render-{len(list(tmp_path.glob('render-*')))}"
    folder.mkdir()
    copy = folder / source.name
    copy.write_bytes(source.read_bytes())
    out = folder / "out.html"
    converter.convert_jsonl_to(
        "html",
        copy,
        out,
        use_cache=False,
        update_cache=False,
        silent=True,
        generate_individual_sessions=False,
    )
    return out.read_text("utf-8")


def _shown(page: str) -> Counter[str]:
    """Rendered entries by kind (assistant, user, tool, thinking, ...)."""
    return Counter(_MESSAGE.findall(page))


def _usage_totals(path: Path) -> Counter[str]:
    """ccusage's rule: each API message's `message.usage` once (lines share message.id)."""
    totals: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    for line in path.read_text("utf-8").splitlines():
        entry = json.loads(line) if line.strip() else {}
        message = entry.get("message") if entry.get("type") == "assistant" else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if not isinstance(usage, dict):
            continue
        key = (str(message.get("id")), str(entry.get("requestId")))
        if key in seen:
            continue
        seen.add(key)
        totals.update({k: v for k, v in usage.items() if isinstance(v, int)})
    return totals


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("source", CLAUDE_CODE, ids=lambda p: p.name[:8])
def test_claude_code_log_reads_the_repaired_transcript_like_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path, mode: str
) -> None:
    repaired, placed = _repaired(tmp_path, source, mode)
    before = _render(tmp_path, source, monkeypatch)
    after = _render(tmp_path, repaired, monkeypatch)
    shown_before, shown_after = _shown(before), _shown(after)
    added_thinking = shown_after.pop("thinking", 0) - shown_before.pop("thinking", 0)
    assert shown_after == shown_before  # no message dropped (an empty text would be)
    assert Counter(_USAGE.findall(after)) == Counter(_USAGE.findall(before))
    assert _usage_totals(repaired) == _usage_totals(source)
    if mode == "archive":
        # The moved reasoning is shown as thinking: every segment placed in the file,
        # the all-reasoning message's included (behind its placeholder text).
        assert placed and added_thinking > 0
        text = _plain(after)
        for segment in placed:
            assert " ".join(segment.split()[:6]) in text
        if source.name.startswith("2e8b4f60"):
            assert "[thinkfix: this message was all reasoning" in text
            assert "The README has a Usage section" in text
    else:
        assert added_thinking == 0 and not placed


def test_claude_code_log_drops_an_empty_text_message_with_its_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why repair never writes one: the shape repair used to write loses a message."""
    source = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
    lines = source.read_text("utf-8").split("\n")
    entry = json.loads(lines[7])
    entry["message"]["content"] = [{"type": "text", "text": ""}]
    lines[7] = json.dumps(entry)
    emptied = tmp_path / "emptied" / source.name
    emptied.parent.mkdir()
    emptied.write_text("\n".join(lines), "utf-8")
    before, after = _render(tmp_path, source, monkeypatch), _render(tmp_path, emptied, monkeypatch)
    assert _shown(after)["assistant"] == _shown(before)["assistant"] - 1

    def output(page: str) -> int:
        return sum(int(m) for m in re.findall(r"Output: (\d+)", " ".join(_USAGE.findall(page))))

    assert (output(before), output(after)) == (752, 564)


def _codex_entries(path: Path) -> list[tuple[str, str]]:
    """(kind, text) of what claude-code-log's Codex reader shows for a rollout."""
    codex = pytest.importorskip("claude_code_log.providers.codex")
    shown = []
    for entry in codex.CodexProvider().load_session_from_path(path):
        content = getattr(getattr(entry, "message", None), "content", None)
        for item in content if isinstance(content, list) else ():
            kind = type(item).__name__
            shown.append((kind, getattr(item, "thinking", None) or getattr(item, "text", "")))
    return shown


def test_claude_code_log_shows_the_reasoning_moved_in_a_codex_rollout(tmp_path: Path) -> None:
    # Viewers read a reasoning item's summary or the agent_reasoning event, never its
    # `content`: the event repair writes beside the item is what makes the reasoning show.
    source = next((FIXTURES / "codex").glob("rollout-2026-*.jsonl"))
    out = tmp_path / "out"
    result = repair_paths(
        [str(source)],
        RepairOptions(mode=WriteMode.OUT, out_dir=str(out), run_dir=str(tmp_path / "run"), jobs=1),
    )
    assert not result.all_errors
    repaired = out / source.name
    placed = [s for c in result.changes if c.placement.kind.value == "record" for s in c.extracted]
    before, after = _codex_entries(source), _codex_entries(repaired)
    thinking = [text for kind, text in after if kind == "ThinkingContent"]
    assert thinking == placed and len(placed) == 2
    assert [k for k, _ in after if k != "ThinkingContent"] == [k for k, _ in before]
    assert not any(
        "<think>" in text
        for kind, text in after
        if kind == "TextContent" and "`<think>`" not in text
    )
    # Without the events (a reasoning item alone, `summary: []`), nothing is shown.
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes(
        b"".join(
            line
            for line in repaired.read_bytes().splitlines(keepends=True)
            if b'"agent_reasoning"' not in line
        )
    )
    assert not [k for k, _ in _codex_entries(bare) if k == "ThinkingContent"]
