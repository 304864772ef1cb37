"""The command line run in-process, as the CLI tests run it (with the `isolated_cli` fixture
of tests/conftest.py: a private state folder, no config file named from outside, the test's
folder as the working one)."""

from __future__ import annotations

from click.testing import CliRunner, Result

from thinkfix.cli import main


def invoke(*args: str) -> Result:
    """`thinkfix ARGS` in this process; an exception the command does not handle fails the
    test with its own traceback (click's runner would turn it into exit code 1)."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)
