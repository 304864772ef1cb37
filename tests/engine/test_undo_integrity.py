"""`thinkfix undo` follows only manifests thinkfix wrote (issue 11, item 6).

Each attack of the issue is replayed: a crafted manifest that overwrote a file
outside the repaired folder with chosen bytes and a setuid mode, one that wrote
through `../`, one that deleted a file with `"before": null`, and malformed ones
that gave tracebacks. Unsealed documents are refused by the seal; to show the
checks behind the seal hold too, some tests seal forged documents with the
state folder's own key (what an attacker cannot do).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tests.engine.repair_helpers import FIXTURES, run
from thinkfix.cli import main
from thinkfix.engine.ledger import integrity
from thinkfix.engine.ledger import journal as ledger_journal
from thinkfix.engine.ledger import manifest as mf
from thinkfix.engine.repair.model import WriteMode
from thinkfix.io import filestate, jsontext

CODEX = next((FIXTURES / "codex").glob("rollout-2026-*.jsonl"))  # the enveloped rollout
CHOSEN = b"root::0:0:owned:/root:/bin/sh\n"


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(folder))
    return folder


def _repaired(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "s" / CODEX.name
    work.parent.mkdir()
    work.write_bytes(CODEX.read_bytes())
    result = run([work], WriteMode.IN_PLACE, tmp_path)
    assert result.manifest_path is not None
    return work, Path(result.manifest_path)


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "etc" / "thinkfix-victim.txt"
    victim.parent.mkdir()
    victim.write_bytes(b"original victim bytes\n")
    victim.chmod(0o644)
    return victim


def _overwrite_entry(victim: Path, mode: str = "0o4777") -> dict[str, Any]:
    """The entry the issue's attack used: 'restore' the victim to chosen bytes."""
    now = victim.read_bytes()
    return {
        "role": "session",
        "path": str(victim),
        "source": str(victim),
        "target": str(victim),
        "link": None,
        "format": "codex",
        "compression": "none",
        "before": {
            "sha256": filestate.sha256(CHOSEN),
            "size": len(CHOSEN),
            "mode": mode,
            "backup": None,
            "bytes": {"text": CHOSEN.decode()},
        },
        "after": {"sha256": filestate.sha256(now), "size": len(now), "mode": "0o644"},
        "content": {"rebuildable": False},
        "records": [],
        "repairs": [],
    }


def _doc(
    entries: list[dict[str, Any]],
    roots: list[str],
    mode: str = "in-place",
    backup_dir: str | None = None,
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "tool": {"name": "thinkfix", "version": "0"},
        "mode": mode,
        "cwd": "/",
        "roots": roots,
        "backup_dir": backup_dir,
        "files": entries,
    }


def _write(path: Path, doc: dict[str, Any], *, seal: bool) -> str:
    body = jsontext.dumps(doc, indent=True, newline=True)
    if seal:
        body = integrity.seal_document(body, integrity.load_key(mf.state_dir(), create=True))
    path.write_bytes(body)
    return str(path)


def _undo(manifest: str) -> Any:
    return CliRunner().invoke(main, ["undo", manifest])


def _refused(result: Any, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("thinkfix: error: "), result.stderr
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.stderr, result.stderr


# --- the attacks of the issue ----------------------------------------------------------------


def test_a_crafted_manifest_cannot_overwrite_a_file_with_chosen_bytes_and_setuid(
    tmp_path: Path, state: Path
) -> None:
    _repaired(tmp_path)  # the user has run thinkfix before: the key exists
    victim = _victim(tmp_path)
    forged = _write(
        tmp_path / "evil.json", _doc([_overwrite_entry(victim)], [str(victim)]), seal=False
    )
    _refused(_undo(forged), "not sealed by thinkfix")
    assert victim.read_bytes() == b"original victim bytes\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644


def test_a_real_manifest_altered_to_point_elsewhere_fails_its_seal(
    tmp_path: Path, state: Path
) -> None:
    work, manifest = _repaired(tmp_path)
    victim = _victim(tmp_path)
    data = manifest.read_bytes().replace(str(work).encode(), str(victim).encode())
    manifest.write_bytes(data)
    _refused(_undo(str(manifest)), "seal does not match")
    assert victim.read_bytes() == b"original victim bytes\n"


def test_even_a_sealed_manifest_never_restores_setuid_setgid_or_sticky(
    tmp_path: Path, state: Path
) -> None:
    victim = _victim(tmp_path)
    forged = _write(
        tmp_path / "m.json", _doc([_overwrite_entry(victim, "0o7777")], [str(victim)]), seal=True
    )
    assert _undo(forged).exit_code == 0
    assert victim.read_bytes() == CHOSEN  # inside its roots and sealed: followed, but...
    assert stat.S_IMODE(victim.stat().st_mode) == 0o777  # ...permission bits only


def test_a_sealed_manifest_cannot_reach_outside_its_roots(tmp_path: Path, state: Path) -> None:
    victim = _victim(tmp_path)
    (tmp_path / "sessions").mkdir()
    forged = _write(
        tmp_path / "m.json",
        _doc([_overwrite_entry(victim)], [str(tmp_path / "sessions")]),
        seal=True,
    )
    _refused(_undo(forged), "outside the folders the repair was given")
    assert victim.read_bytes() == b"original victim bytes\n"


def test_undo_never_writes_through_dot_dot(tmp_path: Path, state: Path) -> None:
    victim = _victim(tmp_path)
    root = tmp_path / "sessions"
    root.mkdir()
    entry = _overwrite_entry(victim)
    entry["target"] = f"{root}/../etc/thinkfix-victim.txt"
    for seal in (False, True):
        forged = _write(tmp_path / "m.json", _doc([entry], [str(root)]), seal=seal)
        _refused(_undo(forged), "not sealed" if not seal else "not a normalised absolute path")
    assert victim.read_bytes() == b"original victim bytes\n"


def test_before_null_cannot_delete_a_session_file(tmp_path: Path, state: Path) -> None:
    victim = _victim(tmp_path)
    entry = _overwrite_entry(victim)
    entry["before"] = None  # "the repair created this file": undo would delete it
    for seal in (False, True):
        forged = _write(tmp_path / "m.json", _doc([entry], [str(victim)]), seal=seal)
        _refused(_undo(forged), "not sealed" if not seal else "before is null")
    assert victim.exists()


def test_a_backup_outside_the_run_is_never_read(tmp_path: Path, state: Path) -> None:
    victim = _victim(tmp_path)
    secret = tmp_path / "secret"
    secret.write_bytes(CHOSEN)
    entry = _overwrite_entry(victim)
    entry["before"]["backup"] = str(secret)
    del entry["before"]["bytes"]
    forged = _write(
        tmp_path / "m.json",
        _doc([entry], [str(victim)], backup_dir=str(tmp_path / "run")),
        seal=True,
    )
    _refused(_undo(forged), "outside the run's backup folder")


def test_a_folder_swapped_for_a_symlink_after_the_repair_is_not_written_through(
    tmp_path: Path, state: Path
) -> None:
    work, manifest = _repaired(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (work.parent).rename(elsewhere)
    os.symlink(elsewhere, work.parent)
    result = _undo(str(manifest))
    assert result.exit_code == 2 and "symbolic link" in result.stderr
    assert (elsewhere / CODEX.name).read_bytes() != CODEX.read_bytes()  # left as it was


def test_a_journal_thinkfix_did_not_write_is_refused(tmp_path: Path, state: Path) -> None:
    _repaired(tmp_path)
    victim = _victim(tmp_path)
    journal = tmp_path / "gone" / ("manifest.json" + mf.JOURNAL_SUFFIX)
    journal.mkdir(parents=True)
    (journal / "00000000.json").write_bytes(orjson.dumps([_overwrite_entry(victim)]))
    _refused(_undo(str(tmp_path / "gone" / "manifest.json")), "not a journal thinkfix wrote")
    ledger_journal.start_journal(
        str(journal), roots=[str(victim)], mode="in-place", backup_dir=None
    )
    _refused(_undo(str(tmp_path / "gone" / "manifest.json")), "not sealed by thinkfix")
    assert victim.read_bytes() == b"original victim bytes\n"


def test_a_manifest_from_another_state_folder_names_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "one"))
    work, manifest = _repaired(tmp_path)
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "two"))
    _refused(_undo(str(manifest)), "no undo key", "THINKFIX_STATE_DIR")
    integrity.load_key(str(tmp_path / "two"), create=True)
    _refused(_undo(str(manifest)), "another undo key")
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "one"))
    assert _undo(str(manifest)).exit_code == 0
    assert work.read_bytes() == CODEX.read_bytes()


def test_the_key_is_private_and_a_loose_one_is_refused(tmp_path: Path, state: Path) -> None:
    _work, manifest = _repaired(tmp_path)
    key = state / integrity.KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    key.chmod(0o644)
    _refused(_undo(str(manifest)), "readable or writable by others")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.pop("roots"),
        lambda d: d.update(roots="/"),
        lambda d: d.update(mode="sideways"),
        lambda d: d.update(files=[1]),
        lambda d: d["files"][0].update(target=None),
        lambda d: d["files"][0].update(target="relative/path"),
        lambda d: d["files"][0].update(after=[]),
        lambda d: d["files"][0]["after"].update(sha256="zz"),
        lambda d: d["files"][0].update(role="daemon"),
        lambda d: d["files"][0]["before"].update(mode="rwx"),
        lambda d: d["files"][0]["before"].update(mode="0o17777"),
        lambda d: d["files"][0]["before"].update(bytes=7),
        lambda d: d["files"][0]["content"].update(rebuildable=True),
        lambda d: d["files"][0].pop("content"),
    ],
)
def test_malformed_manifests_are_clear_errors_not_tracebacks(
    tmp_path: Path, state: Path, mutate: Any
) -> None:
    victim = _victim(tmp_path)
    doc = _doc([_overwrite_entry(victim)], [str(victim)])
    mutate(doc)
    for seal in (False, True):
        _refused(
            _undo(_write(tmp_path / "m.json", doc, seal=seal)),
            "not sealed" if not seal else "malformed manifest",
        )
    assert victim.read_bytes() == b"original victim bytes\n"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"[]",
        b"{",
        b'{"files": {}}',
        b"\xff\xfe",
        b'{"schema_version": 1, "files": [], "integrity": 1}',
    ],
)
def test_garbage_is_a_clear_error(tmp_path: Path, state: Path, content: bytes) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    _refused(_undo(str(path)))


def test_real_manifests_still_undo_byte_exact(tmp_path: Path, state: Path) -> None:
    work, manifest = _repaired(tmp_path)
    assert work.read_bytes() != CODEX.read_bytes()
    assert manifest.read_bytes().rstrip().endswith(b"}\n}")
    assert _undo(str(manifest)).exit_code == 0
    assert work.read_bytes() == CODEX.read_bytes()
