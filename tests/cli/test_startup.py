"""Start-up cost: a command imports only what it runs (#13 item 1).

A pre-commit hook pays `thinkfix scan`'s start-up on every commit, so the modules that
`scan --help` and `import thinkfix` load are pinned here, in a fresh interpreter.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import click
import pytest

from tests.processes import run_python
from thinkfix.cli import LAZY_COMMANDS, SUMMARIES, _LazyCommands, main

_ROOT = Path(__file__).resolve().parents[2]

#: Module prefixes no scan start-up may import: other commands' machinery and rich.
_NOT_FOR_SCAN = (
    "rich",
    "thinkfix.diffreport",
    "thinkfix.providers",
    "thinkfix.transcript",
    "thinkfix.engine.repair.driver",
    "thinkfix.engine.repair.one_file",
    "thinkfix.engine.diff",
    "thinkfix.cli.repair",
    "thinkfix.cli.repairing",
    "thinkfix.cli.diff",
    "thinkfix.cli.undo",
    "thinkfix.engine.commands.repair",
    "thinkfix.cli.replay",
    "thinkfix.cli.show",
    "thinkfix.cli.richbar",
    "thinkfix.reporters.text",
    "thinkfix.reporters.console",
)


def _modules_after(code: str) -> list[str]:
    """Module names loaded by `code` in a fresh interpreter run from the repository root."""
    probe = code + "\nimport json, sys\nsys.stdout.write('\\n' + json.dumps(sorted(sys.modules)))\n"
    done = run_python(probe, cwd=_ROOT)
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def _offending(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_scan_help_imports_no_other_commands_machinery_nor_rich() -> None:
    modules = _modules_after(
        "from thinkfix.cli import main\n"
        "try:\n    main(['scan', '--help'])\nexcept SystemExit:\n    pass"
    )
    assert "thinkfix.cli.scan" in modules
    assert _offending(modules, _NOT_FOR_SCAN) == []


def test_scan_json_imports_no_rich() -> None:
    modules = _modules_after(
        "from thinkfix.cli import main\n"
        "try:\n    main(['scan', '--output-format', 'json', '--no-progress', 'fixtures/pi'])\n"
        "except SystemExit:\n    pass"
    )
    assert "thinkfix.reporters.json" in modules
    assert _offending(modules, _NOT_FOR_SCAN) == []


def test_a_text_report_to_a_pipe_imports_no_rich() -> None:
    """`thinkfix scan FILE | cat`, a pre-commit hook's run: the default text report, with
    findings, goes to a pipe as plain writes (rich's console and tables cost ~25 ms)."""
    modules = _modules_after(
        "from thinkfix.cli import main\n"
        "try:\n    main(['scan', 'fixtures/claude-code/2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl'])\n"
        "except SystemExit:\n    pass"
    )
    assert "thinkfix.reporters.text" in modules
    not_for_text = [p for p in _NOT_FOR_SCAN if p != "thinkfix.reporters.text"]
    assert _offending(modules, (*not_for_text, "thinkfix.reporters.richwriter")) == []


def test_import_thinkfix_imports_no_rich_renderers_or_providers() -> None:
    modules = _modules_after("import thinkfix")
    assert (
        _offending(
            modules,
            (
                "rich",
                "thinkfix.diffreport",
                "thinkfix.providers",
                "thinkfix.reporters",
                "thinkfix.cli",
                "click",
            ),
        )
        == []
    )


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_every_lazy_command_loads_under_its_own_name(name: str) -> None:
    command = main.commands[name]
    assert command.name == name


def test_the_lazy_table_is_every_command_the_modules_define() -> None:
    """A command added to a module but not to LAZY_COMMANDS would silently vanish."""
    import importlib

    defined = {
        command.name
        for module in set(LAZY_COMMANDS.values())
        for command in importlib.import_module(f"thinkfix.cli.{module}").commands
    }
    assert defined == set(LAZY_COMMANDS)


def test_a_scan_of_one_clean_claude_code_file_loads_one_format_and_no_scanner(
    tmp_path: Path,
) -> None:
    """Detection stops at the first certain format and formats load on demand; the text
    scanner (and its grammar) loads only for a text that may hold a delimiter; no pool, no
    ignore-file matcher and no socket for a run that needs none of them."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(
        b'{"type":"assistant","uuid":"a","sessionId":"s","message":{"id":"m",'
        b'"type":"message","role":"assistant","model":"x","content":'
        b'[{"type":"text","text":"Done."}]}}\n'
    )
    modules = _modules_after(
        "from thinkfix.cli import main\n"
        f"try:\n    main(['scan', '--output-format', 'json', '--no-progress', {str(session)!r}])\n"
        "except SystemExit:\n    pass"
    )
    formats = [m for m in modules if m.startswith("thinkfix.formats.")]
    assert "thinkfix.formats.claude_code" in formats
    assert not {
        "thinkfix.formats.codex",
        "thinkfix.formats.pi",
        "thinkfix.formats.opencode",
        "thinkfix.formats.anthropic",
    } & set(formats)
    assert (
        _offending(
            modules,
            (
                "thinkfix.normalizer.scanner",
                "thinkfix.normalizer.pipeline",
                "multiprocessing",
                "concurrent.futures",
                "pathspec",
                "socket",
                # nor what only a crash, a terminal, stdin, a baseline, an output file, a
                # finding (hashes, secrets masked) or a default location needs
                "traceback",
                "shutil",
                "tempfile",
                "thinkfix.engine.telemetry.baseline",
                # nor what only a pool needs (a large file's byte-range pieces)
                "thinkfix.engine.scan.split",
                "thinkfix.io.filestate",
                "thinkfix.io.safewrite",
                "hashlib",
                "pathlib",
            ),
        )
        == []
    )


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"], []])
def test_version_and_help_import_no_engine_and_no_command(argv: list[str]) -> None:
    """`thinkfix --version` and `--help` are what a shell completion or a CI step's sanity
    check runs: they list the commands from SUMMARIES and import no command module, no
    engine, no normalizer and no format (#26 item 3); only click's texts (`clicktext`)."""
    modules = _modules_after(
        f"from thinkfix.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    )
    ours = [m for m in modules if m.startswith("thinkfix.")]
    assert ours == ["thinkfix._version", "thinkfix.cli", "thinkfix.cli.clicktext"]


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
@pytest.mark.parametrize("limit", [10, 30, 45, 60, 74, 100, 200])
def test_the_summaries_are_each_commands_short_help(name: str, limit: int) -> None:
    """`--help` lists a command not loaded yet from SUMMARIES: the same words click cuts
    from the command's own help, at any terminal width."""
    listed = click.Command(name, help=SUMMARIES[name])
    command = main.commands[name]
    assert not command.hidden and not command.deprecated
    assert listed.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_the_summaries_name_every_command() -> None:
    assert set(SUMMARIES) == set(LAZY_COMMANDS)


@pytest.mark.parametrize("width", [40, 80, 120])
def test_help_from_the_summaries_is_clicks_listing_of_the_loaded_commands(width: int) -> None:
    """The listing from SUMMARIES (a fresh lazy table: nothing loaded) is byte for byte the
    one click writes from the command objects themselves."""
    from click.testing import CliRunner

    lazy = copy.copy(main)
    lazy.commands = _LazyCommands(LAZY_COMMANDS)
    plain = copy.copy(main)
    plain.commands = {name: main.commands[name] for name in LAZY_COMMANDS}
    listed = CliRunner().invoke(lazy, ["--help"], terminal_width=width)
    assert lazy.commands._loaded == {}
    assert listed.output == CliRunner().invoke(plain, ["--help"], terminal_width=width).output
    assert "Commands:" in listed.output
