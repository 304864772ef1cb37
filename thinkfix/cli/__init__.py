"""The thin command layer: parse flags, call the library, pick a reporter, exit."""

from __future__ import annotations

import click

from thinkfix import __version__
from thinkfix.cli import formats, normalize, repair, replay, scan, show, where


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="thinkfix")
def main() -> None:
    """Find, count and repair reasoning that leaked into stored LLM agent sessions."""


for _module in (scan, repair, normalize, replay, show, formats, where):
    for _command in _module.commands:
        main.add_command(_command)
