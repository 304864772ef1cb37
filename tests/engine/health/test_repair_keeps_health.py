"""#28 item 3: a reasoning-leak repair never makes a session fail a check its original passed.

Over every fixture of every format and every health data file, and over generated sessions
(leaks beside tool calls, signed thinking blocks, calls left open), each repaired with the
default placement: no (problem, subject) pair is found more often after the repair than
before. The one placement that does break a check is shown breaking it: Claude Code's
`archive` mode writes an unsigned thinking block, which `signature` reports.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import FIXTURES, fixture_files, run, session_unit
from tests.formats.support import side_files
from thinkfix.engine.health.model import ALL_CHECKS
from thinkfix.engine.health.run import check_file
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report.health import Problem
from thinkfix.formats import registry
from thinkfix.formats.repairs import ApplyOptions, ClaudeCodeMode, CodexMode

DATA = Path(__file__).resolve().parents[2] / "data" / "health"
HEALTH_FILES = sorted(
    p for p in DATA.rglob("*") if p.is_file() and p.name not in ("expected.json", "README.md")
)

Key = tuple[Problem, str]


def _health(path: Path, fmt_id: str) -> Counter[Key]:
    found = check_file(str(path), registry.get(fmt_id), ALL_CHECKS).findings
    return Counter((f.problem, f.detail) for f in found)


def _repaired(source: Path, tmp: Path, **kw: Any) -> tuple[Counter[Key], Counter[Key], bool]:
    """The health of a copy of `source` (at the same relative path: some formats are told by
    their folders) before and after a repair in place."""
    work = _copy(source, tmp / "work")
    fmt_id = registry.detect_file(str(work)).id
    before = _health(work, fmt_id)
    result = run([work], WriteMode.IN_PLACE, tmp / "run", **kw)
    changed = any(f.status is FileStatus.REPAIRED for f in result.files)
    return before, _health(work, fmt_id), changed


def _copy(source: Path, dest: Path) -> Path:
    """`source` copied under `dest` with its store (OpenCode's file store) or side files."""
    root = FIXTURES if source.is_relative_to(FIXTURES) else DATA
    unit = session_unit(source) if root is FIXTURES else source
    target = dest / source.relative_to(root)
    if unit != source:
        shutil.copytree(unit, dest / unit.relative_to(root))
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    for part in [source, *side_files(source)]:
        shutil.copy2(part, target.with_name(part.name))
    return target


def _new(before: Counter[Key], after: Counter[Key]) -> Counter[Key]:
    return after - before


@pytest.mark.parametrize(
    "source",
    [*fixture_files(), *HEALTH_FILES],
    ids=lambda p: str(p.relative_to(FIXTURES if p.is_relative_to(FIXTURES) else DATA)),
)
def test_repair_of_every_fixture_passes_every_check_the_original_passed(
    source: Path, tmp_path: Path
) -> None:
    before, after, _ = _repaired(source, tmp_path)
    assert _new(before, after) == Counter()


def test_the_fixtures_repair_at_all() -> None:
    """The property above is not vacuous: most fixtures are changed by their repair."""
    changed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, source in enumerate(fixture_files()):
            changed += _repaired(source, Path(tmp) / str(i))[2]
    assert changed >= 30


# --- generated sessions -------------------------------------------------------------------

LEAKS = st.sampled_from(
    [
        "<think>\nplan the call\n</think>\n\nRunning it.",
        "plan only\n</think>\n\nDone.",
        "<thinking>all reasoning</thinking>",
        "Answer with `<think>` in code.",
        "plain answer",
    ]
)
SIG = "EpYBCkYIBxgCKkAx9mQ2vT7rL1kW5pZ3hJ8fD0sG6aQ4eU2bX9cV7nM1tK5oI3rE8wP2yS6lZ0jH4gF9dA7uB1xC3vN5mT8qLEgw"
#: One assistant turn: its text, whether a tool call follows it (and is answered), and
#: whether a signed thinking block precedes it.
TURNS = st.lists(
    st.tuples(LEAKS, st.sampled_from(["none", "answered", "open"]), st.booleans()),
    min_size=1,
    max_size=5,
)


def _claude(turns: list[tuple[str, str, bool]]) -> bytes:
    lines: list[dict[str, Any]] = [
        {
            "parentUuid": None,
            "sessionId": "s",
            "version": "2.1.32",
            "type": "user",
            "message": {"role": "user", "content": "go"},
            "uuid": "u0",
        }
    ]
    for i, (text, call, signed) in enumerate(turns):
        content: list[dict[str, Any]] = []
        if signed:
            content.append({"type": "thinking", "thinking": "", "signature": f"{SIG}{i}"})
        content.append({"type": "text", "text": text})
        if call != "none":
            content.append(
                {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}
            )
        lines.append(
            {
                "parentUuid": lines[-1]["uuid"],
                "sessionId": "s",
                "version": "2.1.32",
                "type": "assistant",
                "message": {
                    "model": "claude-sonnet-4-5",
                    "id": f"msg_{i}",
                    "type": "message",
                    "role": "assistant",
                    "content": content,
                },
                "uuid": f"a{i}",
            }
        )
        if call == "answered":
            lines.append(
                {
                    "parentUuid": f"a{i}",
                    "sessionId": "s",
                    "version": "2.1.32",
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "ok"}
                        ],
                    },
                    "uuid": f"r{i}",
                }
            )
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _codex(turns: list[tuple[str, str, bool]]) -> bytes:
    lines: list[dict[str, Any]] = [
        {
            "timestamp": "2026-03-05T08:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": "c1",
                "cwd": "/",
                "originator": "codex_cli_rs",
                "cli_version": "0.98.0",
                "model_provider": "ollama",
            },
        },
        {
            "timestamp": "2026-03-05T08:00:01.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "go"}],
            },
        },
    ]
    for i, (text, call, _) in enumerate(turns):
        lines.append(
            {
                "timestamp": "2026-03-05T08:00:02.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                },
            }
        )
        if call != "none":
            lines.append(
                {
                    "timestamp": "2026-03-05T08:00:03.000Z",
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": "{}",
                        "call_id": f"call_{i}",
                    },
                }
            )
        if call == "answered":
            lines.append(
                {
                    "timestamp": "2026-03-05T08:00:04.000Z",
                    "type": "response_item",
                    "payload": {
                        "type": "function_call_output",
                        "call_id": f"call_{i}",
                        "output": "ok",
                    },
                }
            )
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _pi(turns: list[tuple[str, str, bool]]) -> bytes:
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "p1",
            "timestamp": "2026-01-20T09:00:00.000Z",
            "cwd": "/",
        }
    ]
    for i, (text, call, signed) in enumerate(turns):
        content: list[dict[str, Any]] = []
        if signed:
            content.append({"type": "thinking", "thinking": "x", "thinkingSignature": f"{SIG}{i}"})
        content.append({"type": "text", "text": text})
        if call != "none":
            content.append({"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {}})
        lines.append(
            {
                "type": "message",
                "id": f"a{i}",
                "parentId": None,
                "timestamp": "2026-01-20T09:00:01.000Z",
                "message": {
                    "role": "assistant",
                    "content": content,
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "stopReason": "stop",
                    "timestamp": 1,
                },
            }
        )
        if call == "answered":
            lines.append(
                {
                    "type": "message",
                    "id": f"r{i}",
                    "parentId": f"a{i}",
                    "timestamp": "2026-01-20T09:00:02.000Z",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": f"call_{i}",
                        "toolName": "read",
                        "content": [{"type": "text", "text": "ok"}],
                        "isError": False,
                        "timestamp": 2,
                    },
                }
            )
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


MAKERS = {
    "claude-code": (_claude, "s.jsonl"),
    "codex": (_codex, "rollout-2026-03-05T08-00-00-c1.jsonl"),
    "pi": (_pi, "2026-01-20T09-00-00-000Z_p1.jsonl"),
}
OPTIONS = {
    "claude-code": [ApplyOptions(), ApplyOptions(claude_code_mode=ClaudeCodeMode.ANNOTATE)],
    "codex": [ApplyOptions(), ApplyOptions(codex_mode=CodexMode.INSERT)],
    "pi": [ApplyOptions()],
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(sorted(MAKERS)), turns=TURNS, pick=st.integers(0, 1))
def test_repair_of_generated_sessions_keeps_their_health(
    fmt: str, turns: list[tuple[str, str, bool]], pick: int
) -> None:
    make, name = MAKERS[fmt]
    apply = OPTIONS[fmt][pick % len(OPTIONS[fmt])]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "s" / name
        work.parent.mkdir()
        work.write_bytes(make(turns))
        assert registry.detect_file(str(work)).id == fmt
        before = _health(work, fmt)
        run([work], WriteMode.IN_PLACE, Path(tmp) / "run", apply=apply)
        assert _new(before, _health(work, fmt)) == Counter()


def test_archive_mode_is_the_placement_that_breaks_resume(tmp_path: Path) -> None:
    """The checks have teeth: Claude Code's `archive` placement writes an unsigned thinking
    block (the session can no longer be resumed, as its help says), and `signature` sees it."""
    work = tmp_path / "s" / "s.jsonl"
    work.parent.mkdir()
    work.write_bytes(_claude([("<think>\nplan\n</think>\n\nDone.", "none", False)]))
    before = _health(work, "claude-code")
    run(
        [work],
        WriteMode.IN_PLACE,
        tmp_path / "run",
        apply=ApplyOptions(claude_code_mode=ClaudeCodeMode.ARCHIVE),
    )
    assert _new(before, _health(work, "claude-code")) == Counter(
        {(Problem.MISSING_SIGNATURE, ""): 1}
    )
