"""Undo of a living session, second pass (hostile10): an undo that kept the lines a runtime
appended since the repair is done; running it again (a retried script, a second terminal)
says the file already holds its bytes from before the repair, and keeps every line
appended since, before or after the first undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_undo_appended import FIXTURES, LEAKY, _repaired, appended_lines
from tests.commands import invoke
from tests.engine.conftest import claude_line

pytestmark = pytest.mark.usefixtures("isolated_cli")


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


def test_hostile10_a_line_the_repair_changed_then_rewritten_after_undo_is_still_changed(
    tmp_path: Path,
) -> None:
    """Undone, then a line the repair had changed rewritten: neither what the repair wrote
    nor what was there before, so undo refuses it as changed since."""
    work, manifest = _repaired(tmp_path, backup=True)
    assert invoke("undo", str(manifest)).exit_code == 0
    k = json.loads(manifest.read_text())["files"][0]["records"][0]["before"]["index"]
    lines = work.read_bytes().splitlines(keepends=True)
    lines[k] = lines[k][:-2] + b"x" + lines[k][-2:]
    work.write_bytes(b"".join(lines) + claude_line("later", uuid="later"))
    again = invoke("undo", str(manifest))
    assert again.exit_code == 2 and "changed since" in again.stderr, again.output


def test_hostile10_undo_twice_after_a_line_was_rewritten(tmp_path: Path) -> None:
    work, manifest = _repaired(tmp_path, backup=True)
    lines = work.read_bytes().splitlines(keepends=True)
    lines[0] = _rewrite(lines[0])
    work.write_bytes(b"".join(lines))
    assert invoke("undo", str(manifest)).exit_code == 0
    restored = work.read_bytes()
    again = invoke("undo", str(manifest))
    assert again.exit_code == 0 and "already" in again.stderr, again.output
    assert work.read_bytes() == restored


_lines = appended_lines(0, 3)


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


# --- a line the runtime rewrote since the repair ------------------------------------------

CODEX = (
    FIXTURES / "codex" / "rollout-2026-03-02T10-21-07-0195a0c4-7d3e-7a21-9b5f-3c8e2d1f6a47.jsonl"
)


def _untouched(manifest: Path, lines: int) -> list[tuple[int, int]]:
    """(index in the repaired file, index in the original) of each line the repair left."""
    entry = json.loads(manifest.read_text())["files"][0]
    changed = {r["after"]["index"] for r in entry["records"]}
    inserted = sorted(r["after"]["index"] for r in entry["records"] if r["inserted"])
    return [(j, j - sum(1 for i in inserted if i < j)) for j in range(lines) if j not in changed]


def _rewrite(line: bytes) -> bytes:
    """The line as a runtime might write it again: one more key in its object."""
    body = line.rstrip(b"\n")
    assert body.endswith(b"}")
    return body[:-1] + b',"rewritten":true}' + line[len(body) :]


@pytest.mark.parametrize("original", [LEAKY, CODEX], ids=["claude-code", "codex"])
def test_hostile10_undo_keeps_a_line_the_runtime_rewrote(tmp_path: Path, original: Path) -> None:
    """Before: `changed since the repair ... restoring it would lose those changes`, exit 2,
    and nothing restored, though the line the runtime rewrote was none the repair wrote."""
    work, manifest = _repaired(tmp_path, True, original)
    repaired = work.read_bytes().splitlines(keepends=True)
    want = original.read_bytes().splitlines(keepends=True)
    j, i = _untouched(manifest, len(repaired))[0]
    repaired[j], want[i] = _rewrite(repaired[j]), _rewrite(want[i])
    line = claude_line("All done.", uuid="later")
    work.write_bytes(b"".join(repaired) + line)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output
    assert "keeping the lines written since the repair" in result.stderr
    assert work.read_bytes() == b"".join(want) + line


def test_hostile10_undo_still_refuses_a_line_the_repair_wrote_and_the_runtime_rewrote(
    tmp_path: Path,
) -> None:
    work, manifest = _repaired(tmp_path, True, CODEX)
    entry = json.loads(manifest.read_text())["files"][0]
    repaired = work.read_bytes().splitlines(keepends=True)
    k = entry["records"][0]["after"]["index"]
    repaired[k] = _rewrite(repaired[k])
    work.write_bytes(b"".join(repaired))
    now = work.read_bytes()
    result = invoke("undo", str(manifest))
    assert result.exit_code == 2 and "changed since the repair" in result.stderr
    assert work.read_bytes() == now


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    original=st.sampled_from([LEAKY, CODEX]),
    appended=_lines,
    backup=st.booleans(),
)
def test_hostile10_undo_puts_back_the_repair_and_keeps_every_rewrite_and_append(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    original: Path,
    appended: bytes,
    backup: bool,
) -> None:
    """repair, then any lines it left rewritten and any lines appended, then undo: the
    original with the same lines rewritten, then the appended ones; undo again: the same."""
    work, manifest = _repaired(tmp_path_factory.mktemp("merge"), backup, original)
    repaired = work.read_bytes().splitlines(keepends=True)
    want = original.read_bytes().splitlines(keepends=True)
    free = _untouched(manifest, len(repaired))
    for j, i in data.draw(st.lists(st.sampled_from(free), unique=True, max_size=4)):
        repaired[j], want[i] = _rewrite(repaired[j]), _rewrite(want[i])
    work.write_bytes(b"".join(repaired) + appended)
    result = invoke("undo", str(manifest))
    assert result.exit_code == 0, result.output
    assert work.read_bytes() == b"".join(want) + appended
    again = invoke("undo", str(manifest))  # and once more: done, nothing changed
    assert again.exit_code == 0, again.output
    assert work.read_bytes() == b"".join(want) + appended
