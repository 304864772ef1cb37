"""Fuzz targets: one per session format (reader, planner, writer) and one for the CLI.

Each target takes bytes and raises only when thinkfix breaks a promise: a format's
read-then-write is not byte-identical, a repair plan fails its own verification, an
internal error reaches a report, an exception escapes the engine or a command, or a
command exits with a code outside 0/1/2. `fuzz/run.py` drives them with atheris;
`tests/fuzz/test_targets.py` runs every seed through them under pytest.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable

from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats.registry import FORMATS
from thinkfix.io.errors import ErrorKind

Target = Callable[[bytes], None]
_TMP = tempfile.mkdtemp(prefix="thinkfix-fuzz-")
os.environ.setdefault("THINKFIX_STATE_DIR", os.path.join(_TMP, "state"))


class Broken(AssertionError):
    """thinkfix broke a promise on this input."""


def _file(data: bytes, name: str) -> str:
    path = os.path.join(_TMP, name)
    with open(path, "wb") as fp:
        fp.write(data)
    return path


def _no_internal(errors: object, what: str) -> None:
    for e in errors:  # type: ignore[attr-defined]
        if e.kind == ErrorKind.INTERNAL.value or "Traceback" in e.message:
            raise Broken(f"{what}: internal error: {e.message}")


def format_target(name: str) -> Target:
    """Read, write back, plan a repair (which verifies itself) and scan, as format `name`."""
    fmt = FORMATS[name]
    options = ScanOptions(inputs=InputOptions(format=name), max_findings=50)

    def run(data: bytes) -> None:
        if not data.startswith(b"SQLite format 3\0"):  # a database is read from disk only
            records = list(fmt.read(io.BytesIO(data)))
            out = io.BytesIO()
            fmt.write(records, out)
            if out.getvalue() != data:
                raise Broken(f"{name}: read then write is not byte-identical")
        path = _file(data, f"fuzz-{name}.jsonl")
        result = repair_paths([path], RepairOptions(mode=WriteMode.CHECK, scan=options, jobs=1))
        _no_internal(result.all_errors, f"{name} repair")
        for f in result.files:
            if f.status.value == "failed":
                raise Broken(f"{name}: a planned repair failed its verification: {f.errors}")
        _no_internal(scan([path], options, jobs=1).errors, f"{name} scan")

    return run


def cli_target(data: bytes) -> None:
    """Every command that reads a session, on a file of these bytes: exit 0, 1 or 2 only."""
    from click.testing import CliRunner

    from thinkfix.cli import main

    path = _file(data, "fuzz-cli.jsonl")
    runner = CliRunner()
    for args in (
        ["scan", "--output-format", "json", "--max-findings", "50", path],
        ["scan", "--output-format", "junit", path],
        ["repair", "--check", path],
        ["diff", "--output-format", "json", path],
        ["show", "--no-pager", "--thinking", "expanded", path],
    ):
        result = runner.invoke(main, args)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise Broken(
                f"{' '.join(args[:2])}: {type(result.exception).__name__}: {result.exception}"
            ) from result.exception
        if result.exit_code not in (0, 1, 2):
            raise Broken(f"{' '.join(args[:2])}: exit {result.exit_code}")
        if "Traceback" in result.output or "internal_error" in result.output:
            raise Broken(f"{' '.join(args[:2])}: internal error in the output")


TARGETS: dict[str, Target] = {
    **{f"format-{n}": format_target(n) for n in FORMATS},
    "cli": cli_target,
}
_EACH = list(TARGETS.values())


def all_target(data: bytes) -> None:
    """Every target in one process (one start-up, for a short CI run): the first byte picks."""
    if data:
        _EACH[data[0] % len(_EACH)](data[1:])


TARGETS["all"] = all_target
