"""click's translated texts, looked up only where gettext has a catalog folder (#26 item 3).

click asks gettext for five texts at a scan's start (the help and version options' help, the
version line, the `--state` file's type name); the first lookup imports `locale` and each
walks the language variables (~5.5 M instructions of a pre-commit hook's start-up). gettext
reads catalogs only from the folder bound to its domain, so where that folder is missing the
texts are click's English ones, given without a lookup; where it exists, every text is looked
up as click looks it up, and a catalog there translates thinkfix's output as it would click's.
"""

from __future__ import annotations

import copy
import json
import struct
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.cli.test_scan_startup import _SESSION
from tests.processes import run_python
from thinkfix._version import __version__
from thinkfix.cli import main
from thinkfix.cli.clicktext import file_path

_ROOT = Path(__file__).resolve().parents[2]

#: A fresh interpreter: bind gettext's domain to a folder, run `thinkfix ARGS`, report what
#: it printed and whether `locale` (what a lookup imports) was loaded.
_RUN = """
import gettext, json, sys
folder, *args = sys.argv[1:]
gettext.bindtextdomain(gettext.textdomain(), folder)
from click.testing import CliRunner
from thinkfix.cli import main
out = CliRunner().invoke(main, args, catch_exceptions=False)
print(json.dumps({"output": out.output, "code": out.exit_code, "locale": "locale" in sys.modules}))
"""


def _run(folder: Path, *args: str, language: str = "") -> dict[str, object]:
    env = {"PYTHONPATH": str(_ROOT), "LANGUAGE": language, "LC_ALL": "", "LANG": ""}
    done = run_python(_RUN, str(folder), *args, cwd=folder.parent, env=env)
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


def _catalog(messages: dict[str, str]) -> bytes:
    """A GNU gettext catalog (`.mo`) of ASCII `messages`."""
    keys = sorted(messages)
    ids = [k.encode() for k in keys]
    strs = [messages[k].encode() for k in keys]
    start = 28 + 16 * len(keys)
    table, data = b"", b""
    for blob in ids:
        table += struct.pack("<2I", len(blob), start + len(data))
        data += blob + b"\0"
    for blob in strs:
        table += struct.pack("<2I", len(blob), start + len(data))
        data += blob + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, len(keys), 28, 28 + 8 * len(keys), 0, 0)
    return head + table + data


@pytest.mark.parametrize(
    "args",
    [["--help"], ["-V"], ["scan", "--help"], ["scan", "--state", ".", "x"], ["scan", "S"]],
)
def test_without_a_catalog_folder_the_texts_are_clicks(args: list[str], tmp_path: Path) -> None:
    missing, empty = tmp_path / "missing", tmp_path / "locale"
    empty.mkdir()
    (tmp_path / "s.jsonl").write_bytes(_SESSION)
    args = [str(tmp_path / "s.jsonl") if a == "S" else a for a in args]
    given = _run(missing, *args)
    looked_up = _run(empty, *args)  # every text looked up, none found
    assert given["output"] == looked_up["output"] and given["code"] == looked_up["code"]
    if args == ["-V"]:
        assert given["output"] == f"thinkfix, version {__version__}\n"


@pytest.mark.parametrize(
    "args", [["--version"], ["scan", "-q", "--isolated", "--no-progress", "S"]]
)
def test_a_scan_or_the_version_looks_up_no_text_without_a_catalog_folder(
    args: list[str], tmp_path: Path
) -> None:
    """Help and error messages are click's to look up (click formats them); a scan that
    succeeds, or `--version`, shows none of them."""
    (tmp_path / "s.jsonl").write_bytes(_SESSION)
    args = [str(tmp_path / "s.jsonl") if a == "S" else a for a in args]
    (tmp_path / "locale").mkdir()
    assert _run(tmp_path / "missing", *args)["locale"] is False
    assert _run(tmp_path / "locale", *args)["locale"] is True


def test_a_catalog_translates_the_texts_as_it_would_clicks(tmp_path: Path) -> None:
    folder = tmp_path / "locale"
    (folder / "de" / "LC_MESSAGES").mkdir(parents=True)
    (folder / "de" / "LC_MESSAGES" / "messages.mo").write_bytes(
        _catalog(
            {
                "Show this message and exit.": "Zeigt diese Hilfe.",
                "Show the version and exit.": "Zeigt die Version.",
                "%(prog)s, version %(version)s": "%(prog)s Version %(version)s",
                "file": "datei",
            }
        )
    )
    assert "Zeigt die Version." in str(_run(folder, "--help", language="de")["output"])
    assert "Zeigt diese Hilfe." in str(_run(folder, "scan", "--help", language="de")["output"])
    version = _run(folder, "-V", language="de")["output"]
    assert version == f"thinkfix Version {__version__}\n"
    refused = _run(folder, "scan", "--state", ".", "x", language="de")
    assert "Datei '.' is a directory." in str(refused["output"])


@pytest.mark.parametrize("name", ["main", "scan"])
def test_the_help_option_is_the_one_click_makes(name: str) -> None:
    command = main if name == "main" else main.commands["scan"]
    ctx = click.Context(main, info_name="thinkfix", help_option_names=["-h", "--help"])
    ours, clicks = copy.copy(command), copy.copy(command)
    ours._help_option = clicks._help_option = None
    made = ours.get_help_option(ctx)
    expected = click.Command.get_help_option(clicks, ctx)
    assert made is not None and expected is not None
    assert made.to_info_dict() == expected.to_info_dict()
    assert (made.name, made.opts, made.secondary_opts) == (
        expected.name,
        expected.opts,
        expected.secondary_opts,
    )


def test_the_version_option_is_the_one_click_makes() -> None:
    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, "-V", "--version", prog_name="thinkfix")
    def clicks() -> None:
        """Find, count and repair reasoning that leaked into stored LLM agent sessions."""

    ours = next(p for p in main.params if p.name == "version")
    theirs = next(p for p in clicks.params if p.name == "version")
    assert ours.to_info_dict() == theirs.to_info_dict()
    runner = CliRunner()
    for args in (["-V"], ["--version"]):
        made, expected = runner.invoke(main, args), runner.invoke(clicks, args)
        assert (made.output, made.exit_code) == (expected.output, expected.exit_code)


def test_the_state_file_type_is_clicks() -> None:
    assert vars(file_path()) == vars(click.Path(dir_okay=False))
    assert type(file_path()) is click.Path
