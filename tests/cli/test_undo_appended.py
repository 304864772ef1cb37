"""Undo keeps what the runtime wrote since the repair (the mission's "a living store"): a
session of lines the agent went on appending to is restored to its bytes from before the
repair, and the lines appended since are kept after them. Before, undo refused it ("changed
since the repair ... restoring it would lose those changes"), so a repair could not be
taken back from a session still in use."""

from __future__ import annotations

import json
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


def _repaired(tmp: Path, backup: bool, original: Path = LEAKY) -> tuple[Path, Path]:
    """A leaking session repaired in place: (the session, its manifest)."""
    work = tmp / "s" / original.name
    work.parent.mkdir(parents=True)
    shutil.copy(original, work)
    manifest = tmp / "m.json"
    args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest", str(manifest)]
    result = invoke(*args, *([] if backup else ["--no-backup"]), str(work))
    assert result.exit_code in (0, 1) and manifest.exists(), result.output  # 1: a leak left
    assert work.read_bytes() != original.read_bytes()  # not vacuous: the repair changed it
    return work, manifest


def appended_lines(min_size: int, max_size: int) -> st.SearchStrategy[bytes]:
    """Claude Code lines a runtime appends after a repair (clean, leaking, non-ASCII, empty
    text), joined."""
    return st.lists(
        st.sampled_from(["All done.", "<think>new</think>Done.", "caf\u00e9", ""]).map(
            lambda text: claude_line(text, uuid="later")
        ),
        min_size=min_size,
        max_size=max_size,
    ).map(b"".join)


_lines = appended_lines(1, 4)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(appended=_lines, backup=st.booleans())
def test_undo_restores_the_repair_and_keeps_the_lines_appended_since(
    tmp_path_factory: pytest.TempPathFactory, appended: bytes, backup: bool
) -> None:
    """From a backup or rebuilt from the manifest's records (`--no-backup`), the session is
    its bytes from before the repair followed by the appended lines, byte for byte, and undo
    says it kept them. (A leak in the appended lines is left to the next scan.)"""
    work, manifest = _repaired(tmp_path_factory.mktemp("undo"), backup)
    append_and_undo(work, manifest, LEAKY.read_bytes(), appended)


def append_and_undo(work: Path, manifest: Path, original: bytes, appended: bytes) -> None:
    """Append `appended` to the repaired session and undo: the session is `original` and
    then the appended bytes, byte for byte, and undo says it kept them."""
    with open(work, "ab") as fp:
        fp.write(appended)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output
    assert work.read_bytes() == original + appended
    assert f"keeping the {len(appended):,} bytes appended since" in result.stderr


def test_undo_dry_run_says_what_it_would_keep(tmp_path: Path) -> None:
    work, manifest = _repaired(tmp_path, backup=True)
    with open(work, "ab") as fp:
        fp.write(claude_line("All done.", uuid="later"))
    now = work.read_bytes()
    result = invoke("undo", "--dry-run", str(manifest))
    assert result.exit_code == 0, result.output
    assert "would restore" in result.stderr and "appended since" in result.stderr
    assert work.read_bytes() == now


@pytest.mark.parametrize(
    "change",
    [
        "rewritten-and-appended",  # a byte the repair wrote changed, then lines appended
        "glued",  # a line the repair wrote continued: no line of its own
    ],
)
def test_undo_refuses_a_session_whose_repaired_bytes_changed(tmp_path: Path, change: str) -> None:
    """Only the records the repair wrote, whole and unchanged where it wrote them, are put
    back, keeping every other line as it is now: a record of the repair's changed since is a
    session changed since the repair, refused as before (a line the repair left, rewritten
    since, is kept: tests/cli/test_hostile10_undo.py)."""
    work, manifest = _repaired(tmp_path, backup=True)
    k = json.loads(manifest.read_text())["files"][0]["records"][0]["after"]["index"]
    lines = work.read_bytes().splitlines(keepends=True)
    if change == "rewritten-and-appended":
        lines[k] = lines[k].replace(b'"type"', b'"type" ', 1)
        lines.append(claude_line("x", uuid="later"))
    else:
        lines[k] = lines[k][:-1] + b' ,"x":1}\n'
    data = b"".join(lines)
    work.write_bytes(data)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 2
    assert "changed since the repair" in result.stderr
    assert work.read_bytes() == data
