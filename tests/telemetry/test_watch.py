"""`thinkfix watch`: live counters over HTTP and in a text file, that survive restarts,
rotation, truncation and deletion without counting a record twice or missing one."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.processes import run_python, start_thinkfix
from tests.telemetry import sessions
from thinkfix.cli import main
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.telemetry.metrics import COUNTERS
from thinkfix.engine.telemetry.watch import Watcher

pytest.importorskip("prometheus_client")
pytest.importorskip("watchdog")

REPO = Path(__file__).resolve().parents[2]
WAIT = 30.0  # seconds a count may take to show (a loaded CI machine)
OPTIONS = ScanOptions()

APPEND = """
import sys
sys.path.insert(0, {repo!r})
from tests.telemetry import sessions
start, count, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "ab") as fp:
    for i in range(start, start + count):
        fp.write(sessions.claude_code(i, leak=i % 3 == 0, model=("qwen3-32b", "glm-4.6")[i % 2]))
        fp.flush()
"""


def append(path: Path, start: int, count: int) -> None:
    """Records written by another process, as an agent would."""
    run_python(APPEND.format(repo=str(REPO)), str(start), str(count), str(path))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return parse(text)


def parse(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r"^(thinkfix_\w+_total)(\{[^}]*\})? ([0-9.e+]+)$", line)
        if m:
            out[m[1] + (m[2] or "")] = float(m[3])
    return out


def expected(root: Path) -> dict[str, float]:
    """The counters a full scan of everything written implies."""
    report = scan([str(root)], OPTIONS, jobs=1)
    out: dict[str, float] = {}
    for path, c in report.summary.by_file.items():
        del path
        assert c.format == "claude-code"
    for model, c in report.summary.by_model.items():
        key = f'{{format="claude-code",model="{model}"}}'
        out["thinkfix_assistant_messages_total" + key] = c.assistant_messages
        if c.leaking_messages:
            out["thinkfix_leaking_messages_total" + key] = c.leaking_messages
    for f in report.findings:
        key = f'thinkfix_findings_total{{format="claude-code",kind="{f.kind}",model="{f.model}"}}'
        out[key] = out.get(key, 0) + 1
    return out


def wait_for(port: int, want: dict[str, float]) -> dict[str, float]:
    deadline = time.monotonic() + WAIT
    got: dict[str, float] = {}
    while time.monotonic() < deadline:
        try:
            got = metrics(port)
        except OSError:
            got = {}
        if got == want:
            return got
        time.sleep(0.1)
    raise AssertionError(f"metrics never matched:\n got {got}\nwant {want}")


class Watch:
    def __init__(self, root: Path, state: Path, port: int, *extra: str) -> None:
        self.port = port
        env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "200"}
        where = ["--metrics-port", str(port), "--state", str(state), "--interval", "0.1"]
        self.proc = start_thinkfix(
            "watch", str(root), "--isolated", *where, *extra, env=env, output=True
        )
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                metrics(port)
                return
            except OSError:
                assert self.proc.poll() is None, self.proc.communicate()
                time.sleep(0.1)
        raise AssertionError("watch did not start")

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=WAIT)
        return self.proc.returncode, out, err


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    root = tmp_path / "projects"
    root.mkdir()
    yield root, tmp_path / "state.json"


@pytest.mark.parametrize("mode", [(), ("--poll",)])
def test_watch_counts_records_appended_by_another_process(
    watched: tuple[Path, Path], mode: tuple[str, ...]
) -> None:
    root, state = watched
    watch = Watch(root, state, free_port(), *mode)
    try:
        session = root / "-home-u-proj" / "s1.jsonl"
        session.parent.mkdir()
        append(session, 0, 7)  # a file that appears after the watch started
        wait_for(watch.port, expected(root))
        append(session, 7, 5)
        got = wait_for(watch.port, expected(root))
        assert got['thinkfix_leaking_messages_total{format="claude-code",model="qwen3-32b"}'] == 2
    finally:
        code, out, err = watch.stop(signal.SIGINT)
    assert code == 0, err
    assert out.count(" block ") == 4  # one live line per leak: records 0, 3, 6, 9
    assert "s1.jsonl:10 block glm-4.6" in out
    assert "state saved" in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_restart_counts_every_record_once(watched: tuple[Path, Path], sig: int) -> None:
    root, state = watched
    session = root / "s1.jsonl"
    append(session, 0, 6)
    port = free_port()
    watch = Watch(root, state, port)
    wait_for(port, expected(root))
    append(session, 6, 4)
    wait_for(port, expected(root))
    watch.stop(sig)
    append(session, 10, 5)  # while nobody watches
    (root / "s2.jsonl").write_bytes(
        b"".join(sessions.claude_code(i, leak=True) for i in range(100, 103))
    )
    watch = Watch(root, state, port)
    try:
        want = expected(root)
        wait_for(port, want)
        time.sleep(1.0)  # several passes later: still no record counted twice
        assert metrics(port) == want
    finally:
        watch.stop()


def test_textfile_is_openmetrics_replaced_atomically(watched: tuple[Path, Path]) -> None:
    root, state = watched
    textfile = root.parent / "thinkfix.prom"
    append(root / "s1.jsonl", 0, 4)
    watch = Watch(root, state, free_port(), "--textfile", str(textfile), "--poll")
    try:
        append(root / "s1.jsonl", 4, 3)
        want = expected(root)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and (
            not textfile.exists() or parse(textfile.read_text()) != want
        ):
            time.sleep(0.1)
        text = textfile.read_text()
        assert parse(text) == want
        assert text.endswith("# EOF\n") and "# TYPE thinkfix_findings counter" in text
        assert [p.name for p in textfile.parent.iterdir() if "prom" in p.name] == ["thinkfix.prom"]
        # #27 item 3: the cron route (scan --output-format openmetrics) exports these counters
        # under the same names, types and labels, with the same values, read by
        # prometheus_client's own parser, so one query serves both routes.
        cron = (
            CliRunner()
            .invoke(main, ["scan", "--isolated", "--output-format", "openmetrics", str(root)])
            .stdout
        )
        assert _counter_families(cron) == _counter_families(text)
        assert set(_counter_families(text)) == {f.name for f in COUNTERS}
    finally:
        watch.stop()


def _counter_families(text: str) -> dict[str, tuple[str, frozenset[tuple[tuple[str, str], float]]]]:
    """Each counter family of the shared set (engine/telemetry/metrics.py): its type and samples."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    names = {f.name for f in COUNTERS}
    return {
        family.name: (
            family.type,
            frozenset((tuple(sorted(s.labels.items())), s.value) for s in family.samples),
        )
        for family in text_string_to_metric_families(text)
        if family.name in names
    }


def test_metrics_server_binds_to_loopback_by_default(watched: tuple[Path, Path]) -> None:
    root, state = watched
    watch = Watch(root, state, free_port())
    try:
        out = (
            subprocess.run(["ss", "-ltn"], capture_output=True, text=True, check=False).stdout
            if os.path.exists("/usr/bin/ss") or os.path.exists("/bin/ss")
            else ""
        )
        if out:
            listening = [line for line in out.splitlines() if f":{watch.port} " in line]
            assert listening and all("127.0.0.1:" in line for line in listening)
    finally:
        watch.stop()


# --- the watcher's bookkeeping, in-process ----------------------------------------------


def totals(w: Watcher) -> tuple[int, int, int]:
    t = w.snapshot()
    return sum(t.messages.values()), sum(t.leaking.values()), sum(t.findings.values())


def test_rotation_truncation_and_deletion_never_lower_or_recount(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    state = str(tmp_path / "state.json")
    seen: list[int] = []
    w = Watcher([str(root)], OPTIONS, state, on_finding=lambda f: seen.append(f.line))
    w.run_pass()
    path = root / "a.jsonl"
    path.write_bytes(b"".join(sessions.claude_code(i, leak=i < 2) for i in range(4)))
    w.run_pass()
    assert totals(w) == (4, 2, 2) and seen == [1, 2]
    with open(path, "ab") as fp:  # a record being written: not counted until it ends
        fp.write(sessions.claude_code(4, leak=True)[:50])
    w.run_pass()
    assert totals(w) == (4, 2, 2)
    with open(path, "ab") as fp:
        fp.write(sessions.claude_code(4, leak=True)[50:])
    w.run_pass()
    assert totals(w) == (5, 3, 3)
    with open(path, "r+b") as fp:  # copytruncate: what comes next is new
        fp.truncate(0)
    w.run_pass()
    assert totals(w) == (5, 3, 3)
    path.write_bytes(sessions.claude_code(9, leak=True))
    w.run_pass()
    assert totals(w) == (6, 4, 4)
    rotated = root / "a.1.jsonl"
    os.replace(path, rotated)  # rotated: the same records under another name
    path.write_bytes(sessions.claude_code(10, leak=False))  # and a fresh file
    w.run_pass()
    assert totals(w) == (7, 4, 4)
    with open(rotated, "ab") as fp:  # a writer still holding the old file
        fp.write(sessions.claude_code(11, leak=True))
    w.run_pass()
    assert totals(w) == (8, 5, 5)
    rotated.unlink()
    w.run_pass()
    assert totals(w) == (8, 5, 5)
    again = Watcher([str(root)], OPTIONS, state)
    assert totals(again) == (8, 5, 5)
    again.run_pass()
    assert totals(again) == (8, 5, 5)


def test_repaired_file_does_not_lower_the_counters(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    path = root / "a.jsonl"
    path.write_bytes(b"".join(sessions.claude_code(i, leak=True) for i in range(3)))
    w = Watcher([str(root)], OPTIONS, str(tmp_path / "state.json"))
    w.run_pass()
    temp = root / "a.tmp"
    temp.write_bytes(b"".join(sessions.claude_code(i, leak=False) for i in range(3)))
    os.replace(temp, path)  # how repair writes a file: a new inode, fewer leaks
    w.run_pass()
    assert totals(w) == (3, 3, 3)


def test_core_commands_do_not_import_the_watch_extra() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from thinkfix.cli import main; "
        f"CliRunner().invoke(main, ['scan', '--isolated', {str(REPO / 'fixtures')!r}]); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('prometheus_client', 'watchdog')))"
    )
    assert run_python(code, cwd=REPO).stdout.strip() == "[]"


def test_watch_names_a_state_in_another_layout(tmp_path: Path) -> None:
    from thinkfix.engine.commands.watch import Serve, Serving

    root = tmp_path / "s"
    root.mkdir()
    (root / "a.jsonl").write_bytes(sessions.claude_code(0, leak=True))
    state = tmp_path / "state.json"
    state.write_bytes(b'{"version": 2, "files": {}, "totals": {}}')
    started = Serve(Watcher([str(root)], OPTIONS, str(state)), Serving(poll=True)).start()
    assert started.note is not None and "layout 2" in started.note
    assert (started.messages, started.leaking) == (1, 1)
    assert Serve(Watcher([str(root)], OPTIONS, str(state)), Serving(poll=True)).start().note is None


def test_a_stop_signal_never_waits_in_the_main_thread_for_a_lock_it_holds(tmp_path: Path) -> None:
    """SIGTERM's handler runs between two bytecodes of the main thread, perhaps while the loop
    holds the lock of the event it waits on (`Event.wait` takes it). A handler that set the
    events itself would wait for that lock in the thread holding it, forever: the watch would
    ignore SIGTERM (the restart test's watch once did, for 30 s, under a loaded CI)."""
    script = f"""
import signal
from thinkfix.engine.commands.watch import Serve, Serving
from thinkfix.engine.scan.options import ScanOptions

serve = Serve.watching(
    [{str(tmp_path)!r}], ScanOptions(), {str(tmp_path / "state.json")!r}, Serving(poll=True),
    lambda finding: None,
)
with serve._wake._cond:  # the loop, inside Event.wait, holding its lock
    signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
print(serve._stop.wait(10))
"""
    done = run_python(
        script, check=False, timeout=WAIT, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    assert done.stdout.strip() == "True", done.stderr
