"""Undo of a repaired Kimi `wire.jsonl` keeps what Kimi appended since.

Kimi CLI only appends to its wire file (`src/kimi_cli/wire/file.py`, `WireFile.append_record`
opens it with "a" and writes one `json.dumps` line), read by a reader of its own (runs of text
over lines), not the shared line reader. Before, undo refused the file once Kimi had appended a
record ("changed since the repair"), so a repair of a session still in use could not be taken
back; and two repairs of one wire file (a new leak appended between them) could not be undone
oldest first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_undo_appended import append_and_undo
from tests.commands import invoke

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
WIRE = next((FIXTURES / "kimi-wire").rglob("wire.jsonl"))

pytestmark = pytest.mark.usefixtures("isolated_cli")


def wire_line(kind: str, payload: dict[str, object], stamp: float = 1764301300.5) -> bytes:
    """A record as Kimi's `WireFile.append_record` writes it: `json.dumps`, default separators,
    no ASCII escaping, one line."""
    record = {"timestamp": stamp, "message": {"type": kind, "payload": payload}}
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def turn(text: str) -> bytes:
    """A whole turn Kimi appends: a prompt, a step, its answer text, the end."""
    return b"".join(
        [
            wire_line("TurnBegin", {"user_input": "and now?"}),
            wire_line("StepBegin", {"n": 1}),
            wire_line("ContentPart", {"type": "text", "text": text}),
            wire_line("TurnEnd", {}),
        ]
    )


def repair(work: Path, manifest: Path, *, backup: bool = True) -> None:
    args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest", str(manifest)]
    before = work.read_bytes()
    result = invoke(*args, *([] if backup else ["--no-backup"]), str(work))
    assert result.exit_code in (0, 1) and manifest.exists(), result.output
    assert work.read_bytes() != before  # not vacuous: the repair changed it


def _session(tmp: Path) -> Path:
    work = tmp / "s" / "wire.jsonl"
    work.parent.mkdir(parents=True)
    shutil.copy(WIRE, work)
    return work


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(
        st.sampled_from(["Done.", "<think>hm</think>Done.", "caf\u00e9 \u2014 ok"]), max_size=3
    ),
    backup=st.booleans(),
)
def test_undo_keeps_the_records_kimi_appended_since(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], backup: bool
) -> None:
    """The wire file is its bytes from before the repair followed by every line appended
    since, byte for byte, from a backup or rebuilt from the manifest (`--no-backup`)."""
    tmp = tmp_path_factory.mktemp("wire")
    work, manifest = _session(tmp), tmp / "m.json"
    repair(work, manifest, backup=backup)
    appended = wire_line("StatusUpdate", {"context_usage": 0.03}) + b"".join(map(turn, texts))
    append_and_undo(work, manifest, WIRE.read_bytes(), appended)
    again = invoke("undo", str(manifest))
    assert again.exit_code == 0, again.output
    assert work.read_bytes() == WIRE.read_bytes() + appended


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_two_repairs_of_a_wire_file_undo_in_either_order(
    tmp_path: Path, order: tuple[int, int]
) -> None:
    """Repair, Kimi appends a turn that leaks, repair again: undoing the two in either order
    leaves the original followed by the appended turn, byte for byte."""
    work = _session(tmp_path)
    manifests = [tmp_path / "m0.json", tmp_path / "m1.json"]
    repair(work, manifests[0])
    appended = turn("<think>again</think>The flag is set.")
    with open(work, "ab") as fp:
        fp.write(appended)
    repair(work, manifests[1])
    for k in order:
        result = invoke("undo", str(manifests[k]))
        assert result.exit_code == 0, result.output
    assert work.read_bytes() == WIRE.read_bytes() + appended


def test_an_incremental_scan_of_an_appended_wire_file_is_the_full_scan(tmp_path: Path) -> None:
    """Kimi appends a leaking turn after an incremental scan read the file: the next
    incremental scan reports what a full scan of the same bytes reports."""
    work = _session(tmp_path)
    state = tmp_path / "state.json"

    def scan(*extra: str) -> tuple[int, dict[str, object]]:
        args = ["scan", "--isolated", "--output-format", "json", *extra, str(work.parent)]
        result = invoke(*args)
        doc = json.loads(result.stdout)
        return result.exit_code, {k: doc[k] for k in ("files", "summary") if k in doc}

    scan("--incremental", "--state", str(state))
    with open(work, "ab") as fp:
        fp.write(turn("<think>late</think>Answer.") + wire_line("StatusUpdate", {"n": 2}))
    assert scan("--incremental", "--state", str(state)) == scan()
