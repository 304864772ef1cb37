"""`thinkfix undo` takes a run's MANIFEST or its RUN_DIR (main 62523da), and says so in its
help (#26 item 4 review: the help named MANIFEST alone)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.commands import invoke
from tests.engine.repair_helpers import tree_bytes
from tests.engine.test_journal_log import _dies_before_its_manifest
from thinkfix.engine.ledger import manifest as mf

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKY = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"

pytestmark = pytest.mark.usefixtures("isolated_cli")


def test_undo_help_names_the_manifest_and_the_run_folder() -> None:
    """Failed before: `Usage: thinkfix undo [OPTIONS] MANIFEST`, no word of RUN_DIR."""
    result = invoke("undo", "--help")
    assert result.exit_code == 0
    usage = result.stdout.splitlines()[0]
    assert usage.endswith(" undo [OPTIONS] MANIFEST|RUN_DIR"), usage
    text = " ".join(result.stdout.split())
    assert "RUN_DIR, the run's folder" in text
    assert "--run-dir" in text


def test_undo_without_a_path_names_both_forms() -> None:
    result = invoke("undo")
    assert result.exit_code == 2
    assert "MANIFEST|RUN_DIR" in result.stderr


def _sessions(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        shutil.copy(LEAKY, root / f"s{i}.jsonl")
    return root


@pytest.mark.parametrize("form", ["manifest", "run-dir", "run-dir-journal-only"])
def test_undo_restores_from_the_manifest_or_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    root = _sessions(tmp_path / "in", 3)
    before = tree_bytes(root)
    if form == "run-dir-journal-only":  # as a run killed before its manifest leaves it
        _dies_before_its_manifest(monkeypatch)
    run_dir = tmp_path / "run"
    repaired = invoke(
        "repair",
        "--in-place",
        "--isolated",
        "--include-active",
        "--run-dir",
        str(run_dir),
        str(root),
    )
    assert tree_bytes(root) != before, repaired.output
    manifest = run_dir / mf.MANIFEST_NAME
    assert manifest.exists() is (form != "run-dir-journal-only")
    undone = invoke("undo", str(manifest if form == "manifest" else run_dir))
    assert undone.exit_code == 0, undone.output
    assert tree_bytes(root) == before
