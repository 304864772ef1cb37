"""A FIFO, socket or device with a session's name inside a walked folder (review10). Named on
the command line it is refused by name (exit 2); found in a folder it was dropped without a
word: not read, not listed among the skipped files, the run as clean as if it were not there.
It still is not read (a FIFO would block, a device never end), but it is now a skipped file,
named on stderr and in every report's `skipped`, as an empty file is."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from tests.commands import invoke
from tests.engine.conftest import claude_line

pytestmark = pytest.mark.usefixtures("isolated_cli")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))


@pytest.mark.parametrize("make", [_fifo, _socket], ids=["fifo", "socket"])
def test_a_special_file_in_a_folder_is_a_skipped_file_not_silence(
    tmp_path: Path, make: object
) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "clean.jsonl").write_bytes(claude_line("All done.", uuid="u1"))
    make(folder / "odd.jsonl")  # type: ignore[operator]

    result = invoke("scan", str(folder), "--output-format", "json")

    report = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert report["errors"] == []
    assert [(s["path"], s["reason"]) for s in report["skipped"]] == [
        ("s/odd.jsonl", "not a regular file")
    ]
    assert "s/odd.jsonl" in result.stderr
