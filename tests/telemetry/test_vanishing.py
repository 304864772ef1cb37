"""A file that vanishes while `scan --incremental` or `watch` runs (#22 item 7) is a line in
the report (an unreadable input, as a full scan reports it), never the end of the run."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.processes import start_thinkfix
from tests.telemetry import sessions
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.telemetry import incremental
from thinkfix.engine.telemetry.incremental import scan_incremental
from thinkfix.engine.telemetry.state import State
from thinkfix.engine.telemetry.watch import Watcher
from thinkfix.io.errors import ErrorKind

OPTIONS = ScanOptions()
REPO = Path(__file__).resolve().parents[2]


def leaky(n: int, count: int = 3) -> bytes:
    return b"".join(sessions.claude_code(n + i, leak=True) for i in range(count))


def deleting_after(monkeypatch: pytest.MonkeyPatch, name: str, victim: Path) -> Callable[..., Any]:
    """Patch `incremental.<name>` so the victim is deleted right after it ran (the moment
    between two reads of the file)."""
    real = getattr(incremental, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        if victim.exists():
            victim.unlink()
        return out

    monkeypatch.setattr(incremental, name, wrapped)
    return wrapped


def unreadable(report: Any, path: Path) -> list[Any]:
    return [e for e in report.errors if e.path == str(path) and e.kind is ErrorKind.UNREADABLE]


def test_file_deleted_between_detection_and_read_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    root.mkdir()
    keep, gone = root / "keep.jsonl", root / "gone.jsonl"
    keep.write_bytes(leaky(0))
    gone.write_bytes(leaky(10))
    state = str(tmp_path / "state.json")
    deleting_after(monkeypatch, "resolve", gone)
    report, _ = scan_incremental([str(root)], OPTIONS, state)
    assert unreadable(report, gone)
    assert report.exit_code() == 2  # never clean
    assert report.summary.leaking_messages == 3  # the other file still counted
    assert list(State.load(state).entries) == [str(keep)]  # and the state saved


def test_file_deleted_while_resuming_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "gone.jsonl"
    path.write_bytes(leaky(0, 200))  # more than detection reads: the new part is not re-detected
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], OPTIONS, state)
    with open(path, "ab") as fp:
        fp.write(leaky(10))
    deleting_after(monkeypatch, "_detection_reads_past", path)
    report, _ = scan_incremental([str(path)], OPTIONS, state)
    assert unreadable(report, path) and report.exit_code() == 2
    assert State.load(state).entries == {}


def test_watch_pass_skips_a_file_deleted_while_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    root.mkdir()
    (root / "keep.jsonl").write_bytes(leaky(0))
    gone = root / "gone.jsonl"
    gone.write_bytes(leaky(10))
    w = Watcher([str(root)], OPTIONS, str(tmp_path / "w.json"))
    deleting_after(monkeypatch, "resolve", gone)
    w.run_pass()
    assert sum(w.snapshot().leaking.values()) == 3
    assert list(w.state.files.entries) == [str(root / "keep.jsonl")]


@contextmanager
def churn(root: Path, cycles: int) -> Iterator[threading.Event]:
    """A thread that creates and deletes session files `cycles` times; the event is set
    once it is done."""
    done = threading.Event()

    def run() -> None:
        try:
            for i in range(cycles):
                path = root / f"t{i % 7}.jsonl"
                # Created whole (a rename), so a pass meets a file that is there or gone, never
                # one half written: write_bytes of tens of KB can be read part-way, a cut last
                # line (bad_line), which is not what this test is about.
                temp = root / f".t{i % 7}.partial"
                temp.write_bytes(leaky(100 + i, 1 + i % 20))
                os.replace(temp, path)
                time.sleep(0.001)  # spread the cycles over many passes
                path.unlink()
        finally:
            done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield done
    finally:
        thread.join()


def test_incremental_scans_survive_create_and_delete_churn(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    keep = root / "keep.jsonl"
    keep.write_bytes(leaky(0))
    state = str(tmp_path / "state.json")
    passes = 0
    with churn(root, 1000) as done:
        while not done.is_set() or passes < 2:
            report, _ = scan_incremental([str(root)], OPTIONS, state)
            passes += 1
            assert report.summary.by_file[str(keep)].leaking_messages == 3
            vanished = {e.path for e in report.errors}
            # every other file the walk found is counted or named as unreadable, never clean
            assert vanished <= {str(root / f"t{i}.jsonl") for i in range(7)}
            assert {e.kind for e in report.errors} <= {ErrorKind.UNREADABLE}, report.errors
    report, _ = scan_incremental([str(root)], OPTIONS, state)
    assert report.to_dict() == scan([str(root)], OPTIONS, jobs=1).to_dict()
    assert list(State.load(state).entries) == [str(keep)]


def test_watch_survives_1000_create_and_delete_cycles(tmp_path: Path) -> None:
    """#22 item 7's bar: a watcher's passes run while 1,000 files are created and deleted."""
    root = tmp_path / "s"
    root.mkdir()
    (root / "keep.jsonl").write_bytes(leaky(0))
    w = Watcher([str(root)], OPTIONS, str(tmp_path / "w.json"))
    w.run_pass()
    with churn(root, 1000) as done:
        while not done.is_set():
            w.run_pass()
    w.run_pass()
    assert list(w.state.files.entries) == [str(root / "keep.jsonl")]
    assert sum(w.snapshot().leaking.values()) >= 3  # churned files may have been counted too
    assert w.passes >= 3


def test_watch_command_survives_churn(tmp_path: Path) -> None:
    pytest.importorskip("prometheus_client")
    root = tmp_path / "s"
    root.mkdir()
    (root / "keep.jsonl").write_bytes(leaky(0))
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    args = ["watch", str(root), "--isolated", "--poll", "--interval", "0.05"]
    files = ["--state", str(tmp_path / "w.json"), "--textfile", str(tmp_path / "m.prom")]
    proc = start_thinkfix(*args, *files, env=env, output=True)
    try:
        textfile = tmp_path / "m.prom"
        deadline = time.monotonic() + 60
        while not textfile.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # started: its first pass is done
        with churn(root, 1000):
            pass
        assert proc.poll() is None, proc.communicate()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "internal error" not in err and "Traceback" not in err
    assert "state saved" in err
