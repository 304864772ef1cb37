"""One spelling of a flag across commands (#27 item 7): every command that prints a report
takes `--output-format` (scan's and diff's spelling; `--json` stays as a hidden alias), and
`repair --report` takes scan's `FORMAT=PATH` as well as a bare path."""

from __future__ import annotations

import json
from pathlib import Path
from unittest.mock import patch

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.cli import main
from thinkfix.cli.settings import RedactCommand

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CAPTURE = FIXTURES / "streams" / "vllm_qwen3_think_leak.sse"

#: Every command whose report is text or one JSON document, with arguments that give one.
COMMANDS = {
    "formats": ([], None),
    "where": ([], None),
    "normalize": ([], "<think>plan</think>Answer."),
    "replay": ([str(CAPTURE)], None),
}


def _invoke(args: list[str], stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, input=stdin, env={"HOME": "/nonexistent-home"})
    return result.exit_code, result.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_output_format_json_is_the_json_document(command: str) -> None:
    args, stdin = COMMANDS[command]
    code, out = _invoke([command, "--output-format", "json", *args], stdin)
    alias_code, alias_out = _invoke([command, "--json", *args], stdin)
    text_code, text_out = _invoke([command, "--output-format", "text", *args], stdin)
    plain_code, plain_out = _invoke([command, *args], stdin)
    assert json.loads(out)["schema_version"] >= 1
    assert (code, out) == (alias_code, alias_out)
    assert (text_code, text_out) == (plain_code, plain_out) and text_out != out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_names_output_format_and_hides_the_alias(command: str) -> None:
    _, out = _invoke([command, "--help"])
    assert "--output-format [text|json]" in out and "--json" not in out


@pytest.mark.parametrize("fmt", ["html", "markdown", "json", "text"])
def test_repair_report_takes_scans_format_equals_path(tmp_path: Path, fmt: str) -> None:
    session = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
    spelled = tmp_path / f"spelled-{fmt}.out"
    named = tmp_path / "named.out"
    base = ["repair", "--dry-run", "--isolated", str(session)]
    _invoke([*base, "--report", f"{fmt}={spelled}"])
    _invoke([*base, "--report", str(named), "--report-format", fmt])
    assert spelled.read_bytes() == named.read_bytes() != b""


def test_a_path_holding_an_equals_sign_is_still_a_path(tmp_path: Path) -> None:
    session = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
    odd = tmp_path / "a=b.html"
    _invoke(["repair", "--dry-run", "--isolated", str(session), "--report", str(odd)])
    assert odd.read_text("utf-8").startswith("<!DOCTYPE html>")


LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "--isolated", str(LEAKY)],
        ["diff", "--isolated", str(LEAKY)],
        ["show", "--no-pager", str(LEAKY)],
    ],
    ids=lambda a: a[0],
)
def test_color_is_one_flag_on_every_command_that_prints_colour(args: list[str]) -> None:
    """scan alone took --color; diff and show coloured a terminal with no way to force or
    refuse it (a pipe here: colour only when asked)."""
    runner = CliRunner()
    forced = runner.invoke(main, [args[0], "--color", *args[1:]]).stdout
    refused = runner.invoke(main, [args[0], "--no-color", *args[1:]]).stdout
    plain = runner.invoke(main, args).stdout
    assert "\x1b[" in forced
    assert "\x1b[" not in refused and "\x1b[" not in plain


def test_quiet_prints_no_summary_box() -> None:
    """`-q`'s help promises no summary lines; the box of counts was still printed."""
    runner = CliRunner()
    loud = runner.invoke(main, ["scan", "--isolated", str(LEAKY)]).stdout
    quiet = runner.invoke(main, ["scan", "--isolated", "-q", str(LEAKY)]).stdout
    assert "Findings" in loud and "Findings" not in quiet
    assert loud.strip().splitlines()[-1] == quiet.strip().splitlines()[-1]  # the verdict stays


@pytest.mark.parametrize("fmt", ["concise", "github"])
def test_statistics_with_a_one_line_per_finding_output_is_refused(fmt: str) -> None:
    result = CliRunner().invoke(
        main, ["scan", "--isolated", "--statistics", "--output-format", fmt, str(LEAKY)]
    )
    assert result.exit_code == 2 and "--statistics" in result.stderr and fmt in result.stderr


def _toy(cls: type[click.Command]) -> click.Command:
    """A command with each kind of option: a short flag, a value-taking short option, a
    counter, a flag pair with a short secondary, and paths."""

    @click.command(cls=cls)
    @click.option("-q", "--quiet", is_flag=True)
    @click.option("-x", "--exclude", multiple=True)
    @click.option("-v", "--verbose", count=True)
    @click.option("--color/--no-color", " /-C", default=None)
    @click.argument("paths", nargs=-1)
    def toy(**values: object) -> None:
        click.echo(json.dumps(values, sort_keys=True))

    return toy


_TOKENS = ["-q", "--quiet", "-x", "--exclude", "-v", "-C", "--color", "-qv", "-vq", "--", "-y"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from([*_TOKENS, "a", "-q=1", "--exclude=-q"]), max_size=6))
def test_a_short_flag_reaches_click_by_its_long_name_with_the_same_answer(
    args: list[str],
) -> None:
    """#26 item 3: `-q` alone is given to click as `--quiet`, which skips click's difflib
    ranking of every long option (a suggestion for a failed long-option try nobody sees);
    an option's value (`-x -q`), an argument after `--` and run-together flags (`-qv`) go as
    typed, and every answer and error is click's own."""
    runner = CliRunner()
    ours = runner.invoke(_toy(RedactCommand), args)
    clicks = runner.invoke(_toy(click.Command), args)
    assert (ours.exit_code, ours.output) == (clicks.exit_code, clicks.output)


def test_a_scan_with_short_flags_ranks_no_option_names(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    answer = {"role": "assistant", "model": "m", "content": [{"type": "text", "text": "Done."}]}
    session.write_text(
        json.dumps({"type": "user", "uuid": "u", "message": {"role": "user", "content": "Go"}})
        + "\n"
        + json.dumps({"type": "assistant", "uuid": "a", "parentUuid": "u", "message": answer})
        + "\n"
    )
    with patch("difflib.get_close_matches", side_effect=AssertionError("ranked")):
        short = CliRunner().invoke(main, ["scan", "--isolated", "-q", str(session)])
        long = CliRunner().invoke(main, ["scan", "--isolated", "--quiet", str(session)])
    assert (short.exit_code, short.stdout) == (long.exit_code, long.stdout)
    assert short.exit_code == 0 and short.stdout.count("\n") == 1
