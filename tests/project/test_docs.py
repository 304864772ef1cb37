"""The docs cannot drift from the code (#27 item 11): the site builds with `--strict`, its
command reference is generated from the click commands, every `thinkfix` command line shown
in README.md and docs/ names a real command and real options, and the library example runs
and prints what its comments say."""

from __future__ import annotations

import ast
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from thinkfix.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks(language: str) -> list[tuple[str, str]]:
    """(page, code) of every fenced block in `language` on every page."""
    return [
        (page.name, m[2])
        for page in PAGES
        for m in FENCE.finditer(page.read_text("utf-8"))
        if m[1] == language
    ]


INLINE = re.compile(r"`thinkfix ([a-z][^`]*)`")


def _command_lines() -> list[tuple[str, list[str]]]:
    """Every `thinkfix ...` invocation in a shell, YAML or plain block, or in inline code,
    as argv."""
    out = [
        (page.name, shlex.split(m[1].split("<")[0]))
        for page in PAGES
        for m in INLINE.finditer(page.read_text("utf-8"))
    ]
    for language in ("sh", "yaml", "", "console"):
        for page, code in _blocks(language):
            for line in code.replace("\\\n", " ").splitlines():
                found = re.search(r"(?:^|[\s;&|(])thinkfix (\w[^#|&;>]*)", line)
                if found:
                    out.append((page, shlex.split(found[1].split("<")[0])))
    return out


def _options(command: click.Command) -> set[str]:
    ctx = click.Context(command)
    return {
        name
        for p in command.get_params(ctx)
        if isinstance(p, click.Option)
        for name in (*p.opts, *p.secondary_opts)
    }


COMMAND_LINES = _command_lines()


def test_the_pages_show_command_lines() -> None:
    assert len(COMMAND_LINES) >= 30
    assert {argv[0] for _, argv in COMMAND_LINES} >= {"scan", "repair", "watch", "undo"}


@pytest.mark.parametrize(
    ("page", "argv"), COMMAND_LINES, ids=[f"{p}:{' '.join(a)[:40]}" for p, a in COMMAND_LINES]
)
def test_every_command_line_in_the_docs_names_real_options(page: str, argv: list[str]) -> None:
    ctx = click.Context(main)
    command = main.get_command(ctx, argv[0])
    assert command is not None, f"{page}: no command {argv[0]!r}"
    known = _options(command)
    for word in argv[1:]:
        if word.startswith("--"):
            assert word.split("=")[0] in known, f"{page}: {argv[0]} has no option {word}"


def test_the_library_example_prints_what_its_comments_say() -> None:
    """A line `expression  # value` must evaluate to that value (its repr); the rest runs."""
    (page, code), *_ = _blocks("python")
    checks: list[tuple[str, str]] = []
    lines = []
    for line in code.splitlines():
        expression, _, comment = line.partition("  #")
        wanted = comment.strip()
        if expression.strip() and not line.startswith(" ") and wanted[:1] and wanted[0] in "'\"([":
            ast.parse(expression.strip(), mode="eval")  # an expression, or the page is wrong
            lines.append(f"_checks.append(({expression.strip()!r}, repr({expression.strip()})))")
            checks.append((expression.strip(), wanted))
        else:
            lines.append(line)
    namespace: dict[str, object] = {"_checks": []}
    exec(compile("\n".join(lines), page, "exec"), namespace)  # noqa: S102 - our own README
    assert len(checks) >= 3
    assert namespace["_checks"] == [(expr, wanted) for expr, wanted in checks]


@pytest.mark.skipif(importlib.util.find_spec("mkdocs_click") is None, reason="pip install .[docs]")
def test_the_command_reference_lists_every_option_of_every_command() -> None:
    from mkdocs_click._docs import make_command_docs

    page = "\n".join(make_command_docs("thinkfix", main, depth=1, list_subcommands=True))
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None and f"thinkfix {name} [OPTIONS]" in page
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and not param.hidden:
                assert param.opts[-1] in page, (name, param.opts)


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="pip install .[docs]")
def test_the_site_builds_strict(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    commands = (tmp_path / "site" / "commands" / "index.html").read_text("utf-8")
    assert "thinkfix scan [OPTIONS]" in commands and "--output-format" in commands
