"""`thinkfix show`: exit codes, stdout for the transcript, stderr for messages."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from tests.formats.support import leaking_fixtures
from thinkfix.cli import main
from thinkfix.cli import show as show_module

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
DATA = REPO / "tests" / "data" / "transcript"
GLM = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
LEAK = "The deploy script is scripts/deploy.sh. I need to parse a new flag"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["show", *args])
    return result.exit_code, result.stdout, result.stderr


def test_show_normalized_shows_a_leak_as_collapsed_thinking() -> None:
    code, out, err = run(str(GLM), "--normalized", "--width", "200")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    thinking = [line for line in lines if line.startswith("▸ thinking")]
    assert thinking[0].startswith(f"▸ thinking (recovered from leaked text): {LEAK}")
    visible = [line for line in lines if not line.startswith(("▸", "→", "  ⎿"))]
    assert not any(LEAK in line or "<think>" in line for line in visible)
    assert (
        "I'll add a `--dry-run` flag that prints the rsync command instead of running it." in lines
    )


def test_show_without_normalized_shows_the_leak_as_stored() -> None:
    code, out, _ = run(str(GLM), "--width", "200")
    assert code == 0
    assert f"<think>\n{LEAK}" in out and "recovered" not in out


@pytest.mark.parametrize("path", leaking_fixtures(), ids=lambda p: p.parent.name)
def test_show_every_fixture_recovers_thinking_when_normalized(path: Path) -> None:
    code, out, err = run(str(path), "--normalized", "--no-pager")
    assert (code, err) == (0, "")
    stored = run(str(path), "--no-pager")[1]
    # Recovered, or (OpenCode's MiniMax part: the leak repeats the reasoning part beside
    # it, so nothing is new to recover) at least gone from the visible text.
    assert "(recovered from leaked text)" in out or ("</think>" in stored and "</think>" not in out)
    assert "\x1b[" not in out  # piped output carries no colour codes


def test_show_delimited_is_the_contract_byte_for_byte() -> None:
    code, out, err = run(str(DATA / "claude_code.jsonl"), "--normalized", "--thinking", "delimited")
    assert (code, err) == (0, "")
    assert out == (
        "### system · summary · line 1\n\nFlaky date test\n\n"
        "### user · 2026-04-01 08:00:00 · line 3\n\n"
        "Why does test_dates fail at midnight? Our parser emits <think> markers.\n\n"
        "### assistant · claude-sonnet-4-5-20250929 · 2026-04-01 08:00:03 · lines 4-6\n\n"
        "---\nMidnight suggests a timezone bug.\nCheck the fixture clock.\n\n"
        "The test uses local time.\nIt should use UTC.\n---\n\n"
        "Let me run the date tests.\n\n"
        '→ Bash(command="pytest tests/test_dates.py", description="Run the date tests")\n\n'
        "⎿ ✗ Bash: FAILED test_midnight - assert '23:59' == '00:00'… (+1 line)\n\n"
        "### assistant · claude-sonnet-4-5-20250929 · 2026-04-01 08:00:12 · line 8\n\n"
        "The fixture clock is local; I'll pin it to UTC.\n\n"
        "### user · 2026-04-01 08:01:00 · line 10\n\nAnd the other failures?\n\n"
        "### assistant · claude-sonnet-4-5-20250929 · stop: max_tokens · 2026-04-01 08:01:04"
        " · line 11\n\n"
        "---\nThere are two more tests that touch the clock. I need to\n---\n\n"
        "### system · api_error · 2026-04-01 08:01:04 · line 12\n\n"
        "Response was truncated (max_tokens).\n"
    )


def test_show_delimited_without_normalized_keeps_leaks_in_the_text() -> None:
    _, out, _ = run(str(DATA / "claude_code.jsonl"), "--thinking", "delimited")
    assert "---\nMidnight suggests a timezone bug.\nCheck the fixture clock.\n---\n\n<think>" in out


@pytest.mark.parametrize(
    ("view", "present", "absent"),
    [
        (
            "collapsed",
            ["▸ thinking (signed): Midnight suggests a timezone bug.… (+1 line)"],
            ["Check the fixture clock."],
        ),
        (
            "expanded",
            [
                "▾ thinking (signed)",
                "  Midnight suggests a timezone bug.",
                "  Check the fixture clock.",
            ],
            ["▸ thinking"],
        ),
        ("hidden", [], ["thinking", "Midnight", "Check the fixture clock."]),
    ],
)
def test_show_thinking_views(view: str, present: list[str], absent: list[str]) -> None:
    code, out, err = run(str(DATA / "claude_code.jsonl"), "--thinking", view, "--width", "100")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert all(p in lines for p in present), lines
    assert not any(a in out for a in absent)
    assert "Let me run the date tests." in out


def test_show_format_override() -> None:
    code, out, _ = run(str(DATA / "openai_chat.json"), "--format", "openai-chat")
    assert code == 0 and "assistant · deepseek-reasoner · messages[2]" in out


def test_show_missing_file_exits_2_with_a_message_on_stderr() -> None:
    code, out, err = run(str(DATA / "missing.jsonl"))
    assert (code, out) == (2, "")
    assert err.startswith("thinkfix: error: ") and "missing.jsonl: cannot read" in err


def test_show_unknown_format_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"theme": "dark"}\n')
    code, out, err = run(str(path))
    assert (code, out) == (2, "")
    assert "not a known session format" in err


def test_show_directory_exits_2() -> None:
    code, out, err = run(str(DATA))
    assert (code, out) == (2, "") and "is a directory" in err


def test_show_unknown_option_value_is_a_usage_error() -> None:
    code, out, err = run(str(GLM), "--thinking", "folded")
    assert (code, out) == (2, "") and "folded" in err


def test_show_damaged_lines_are_named_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(GLM.read_bytes() + b'{"type":"assistant","message":{"rol')
    code, out, err = run(str(path))
    assert code == 0 and "Add a --dry-run flag" in out
    assert err.startswith(f"thinkfix show: {path}: line 10: truncated")
    assert err.rstrip().endswith("(left out)")


def test_show_no_turns_says_so_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "meta-only.jsonl"
    path.write_text(
        '{"created_at_ms":1,"session_id":"s","type":"session_meta","updated_at_ms":1,"version":1}\n'
    )
    code, out, err = run(str(path))
    assert (code, out) == (0, "") and "no turns to show" in err


@contextlib.contextmanager
def _recording(calls: list[str]) -> Iterator[None]:
    calls.append("paged")
    yield


@pytest.mark.parametrize(
    ("tty", "flags", "paged"),
    [
        (True, [], True),
        (True, ["--thinking", "delimited"], True),
        (True, ["--no-pager"], False),
        (False, [], False),
    ],
)
def test_show_pages_long_output_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tty: bool, flags: list[str], paged: bool
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(show_module, "_is_terminal", lambda: tty)
    monkeypatch.setattr(Console, "pager", lambda self, **kw: _recording(calls))
    monkeypatch.setenv("LINES", "5")
    code, out, _ = run(str(GLM), *flags)
    assert code == 0 and "Add a --dry-run flag" in out
    assert calls == (["paged"] if paged else [])


def test_show_short_output_is_not_paged(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(show_module, "_is_terminal", lambda: True)
    monkeypatch.setattr(Console, "pager", lambda self, **kw: _recording(calls))
    monkeypatch.setenv("LINES", "500")
    assert run(str(DATA / "claw_code_legacy.json"))[0] == 0
    assert calls == []
