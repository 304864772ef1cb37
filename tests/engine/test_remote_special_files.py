"""A FIFO, socket or dangling link with a session's name in a folder named by a `file://` URL
(edges11, review10's open item). A local folder lists a FIFO or socket as a skipped file,
`not a regular file`, and a dangling link as an error (tests/engine/
test_review10_special_files.py); the same folder named by `file://` dropped all three
without a word (`remote.listing` kept fsspec's `type == "file"`, and fsspec calls each of
them `other`). Now the URL's report says what the path's says."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.engine.conftest import claude_line
from tests.engine.test_review10_special_files import _fifo, _socket
from tests.processes import run_thinkfix

pytest.importorskip("fsspec")
pytestmark = pytest.mark.usefixtures("isolated_cli")


def _folder(tmp_path: Path, make: Callable[[Path], None]) -> Path:
    folder = tmp_path / "s"
    folder.mkdir(exist_ok=True)
    (folder / "clean.jsonl").write_bytes(claude_line("All done.", uuid="u1"))
    make(folder / "odd.jsonl")
    return folder


def _report(*args: str) -> tuple[int, dict[str, Any], str]:
    """The run's exit code, JSON report and stderr: in a process of its own, as a user runs
    it (the skip line of `diff` is said as the run ends, by `main`)."""
    done = run_thinkfix(*args, "--isolated", "--output-format", "json", timeout=60)
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.mark.parametrize("make", [_fifo, _socket], ids=["fifo", "socket"])
def test_a_special_file_in_a_file_url_folder_is_skipped_as_in_a_local_one(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    folder = _folder(tmp_path, make)
    url = f"file://{folder}"

    code, report, stderr = _report("scan", url)
    local_code, local, local_stderr = _report("scan", str(folder))

    assert code == local_code == 0, report
    assert report["errors"] == local["errors"] == []
    assert _skipped(report) == [(f"{url}/odd.jsonl", "not a regular file")]
    assert _skipped(local) == [("s/odd.jsonl", "not a regular file")]
    assert f"not a regular file: {url}/odd.jsonl" in stderr
    assert "not a regular file: s/odd.jsonl" in local_stderr


def _skipped(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["path"], s["reason"]) for s in report["skipped"]]


def _errors(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["path"].rsplit("/", 1)[-1], e["kind"], e["message"]) for e in report["errors"]]


@pytest.mark.parametrize(
    "target",
    [os.devnull, "gone.jsonl", "elsewhere.jsonl", "s/sub/inside.jsonl", "s/sub"],
    ids=["device", "dangling", "outside", "inside", "folder-inside"],
)
@pytest.mark.parametrize("follow", [False, True], ids=["", "follow-links"])
def test_a_link_in_a_file_url_folder_is_judged_as_in_a_local_one(
    tmp_path: Path, target: str, follow: bool
) -> None:
    """A link leading outside the paths named is an error (hostile10) unless
    `--follow-links`; one leading inside is read (a folder: its files where they lie)."""
    (tmp_path / "elsewhere.jsonl").write_bytes(claude_line("<think>x</think>Hi.", uuid="e1"))
    sub = tmp_path / "s" / "sub"
    sub.mkdir(parents=True)
    (sub / "inside.jsonl").write_bytes(claude_line("<think>y</think>Yo.", uuid="i1"))
    folder = _folder(tmp_path, lambda path: path.symlink_to(tmp_path / target))
    flags = ["--follow-links"] if follow else []

    code, report, _ = _report("scan", *flags, f"file://{folder}")
    local_code, local, _ = _report("scan", *flags, str(folder))

    assert code == local_code, (report, local)
    assert _errors(report) == _errors(local)
    assert [r for _, r in _skipped(report)] == [r for _, r in _skipped(local)]
    assert report["summary"]["files"] == local["summary"]["files"]
    assert report["summary"]["findings"] == local["summary"]["findings"]
    if target == "elsewhere.jsonl":
        assert (code, report["summary"]["findings"]) == ((1, 2) if follow else (2, 1))
