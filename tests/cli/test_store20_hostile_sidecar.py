"""A checkout's symlink where a repair writes its sidecar (`<session>.thinkfix.json`).

Built by hand (store20's review): a Codex session repaired with `--codex-mode sidecar` in a
folder holding `s.jsonl.thinkfix.json -> ~/elsewhere/other.thinkfix.json`. The repair read the
link's target as the sidecar it extends, copying that file's `reasoning` entries (another
project's reasoning) into the checkout's new sidecar, and recorded the link's target as the
file it wrote; then `undo` refused the whole manifest as malformed ("outside the folders the
repair was given"), so the session's repair could not be undone either. Now the repair
refuses a sidecar name that is a link (engine/repair/write.py `_sidecar`), naming it, and
writes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.commands import invoke

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CODEX = (
    FIXTURES / "codex" / "rollout-2025-06-14T09-12-40-3f9d2c7e-1b4a-4e8f-9a6d-5c2e7b0f1d83.jsonl"
)
PRIVATE = {"reasoning": [{"private": "another project's reasoning"}]}

pytestmark = pytest.mark.usefixtures("isolated_cli")


def test_a_sidecar_link_is_never_read_through_and_undo_still_works(tmp_path: Path) -> None:
    checkout, outside = tmp_path / "checkout", tmp_path / "home" / "other.thinkfix.json"
    checkout.mkdir()
    outside.parent.mkdir()
    outside.write_text(json.dumps(PRIVATE))
    work = checkout / "s.jsonl"
    shutil.copy(CODEX, work)
    (checkout / "s.jsonl.thinkfix.json").symlink_to(outside)
    manifest = tmp_path / "m.json"
    args = ["repair", "--in-place", "--isolated", "--include-active", "--codex-mode", "sidecar"]
    invoke(*args, "--manifest", str(manifest), str(work))
    assert json.loads(outside.read_text()) == PRIVATE
    copied = [p for p in checkout.iterdir() if not p.is_symlink() and b"another" in p.read_bytes()]
    assert copied == []  # nothing of the outside file reached the checkout
    if manifest.exists():  # whatever the repair did, its undo is whole
        result = invoke("undo", str(manifest))
        assert result.exit_code == 0, result.output
        assert work.read_bytes() == CODEX.read_bytes()
