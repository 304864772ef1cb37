"""Every option the CLI advertises is one it accepts (issue 14 #8: `thinkfix formats` named
`--codex-mode insert`, which repair rejected)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.engine.conftest import FIXTURES
from thinkfix.cli import main

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])(?:[ =]([a-z][a-z0-9-]*))?")


def _options() -> dict[str, click.Option]:
    """Every option of every command (and of the group), by each of its names."""
    out: dict[str, click.Option] = {}
    for command in [main, *main.commands.values()]:
        for param in command.get_params(click.Context(command)):  # --help too
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    out[name] = param
    return out


def _texts() -> dict[str, str]:
    runner = CliRunner()
    texts = {
        # the terminal's width decides where the text wraps: the narrowest it allows, and wide
        # (a wrap at a hyphen once cut `--claude-code-mode` to `--claude` at 80 columns only)
        **{
            f"formats at {columns} columns": runner.invoke(
                main, ["formats"], env={"COLUMNS": str(columns)}
            ).stdout
            for columns in (60, 80, 200)
        },
        "formats --json": runner.invoke(main, ["formats", "--json"]).stdout,
        "--help": runner.invoke(main, ["--help"]).stdout,
    }
    for name in main.commands:
        texts[f"{name} --help"] = runner.invoke(main, [name, "--help"]).stdout
    return texts


def test_every_option_named_in_formats_and_help_texts_exists() -> None:
    options = _options()
    named = {(where, m[1]) for where, text in _texts().items() for m in OPTION.finditer(text)}
    assert named, "the texts name options"
    unknown = sorted((where, name) for where, name in named if name not in options)
    assert unknown == []


def test_every_value_advertised_for_a_choice_option_is_a_choice() -> None:
    options = _options()
    checked = 0
    for where, text in _texts().items():
        for m in OPTION.finditer(text):
            option = options.get(m[1])
            if option is None or not isinstance(option.type, click.Choice) or not m[2]:
                continue
            # "--codex-mode insert" in prose, "--redact=all" in help: the value must be allowed.
            if m[2] in option.type.choices or "=" in m[0] or where.startswith("formats"):
                assert m[2] in option.type.choices, (where, m[0])
                checked += 1
    assert checked, "some option is advertised with a value"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--codex-mode", "insert"),
        ("--codex-mode", "sidecar"),
        ("--anthropic-mode", "manifest"),
        ("--claude-code-mode", "archive"),
    ],
)
def test_placement_modes_reach_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str, value: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["repair", "--isolated", "--check", option, value, str(FIXTURES)]
    )
    assert result.exit_code in (0, 1), result.stderr


def test_codex_mode_from_the_config_file_changes_the_placement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    codex = str(FIXTURES / "codex")
    (tmp_path / "thinkfix.toml").write_text('codex-mode = "sidecar"\n')
    by_config = runner.invoke(main, ["diff", "--output-format", "json", codex]).stdout
    by_flag = runner.invoke(
        main, ["diff", "--isolated", "--codex-mode", "sidecar", "--output-format", "json", codex]
    ).stdout
    default = runner.invoke(main, ["diff", "--isolated", "--output-format", "json", codex]).stdout
    assert by_config == by_flag
    assert '"sidecar"' in by_flag and by_flag != default
