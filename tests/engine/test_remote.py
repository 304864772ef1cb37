"""Inputs named by fsspec URLs give the report local files give (#13 item 6).

fsspec's memory filesystem (in this process) and local filesystem (`file://`) stand in for a
bucket: the same fixture files scanned from a folder and from a URL give the same JSON
report, each file shown by its URL instead of its local path.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.formats.support import is_store
from thinkfix.cli import main

fsspec = pytest.importorskip("fsspec")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: OpenCode (and Kilo CLI, its fork) keep a session as a folder of linked files that the reader
#: finds by local path; Cursor's store is a SQLite database, which SQLite opens by local path.
LOCAL_ONLY = ("opencode", "kilo", "cursor")


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local") / "sessions"
    # every database store too: SQLite reads a store by local path only
    shutil.copytree(
        FIXTURES,
        root,
        ignore=lambda d, names: [n for n in names if n in LOCAL_ONLY or is_store(Path(d) / n)],
    )
    return root


def scan_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["scan", "--isolated", "--no-progress", "--output-format", "json", *args]
    )
    assert result.exit_code in (0, 1), result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def renamed(value: Any, old: str, new: str) -> Any:
    """Every string of a report with the prefix `old` spelled `new`."""
    if isinstance(value, str):
        return new + value[len(old) :] if value.startswith(old) else value
    if isinstance(value, list):
        return [renamed(v, old, new) for v in value]
    if isinstance(value, dict):
        return {renamed(k, old, new): renamed(v, old, new) for k, v in value.items()}
    return value


def test_a_memory_url_folder_reports_what_the_local_folder_does(local: Path) -> None:
    memory = fsspec.filesystem("memory")
    for path in local.rglob("*"):
        if path.is_file():
            memory.pipe(f"/thinkfix-test/{path.relative_to(local).as_posix()}", path.read_bytes())
    try:
        expected = scan_json("--jobs", "1", str(local))
        assert expected["summary"]["leaking_messages"] > 0
        got = scan_json("--jobs", "1", "memory://thinkfix-test")
        assert renamed(got, "memory://thinkfix-test", str(local)) == expected
    finally:
        memory.rm("/thinkfix-test", recursive=True)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_url_reports_what_the_local_path_does(local: Path, jobs: str) -> None:
    url = local.resolve().as_uri()
    expected = scan_json("--jobs", "1", str(local))
    assert renamed(scan_json("--jobs", jobs, url), url, str(local)) == expected
    one = next(p for p in sorted(local.rglob("*.jsonl")))
    assert renamed(
        scan_json(one.resolve().as_uri()), one.resolve().as_uri(), str(one)
    ) == scan_json(str(one))


def test_a_url_with_nothing_there_is_an_unreadable_input(tmp_path: Path) -> None:
    url = (tmp_path / "missing").as_uri()
    result = CliRunner().invoke(
        main, ["scan", "--isolated", "--no-progress", "--output-format", "json", url]
    )
    assert result.exit_code == 2, result.output
    errors = json.loads(result.stdout)["errors"]
    assert [(e["path"], e["kind"]) for e in errors] == [(url, "unreadable")]
