"""The GitHub Action's entry: `python -m thinkfix.cli.action`, with the Action's inputs in
the environment (PATHS, ARGS, BASELINE, SUMMARY, SARIF).

The inputs are split as a shell would split them (`shlex`), not by an unquoted `$ARGS`,
where `--exclude 'archive/**'` kept its quotes as part of the pattern and excluded nothing.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping


def scan_arguments(
    paths: str, args: str, baseline: str = "", summary: str = "", sarif: str = ""
) -> list[str]:
    """`thinkfix scan`'s argument list for the Action's inputs; `ValueError` on bad quoting."""
    argv = ["scan", "--output-format", "github"]
    if summary:
        argv += ["--report", f"markdown={summary}"]
    if sarif:  # the Action uploads it to code scanning
        argv += ["--report", f"sarif={sarif}"]
    if baseline:
        argv += ["--baseline", baseline]
    argv += shlex.split(args)
    argv += shlex.split(paths) or ["."]
    return argv


def main(environ: Mapping[str, str] | None = None) -> int:
    """Run the scan; the exit code is thinkfix scan's (2 for inputs that cannot be split)."""
    from thinkfix.cli import main as cli

    env = os.environ if environ is None else environ
    try:
        argv = scan_arguments(
            env.get("PATHS", "."),
            env.get("ARGS", ""),
            env.get("BASELINE", ""),
            env.get("SUMMARY", ""),
            env.get("SARIF", ""),
        )
    except ValueError as exc:
        print(
            f"thinkfix: error: the action's paths or args cannot be split: {exc}", file=sys.stderr
        )
        return 2
    try:
        cli.main(args=argv, prog_name="thinkfix")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
