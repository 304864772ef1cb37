"""Incremental scans: the totals equal a full scan's whatever happened to the files."""

from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.telemetry import sessions
from thinkfix.engine.inputs.walk import walk
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.task import scan_file
from thinkfix.engine.telemetry import incremental
from thinkfix.engine.telemetry.incremental import scan_incremental
from thinkfix.engine.telemetry.state import State
from thinkfix.engine.telemetry.watch import Totals, Watcher, counts

OPTIONS = ScanOptions()


def full(root: Path) -> dict[str, object]:
    return scan([str(root)], OPTIONS, jobs=1).to_dict()


def claude_lines(seed: int, count: int) -> bytes:
    return b"".join(
        sessions.claude_code(
            seed + i,
            leak=(seed + i) % 3 == 0,
            model=("qwen3-32b", "deepseek-r1")[(seed + i) % 2],
            role=("assistant", "user")[(seed + i) % 4 == 1],
        )
        for i in range(count)
    )


def codex_lines(seed: int, count: int) -> bytes:
    out = []
    for i in range(count):
        k = (seed + i) % 5
        if k == 0:
            out.append(sessions.codex_turn(("gpt-oss-120b", "qwen3-coder")[(seed + i) % 2]))
        elif k == 1:
            out.append(sessions.codex_reasoning("the user wants a list, so I will reason first"))
        elif k == 2:
            out.append(sessions.codex_message(leak=False, role="user"))
        else:
            out.append(sessions.codex_message(leak=(seed + i) % 2 == 0))
    return b"".join(out)


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "append",
                "append",
                "partial",
                "truncate",
                "rewrite",
                "grow_in_place",
                "same_size_keep_mtime",
                "rename",
                "replace",
                "delete",
                "document",
                "garbage",
            ]
        ),
        st.integers(0, 2),  # which file
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=8,
)


def _write(path: Path, data: bytes, *, mode: str = "ab") -> None:
    with open(path, mode) as fp:
        fp.write(data)


def _toggle_leak(data: bytes, n: int) -> bytes:
    """The same bytes with one early leak opened or closed (or one byte changed): same size."""
    for old, new in ((b"<think>", b"<thunk>"), (b"<thunk>", b"<think>")):
        if old in data:
            return data.replace(old, new, 1)
    i = n % len(data)
    return data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :]


def _apply(root: Path, action: str, which: int, n: int, clock: list[int]) -> None:
    names = ["claude.jsonl", "rollout.jsonl", "chat.json"]
    path = root / names[which]
    make = claude_lines if which == 0 else codex_lines
    moved = root / "moved.jsonl"
    if action == "rename" and which < 2:  # to another name and back, the same inode
        if path.exists():
            os.replace(path, moved)
        elif moved.exists():
            os.replace(moved, path)
        return
    if action == "same_size_keep_mtime" and path.exists() and path.stat().st_size:
        st = path.stat()
        with open(path, "r+b") as fp:
            fp.write(_toggle_leak(path.read_bytes(), n))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as if never touched
        return
    if which == 2 or action == "document":
        path = root / "chat.json"
        _write(path, sessions.gemini_document(n % 3, n % 4), mode="wb")
    elif action == "append":
        if not path.exists() and which == 1:
            _write(path, sessions.codex_meta())
        _write(path, make(n, 1 + n % 4))
    elif action == "partial":  # a record cut mid-write; the next append may finish it
        line = make(n, 1)
        _write(path, line[: n % len(line)])
    elif action == "truncate" and path.exists():
        size = path.stat().st_size
        with open(path, "r+b") as fp:
            fp.truncate(n % (size + 1))
    elif action == "rewrite":  # same inode, new bytes
        _write(path, make(n + 7, 1 + n % 3), mode="wb")
    elif action == "grow_in_place" and path.exists():  # same inode, changed early, longer
        data = _toggle_leak(path.read_bytes(), n) if path.stat().st_size else b""
        with open(path, "r+b") as fp:
            fp.write(data)
            fp.write(make(n + 3, 1 + n % 3))
    elif action == "replace":  # a new inode at the same path
        temp = root / "new.tmp"
        _write(temp, make(n + 11, 1 + n % 5), mode="wb")
        os.replace(temp, path)
    elif action == "delete" and path.exists():
        path.unlink()
    elif action == "garbage":
        _write(path, b"{not json\n")
    if path.exists():  # a clock that always moves on: the racy case has its own test
        clock[0] += 1_000_000_000
        os.utime(path, ns=(clock[0], clock[0]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ACTIONS,
    st.lists(ACTIONS, min_size=1, max_size=4),
    st.sampled_from(
        [OPTIONS, ScanOptions(by_day=True), ScanOptions(since=1772409600.0, prefilter=False)]
    ),
)
def test_incremental_totals_equal_a_full_scan(
    first: list[tuple[str, int, int]], later: list[list[tuple[str, int, int]]], options: ScanOptions
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        root.mkdir()
        state = str(Path(tmp) / "state.json")
        clock = [1_600_000_000_000_000_000]
        for action in first:
            _apply(root, *action, clock)
        for step in [[], *later]:
            for action in step:
                _apply(root, *action, clock)
            report, _ = scan_incremental([str(root)], options, state)
            expected = scan([str(root)], options, jobs=1)
            assert report.to_dict() == expected.to_dict()
            assert report.exit_code() == expected.exit_code()


def _old(path: Path) -> None:
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))


def test_unchanged_archive_reads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once settled (no change for `RACY_NS` before it was read), a file whose size and
    times are the same is not read at all."""
    monkeypatch.setattr(incremental, "RACY_NS", 0)
    root = tmp_path / "s"
    root.mkdir()
    for i in range(5):
        (root / f"{i}.jsonl").write_bytes(claude_lines(i * 100, 400))
        _old(root / f"{i}.jsonl")
    state = str(tmp_path / "state.json")
    first, stats1 = scan_incremental([str(root)], OPTIONS, state)
    again, stats2 = scan_incremental([str(root)], OPTIONS, state)
    total = sum(p.stat().st_size for p in root.iterdir())
    assert stats1.full == 5 and stats1.bytes_read == total
    assert stats2.unchanged == 5 and stats2.bytes_read == 0
    assert again.to_dict() == first.to_dict() == full(root)


def test_appended_bytes_only_are_parsed(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(sessions.codex_meta() + codex_lines(0, 200))
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], OPTIONS, state)
    extra = codex_lines(200, 10)
    with open(path, "ab") as fp:
        fp.write(extra)
    report, stats = scan_incremental([str(path)], OPTIONS, state)
    assert stats.appended == 1
    assert stats.bytes_parsed == len(extra)
    assert stats.bytes_read == path.stat().st_size  # the rest hashed
    assert report.to_dict() == scan([str(path)], OPTIONS, jobs=1).to_dict()


def test_codex_model_from_an_earlier_turn_is_kept_across_runs(tmp_path: Path) -> None:
    """The model lives in a turn_context line read in an earlier run: the context travels."""
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(sessions.codex_meta() + sessions.codex_turn("gpt-oss-120b"))
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], OPTIONS, state)
    with open(path, "ab") as fp:
        fp.write(sessions.codex_message(leak=True))
    report, stats = scan_incremental([str(path)], OPTIONS, state)
    assert stats.appended == 1
    assert list(report.summary.by_model) == ["gpt-oss-120b"]
    assert report.findings[0].model == "gpt-oss-120b"


def test_racily_clean_file_is_read_again(tmp_path: Path) -> None:
    """Same size and time, but modified right when it was read: not trusted."""
    path = tmp_path / "c.jsonl"
    path.write_bytes(claude_lines(0, 3))
    stamp = path.stat().st_mtime_ns
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], OPTIONS, state)
    path.write_bytes(claude_lines(3, 3))  # same size, other bytes
    os.utime(path, ns=(stamp, stamp))
    report, stats = scan_incremental([str(path)], OPTIONS, state)
    assert stats.unchanged == 0
    assert report.to_dict() == scan([str(path)], OPTIONS, jobs=1).to_dict()


def test_compressed_files_are_reused_or_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(incremental, "RACY_NS", 0)  # settled once read
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(gzip.compress(claude_lines(0, 9)))
    _old(path)
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], OPTIONS, state)
    report, stats = scan_incremental([str(path)], OPTIONS, state)
    assert stats.unchanged == 1 and stats.bytes_read == 0
    path.write_bytes(gzip.compress(claude_lines(0, 12)))
    report, stats = scan_incremental([str(path)], OPTIONS, state)
    assert stats.full == 1
    assert report.to_dict() == scan([str(path)], OPTIONS, jobs=1).to_dict()


def test_other_options_do_not_reuse_the_state(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(claude_lines(0, 9))
    _old(path)
    state = str(tmp_path / "state.json")
    scan_incremental([str(path)], OPTIONS, state)
    other = ScanOptions(snippet_chars=5)
    report, stats = scan_incremental([str(path)], other, state)
    assert stats.full == 1
    assert report.to_dict() == scan([str(path)], other, jobs=1).to_dict()


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b'{"version": 99, "files": {}}',
        b'{"version": 1, "files": {"x": {"dev": 1}}}',
    ],
)
def test_a_bad_state_file_means_a_full_scan(tmp_path: Path, content: bytes) -> None:
    state = tmp_path / "state.json"
    state.write_bytes(content)
    assert State.load(str(state)).entries == {}


def test_detection_is_redone_while_the_first_records_were_still_growing(tmp_path: Path) -> None:
    """Detection reads whole first records (#10): a state saved before they were all written
    was judged on less than detection reads now, whatever the byte count."""
    path = tmp_path / "s.jsonl"
    long_line = b'{"k":"' + b"x" * 200_000 + b'"}\n'
    path.write_bytes(long_line)
    assert incremental._detection_reads_past(str(path), len(long_line) - 10)
    path.write_bytes(long_line * 4)
    assert incremental._detection_reads_past(str(path), len(long_line) * 2)
    assert not incremental._detection_reads_past(str(path), len(long_line) * 3)
    small = b'{"type":"user","uuid":"u"}\n' * 10_000  # 270 KB of short lines: 64 KB decide
    path.write_bytes(small)
    assert not incremental._detection_reads_past(str(path), 100_000)
    assert incremental._detection_reads_past(str(path), 1_000)


def test_worker_processes_give_the_same_report_and_state(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    for i in range(4):
        (root / f"{i}.jsonl").write_bytes(claude_lines(i * 50, 30))
        _old(root / f"{i}.jsonl")
    state = str(tmp_path / "state.json")
    first, stats = scan_incremental([str(root)], OPTIONS, state, jobs=2)
    assert stats.full == 4 and first.to_dict() == full(root)
    for i in (1, 3):
        with open(root / f"{i}.jsonl", "ab") as fp:
            fp.write(claude_lines(900 + i, 4))
    again, stats = scan_incremental([str(root)], OPTIONS, state, jobs=2)
    assert (stats.appended, stats.unchanged) == (2, 2)
    assert again.to_dict() == full(root)


def _committed_part(copy: Path, path: str, size: int) -> ScannedFile:
    """A full scan of the first `size` bytes of the file at `path` (the part a watcher has
    committed), from a copy under the same name."""
    target = copy / os.path.basename(path)
    with open(path, "rb") as fp:
        target.write_bytes(fp.read(size))
    (item,) = walk([str(target)], OPTIONS.inputs)
    return scan_file(item, OPTIONS)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ACTIONS, st.lists(ACTIONS, min_size=1, max_size=4))
def test_watch_counts_equal_a_full_scan(
    first: list[tuple[str, int, int]], later: list[list[tuple[str, int, int]]]
) -> None:
    """After every pass, what the watcher holds for each file counts what a full scan of that
    file's complete lines counts; its counters never go down, and never below the sum of
    the files there now."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        copy = Path(tmp) / "copy"
        root.mkdir()
        copy.mkdir()
        clock = [1_600_000_000_000_000_000]
        for action in first:
            _apply(root, *action, clock)
        w = Watcher([str(root)], OPTIONS, str(Path(tmp) / "state.json"))
        before = Totals()
        for step in [[], *later]:
            for action in step:
                _apply(root, *action, clock)
            w.run_pass(announce=False)
            now, held = w.snapshot(), Totals()
            for path, entry in w.state.files.entries.items():
                data = Path(path).read_bytes()
                if entry.resumable:  # every complete line read
                    assert entry.offset == data.rfind(b"\n") + 1
                assert counts(entry.committed) == counts(_committed_part(copy, path, entry.offset))
                for name in ("messages", "leaking", "findings"):
                    getattr(held, name).update(getattr(counts(entry.committed), name))
            for name in ("messages", "leaking", "findings"):
                total = getattr(now, name)
                assert getattr(before, name) <= total
                assert getattr(held, name) <= total
            before = now
