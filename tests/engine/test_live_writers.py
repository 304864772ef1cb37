"""Issue 11 item 1: `repair --in-place` never loses a line a live agent writes while it runs.

An agent holding one `O_APPEND` descriptor (Codex does) kept writing into the old
inode after repair's rename, and an append between the last unchanged-check and
the rename vanished too. Every line the writer wrote must be in the file
afterwards, or the file must not have been touched (exit 2 for it).
`THINKFIX_LIVE_TRIALS=N` runs the writer trial N times (default 3).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.engine.repair_helpers import temp_files
from tests.processes import run_thinkfix, start_python
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import FileStatus, RepairOptions, WriteMode
from thinkfix.engine.report import ExitCode
from thinkfix.io import livewriters, safewrite
from thinkfix.io.errors import ErrorKind

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
TRIALS = int(os.environ.get("THINKFIX_LIVE_TRIALS", "3"))

WRITER = """
import json, os, sys, time
path, stop = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # held open for the whole run, as Codex does
print("open", flush=True)
n = 0
while not os.path.exists(stop):  # until the test's last repair is over, however slow
    line = {"type": "user", "uuid": f"live-{n}", "parentUuid": None, "sessionId": "s",
            "message": {"role": "user", "content": f"line {n}"}}
    os.write(fd, (json.dumps(line) + "\\n").encode())
    n += 1
    time.sleep(0.003)
os.close(fd)
print(n, flush=True)
"""


def live_line(n: int) -> bytes:
    return (
        json.dumps(
            {
                "type": "user",
                "uuid": f"live-{n}",
                "parentUuid": None,
                "sessionId": "s",
                "message": {"role": "user", "content": f"line {n}"},
            }
        )
        + "\n"
    ).encode()


def options(tmp: Path, **kw: object) -> RepairOptions:
    return RepairOptions(mode=WriteMode.IN_PLACE, run_dir=str(tmp / "run"), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("trial", range(TRIALS))
def test_writer_holding_append_descriptor_loses_no_line(tmp_path: Path, trial: int) -> None:
    root = tmp_path / "t"
    root.mkdir()
    session = root / "s.jsonl"
    session.write_bytes(LEAKY.read_bytes())
    env = dict(os.environ, THINKFIX_STATE_DIR=str(tmp_path / "state"))
    stop = tmp_path / "stop"
    writer = start_python(WRITER, str(session), str(stop), stdin=False)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "open"
    codes = []
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:  # repeated runs land at every point of the writes
        codes.append(
            run_thinkfix(
                "repair",
                "--in-place",
                "--isolated",
                "--include-active",
                "--jobs",
                "1",
                str(root),
                env=env,
                timeout=120,
            ).returncode
        )
    stop.touch()  # the descriptor stayed open through every run, even on a loaded machine
    written = int(writer.stdout.readline())
    writer.wait()
    after = session.read_bytes()
    missing = [n for n in range(written) if live_line(n) not in after]
    assert missing == [], f"{len(missing)} of {written} live lines lost (exit codes {codes})"
    # The file held open for writing was never replaced: left as it is, exit 2, said so.
    assert after == LEAKY.read_bytes() + b"".join(live_line(n) for n in range(written))
    assert set(codes) == {int(ExitCode.ERROR)}
    assert temp_files(root) == []


def test_append_between_check_and_rename_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window the descriptor check cannot see: a writer that opens, appends and closes
    right between the last unchanged-check and the rename. The old inode is put back."""
    session = tmp_path / "s.jsonl"
    original = LEAKY.read_bytes()
    session.write_bytes(original)
    real_publish = safewrite._publish

    def racing(temp: str, target: str) -> None:
        with open(target, "ab") as fp:
            fp.write(live_line(0))
        real_publish(temp, target)

    monkeypatch.setattr(safewrite, "_publish", racing)
    result = repair_paths([str(session)], options(tmp_path))
    assert session.read_bytes() == original + live_line(0)
    [f] = result.files
    assert f.status is FileStatus.SKIPPED
    assert result.exit_code() is ExitCode.ERROR
    assert any(
        e.kind == ErrorKind.CHANGED.value and "live writer" in e.message for e in result.all_errors
    )
    assert temp_files(tmp_path) == []
    assert result.manifest_path is None  # nothing was replaced, nothing to undo


def test_writer_keeping_descriptor_after_rename_is_refused_before(tmp_path: Path) -> None:
    """The descriptor check: a process holding the file open for writing is named."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(LEAKY.read_bytes())
    holder = start_python(
        "import os,sys,time; fd=os.open(sys.argv[1], os.O_WRONLY|"
        "os.O_APPEND); print('open', flush=True); time.sleep(30)",
        str(session),
        stdin=False,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        if not livewriters.supported():
            pytest.skip("no /proc: open descriptors cannot be seen here")
        assert [w.pid for w in livewriters.open_writers(str(session))] == [holder.pid]
        result = repair_paths([str(session)], options(tmp_path))
        assert session.read_bytes() == LEAKY.read_bytes()
        assert f"pid {holder.pid}" in result.all_errors[0].message
        assert result.exit_code() is ExitCode.ERROR
    finally:
        holder.kill()
        holder.wait()


def test_without_hard_links_appended_bytes_follow_into_the_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(LEAKY.read_bytes())
    real_publish = safewrite._publish

    def racing(temp: str, target: str) -> None:
        with open(target, "ab") as fp:
            fp.write(live_line(7))
        real_publish(temp, target)

    def no_link(*args: object, **kw: object) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(safewrite, "_publish", racing)
    monkeypatch.setattr(os, "link", no_link)
    repair_paths([str(session)], options(tmp_path))
    after = session.read_bytes()
    assert after.endswith(live_line(7)) and after != LEAKY.read_bytes() + live_line(7)
    assert temp_files(tmp_path) == []


def test_recently_modified_file_skipped_unless_include_active(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(LEAKY.read_bytes())
    result = repair_paths([str(session)], options(tmp_path, active_seconds=60.0))
    assert session.read_bytes() == LEAKY.read_bytes()
    assert result.files[0].status is FileStatus.SKIPPED
    assert "--include-active" in result.all_errors[0].message
    assert result.exit_code() is ExitCode.ERROR
    old = time.time() - 120
    os.utime(session, (old, old))
    result = repair_paths([str(session)], options(tmp_path, active_seconds=60.0))
    assert result.files[0].status is FileStatus.REPAIRED


def test_cli_active_window_default_and_flag(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    (root / "s.jsonl").write_bytes(LEAKY.read_bytes())
    env = dict(os.environ, THINKFIX_STATE_DIR=str(tmp_path / "state"))
    env.pop("THINKFIX_ACTIVE_SECONDS", None)
    cmd = ("repair", "--in-place", "--isolated", str(root))
    first = run_thinkfix(*cmd, env=env, timeout=120)
    assert first.returncode == 2 and "--include-active" in first.stderr
    forced = run_thinkfix(*cmd, "--include-active", env=env, timeout=120)
    assert forced.returncode == 1, forced.stderr  # repaired; its refused leak remains
