"""Whatever happens during a repair, the original is either untouched or fully replaced."""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path
from typing import BinaryIO

import pytest

from tests.engine.repair_helpers import (
    FIXTURES,
    REFUSED,
    copy_fixtures,
    leaking_lines,
    run,
    temp_files,
)
from tests.formats.support import leaking_fixtures, tree_content
from tests.processes import run_python
from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair import one_file as repair_one
from thinkfix.engine.repair import plan as repair_plan
from thinkfix.engine.repair import write as repair_write
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.repair.write import SIDECAR_SUFFIX
from thinkfix.engine.report import ExitCode
from thinkfix.io import filestate, safewrite
from thinkfix.io.errors import ErrorKind

PI = next(p for p in sorted((FIXTURES / "pi").iterdir()) if p.suffix == ".jsonl")
APPENDED = (
    b'{"type":"message","id":"ffff0001","parentId":"e5f6a7b8","message":{"role":"user",'
    b'"content":"one more thing"}}\n'
)


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "sessions" / PI.name
    work.parent.mkdir()
    work.write_bytes(PI.read_bytes())
    return work


def test_repair_skips_a_file_appended_to_between_read_and_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path)
    real_plan = repair_one.plan_file

    def plan_then_agent_appends(*args: object, **kwargs: object) -> repair_plan.FilePlan:
        plan = real_plan(*args, **kwargs)  # type: ignore[arg-type]
        with open(work, "ab") as fp:  # a live agent writes its next line
            fp.write(APPENDED)
        return plan

    monkeypatch.setattr(repair_one, "plan_file", plan_then_agent_appends)
    result = run([work.parent], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert file.status is FileStatus.SKIPPED
    assert [e.kind for e in file.errors] == [ErrorKind.CHANGED.value]
    assert "grew" in file.errors[0].message
    assert result.exit_code() is ExitCode.ERROR
    assert work.read_bytes() == PI.read_bytes() + APPENDED  # intact, nothing truncated
    assert temp_files(tmp_path) == []
    assert result.manifest_path is None  # nothing was replaced, so nothing to undo
    assert not any(p.is_file() for p in (tmp_path / "run").rglob("*"))  # no backup, no journal


def test_repair_skips_a_file_replaced_between_read_and_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path)
    real_check = filestate.check_unchanged

    def replaced_first(path: str, expected: filestate.Stamp) -> None:
        other = work.with_suffix(".new")
        other.write_bytes(PI.read_bytes())
        os.replace(other, work)  # same size, new inode: an editor's save
        real_check(path, expected)

    monkeypatch.setattr(safewrite, "check_unchanged", replaced_first)
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    assert result.files[0].status is FileStatus.SKIPPED
    assert work.read_bytes() == PI.read_bytes()


def test_repair_error_after_temp_file_is_written_leaves_original_and_no_stray_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path)
    seen: list[str] = []

    real_publish = safewrite._publish

    def fail(temp: str, target: str) -> None:
        if target != str(work):  # the backup is written first, and may go through
            real_publish(temp, target)
            return
        seen.append(temp)
        assert Path(temp).read_bytes() != PI.read_bytes()  # the repaired copy is complete
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safewrite, "_publish", fail)
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    (file,) = result.files
    assert seen and file.status is FileStatus.FAILED
    assert file.errors[0].kind == ErrorKind.WRITE_FAILED.value
    assert "No space left" in file.errors[0].message
    assert result.exit_code() is ExitCode.ERROR
    assert work.read_bytes() == PI.read_bytes()
    assert sorted(os.listdir(work.parent)) == [PI.name]
    assert not any(p.is_file() for p in (tmp_path / "run").rglob("*"))


def test_repair_sidecar_is_put_back_when_its_session_cannot_be_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FIXTURES / "claw-code" / "session-1775123456789.json"
    work = tmp_path / "s" / source.name
    work.parent.mkdir()
    work.write_bytes(source.read_bytes())
    real_publish = safewrite._publish

    def session_fails(temp: str, target: str) -> None:
        if target == str(work):
            raise OSError(5, "Input/output error")
        real_publish(temp, target)

    monkeypatch.setattr(safewrite, "_publish", session_fails)
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    assert result.files[0].status is FileStatus.FAILED
    assert sorted(os.listdir(work.parent)) == [source.name]  # no orphan sidecar
    assert work.read_bytes() == source.read_bytes()


def test_repair_verification_failure_leaves_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path)
    seen: list[bytes] = []

    def read_back_differs(plan: repair_plan.FilePlan, written: BinaryIO, options: object) -> None:
        seen.append(written.read())  # the bytes read back from the temporary file
        raise filestate.VerifyError("simulated: re-read bytes differ")

    monkeypatch.setattr(repair_write, "verify", read_back_differs)
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    assert len(seen) == 1 and seen[0] != PI.read_bytes()
    assert result.files[0].status is FileStatus.FAILED
    assert "re-read bytes differ" in result.files[0].errors[0].message
    assert result.exit_code() is ExitCode.ERROR
    assert work.read_bytes() == PI.read_bytes()
    assert sorted(os.listdir(work.parent)) == [PI.name]


_KILL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from thinkfix.io import safewrite
    from thinkfix.engine.repair.model import RepairOptions, WriteMode
    from thinkfix.engine.repair.driver import repair_paths

    publish = safewrite._publish

    def die(temp, target):
        if target != sys.argv[1]:  # the backup goes through; the session rename never happens
            return publish(temp, target)
        sys.stdout.write(temp + "\\n")
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)

    safewrite._publish = die
    repair_paths([sys.argv[1]], RepairOptions(mode=WriteMode.IN_PLACE, run_dir=sys.argv[2]))
""")


@pytest.mark.crash
def test_repair_killed_after_temp_file_leaves_original_and_next_run_sweeps(tmp_path: Path) -> None:
    work = _work(tmp_path)
    proc = run_python(_KILL_SCRIPT, str(work), str(tmp_path / "run"), check=False, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    temp = proc.stdout.strip()
    assert temp and Path(temp).parent == work.parent
    assert work.read_bytes() == PI.read_bytes()  # the original is intact
    # A process killed outright cannot clean up; its temp file names its dead pid,
    # and the next run that writes into the folder removes it before anything else.
    # Besides it, the live-writer guard's second name of the original (a hard link held
    # across the rename so a raced append can be put back) is left too, and swept alike.
    left = temp_files(work.parent)
    assert temp in left
    assert all(os.stat(p).st_ino == os.stat(work).st_ino for p in left if p != temp)
    result = run([work], WriteMode.IN_PLACE, tmp_path / "again")
    assert result.files[0].status is FileStatus.REPAIRED
    assert temp_files(tmp_path) == []
    assert sorted(os.listdir(work.parent)) == [PI.name]
    # The journal of the killed run survives, so even that run could be undone.
    assert ledger_journal.load_manifest(str(tmp_path / "run" / mf.MANIFEST_NAME))["journal"]


@pytest.mark.crash
def test_repair_worker_killed_mid_write_is_redone_and_fully_undoable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = copy_fixtures(tmp_path)
    before = tree_content(src)
    parent = os.getpid()
    real_publish = safewrite._publish

    def first_worker_dies(temp: str, target: str) -> None:
        if os.getpid() != parent and target.startswith(str(src / "claude-code")):
            os.kill(os.getpid(), signal.SIGKILL)
        real_publish(temp, target)

    monkeypatch.setattr(safewrite, "_publish", first_worker_dies)
    result = run([src], WriteMode.IN_PLACE, tmp_path, jobs=2)
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert leaking_lines([src]) == REFUSED  # only the refused all-reasoning messages
    assert temp_files(tmp_path) == []
    assert result.manifest_path is not None
    doc = ledger_journal.load_manifest(result.manifest_path)
    sessions = {e["target"] for e in doc["files"] if e["role"] in ("session", "database")}
    # every replaced file and changed store (each leaking fixture) is in the manifest
    assert len(sessions) == len(leaking_fixtures())
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert tree_content(src) == before


@pytest.mark.crash
def test_worker_killed_between_a_sidecar_and_its_file_leaves_nothing_after_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sidecar is written before the file it belongs to is renamed into place. A worker
    killed between the two left the sidecar behind; the redo read it as what was there
    before, so undo kept it (seen once in a loaded run of the test above, where the pool's
    shutdown killed the other worker at that point)."""
    src = copy_fixtures(tmp_path)
    before = tree_content(src)
    parent = os.getpid()
    real_publish = safewrite._publish

    def die_after_the_sidecar(temp: str, target: str) -> None:
        session = target.endswith(".json") and not target.endswith(SIDECAR_SUFFIX)
        if os.getpid() != parent and session and target.startswith(str(src / "claw-code")):
            os.kill(os.getpid(), signal.SIGKILL)  # its sidecar is written, it is not
        real_publish(temp, target)

    monkeypatch.setattr(safewrite, "_publish", die_after_the_sidecar)
    result = run([src], WriteMode.IN_PLACE, tmp_path, jobs=2)
    assert result.exit_code() is ExitCode.CLEAN, result.all_errors
    assert result.manifest_path is not None
    assert restore.undo(result.manifest_path).exit_code() is ExitCode.CLEAN
    assert tree_content(src) == before
