"""Undo of a living session, second pass (hostile10): an undo that kept the lines a runtime
appended since the repair is done; running it again (a retried script, a second terminal)
says the file already holds its bytes from before the repair, and keeps every line
appended since, before or after the first undo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.commands import invoke
from tests.engine.conftest import claude_line

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"

pytestmark = pytest.mark.usefixtures("isolated_cli")


def _repaired(tmp: Path, backup: bool) -> tuple[Path, Path]:
    """A leaking session repaired in place: (the session, its manifest)."""
    work = tmp / "s" / LEAKY.name
    work.parent.mkdir(parents=True)
    shutil.copy(LEAKY, work)
    manifest = tmp / "m.json"
    args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest", str(manifest)]
    result = invoke(*args, *([] if backup else ["--no-backup"]), str(work))
    assert result.exit_code in (0, 1) and manifest.exists(), result.output  # 1: a leak left
    assert work.read_bytes() != LEAKY.read_bytes()  # not vacuous: the repair changed it
    return work, manifest


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fp:
        fp.write(data)


def test_hostile10_undo_twice_after_lines_were_appended(tmp_path: Path) -> None:
    """Before: the second undo said `changed since the repair ... restoring it would lose
    those changes`, exit 2, of a file it had itself restored."""
    work, manifest = _repaired(tmp_path, backup=True)
    line = claude_line("All done.", uuid="later")
    _append(work, line)
    assert invoke("undo", str(manifest)).exit_code == 0
    again = invoke("undo", str(manifest))
    assert again.exit_code == 0, again.output
    assert "already" in again.stderr and "changed since" not in again.stderr
    assert "keeping the" in again.stderr  # it says the appended lines are there, kept
    assert work.read_bytes() == LEAKY.read_bytes() + line
    dry = invoke("undo", "--dry-run", str(manifest))
    assert dry.exit_code == 0 and "already" in dry.stderr, dry.output


def test_hostile10_a_file_glued_to_its_original_is_still_changed(tmp_path: Path) -> None:
    """Only whole lines after the bytes from before the repair are that file's own: one
    glued to its last line is a rewrite, and undo still refuses it."""
    work, manifest = _repaired(tmp_path, backup=True)
    assert invoke("undo", str(manifest)).exit_code == 0
    data = LEAKY.read_bytes()
    work.write_bytes(data[:-1] + b"x" + data[-1:] + claude_line("later", uuid="later"))
    again = invoke("undo", str(manifest))
    assert again.exit_code == 2 and "changed since" in again.stderr, again.output


_lines = st.lists(
    st.sampled_from(["All done.", "<think>new</think>Done.", "caf\u00e9", ""]).map(
        lambda text: claude_line(text, uuid="later")
    ),
    min_size=0,
    max_size=3,
).map(b"".join)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=_lines, then=_lines, backup=st.booleans())
def test_hostile10_undo_again_and_again_keeps_every_appended_line(
    tmp_path_factory: pytest.TempPathFactory, first: bytes, then: bytes, backup: bool
) -> None:
    """repair, appends, undo, appends, undo: the original, then every appended byte, and
    both undos exit 0."""
    work, manifest = _repaired(tmp_path_factory.mktemp("undo"), backup)
    _append(work, first)
    assert invoke("undo", str(manifest)).exit_code == 0
    _append(work, then)
    again = invoke("undo", str(manifest))
    assert again.exit_code == 0, again.output
    assert work.read_bytes() == LEAKY.read_bytes() + first + then
