"""A FIFO named by a `file://` URL (review10). A local path to a FIFO is refused by name
(`io.regular.open_regular` opens it non-blocking and checks it first), but a `file://` URL
was opened by fsspec, which opens it blocking: `thinkfix scan file:///…/fifo.jsonl` waited
for a writer forever. Now a local URL is opened as a local path is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.engine.conftest import claude_line
from tests.processes import run_thinkfix

pytest.importorskip("fsspec")


def test_a_fifo_named_by_a_file_url_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "odd.jsonl"
    os.mkfifo(fifo)
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(claude_line("All done.", uuid="u1"))

    done = run_thinkfix(
        "scan",
        "--isolated",
        "--output-format",
        "json",
        f"file://{fifo}",
        f"file://{clean}",
        timeout=30,
    )

    assert done.returncode == 2, done.stdout + done.stderr
    report = json.loads(done.stdout)
    (error,) = report["errors"]
    assert error["path"] == f"file://{fifo}"
    assert "a FIFO, not a regular file" in error["message"]
    assert report["summary"]["assistant_messages"] == 1  # the session beside it still read


def test_a_file_url_still_reads_a_session(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(claude_line("All done.", uuid="u1"))
    done = run_thinkfix("scan", "--isolated", "--no-progress", f"file://{clean}", timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
