"""Repair's fast paths (#26 item 4) change no byte: the repaired files and the undo manifest
are the same with them and without (the line index keeping a start every 256 bytes instead of
every 4 KB, `pread` instead of `preadv`), on every fixture and on generated sessions of Claude
Code, pi and Codex (leaks, decoys, blank lines, a last line cut off)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import FIXTURES
from tests.formats.test_fast_paths import GENERATED, lines_of
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.repair import source as source_module
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.engine.scan.options import ScanOptions

#: What differs between two runs of the same repair: when it ran and its own signature.
_VOLATILE = ("created", "integrity")


def _repaired(
    inputs: Path, work: Path, fast: bool, scan: ScanOptions | None = None
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Every output file's bytes (by path under the output) and the manifest, less its
    volatile keys, of `repair --out` of `inputs` with the fast paths on or off."""
    out, run_dir = work / "out", work / "run"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(run_dir, ignore_errors=True)
    options = RepairOptions(
        mode=WriteMode.OUT, out_dir=str(out), run_dir=str(run_dir), scan=scan or ScanOptions()
    )
    with pytest.MonkeyPatch.context() as mp:
        if not fast:
            mp.setattr(source_module, "SPACING", 256)
            mp.setattr(source_module, "_PREADV", None)
        result = repair_paths([str(inputs)], options)
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    manifest: dict[str, Any] = {}
    if result.manifest_path is not None:
        manifest = json.loads(Path(result.manifest_path).read_text(encoding="utf-8"))
        for key in _VOLATILE:
            manifest.pop(key, None)
    return files, manifest


def test_fixtures_repair_identically_with_and_without_the_fast_paths(tmp_path: Path) -> None:
    fast = _repaired(FIXTURES, tmp_path, fast=True)
    slow = _repaired(FIXTURES, tmp_path, fast=False)
    assert fast[0] and fast[1]["files"]  # not vacuous: fixtures were written and journaled
    assert any(entry.get("records") for entry in fast[1]["files"])  # and some repaired
    assert fast == slow


@pytest.mark.parametrize("name", sorted(GENERATED))
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_generated_sessions_repair_identically_with_and_without_the_fast_paths(
    name: str, data: st.DataObject, tmp_path: Path
) -> None:
    lines = data.draw(st.lists(lines_of(name) | st.just(b""), min_size=1, max_size=60))
    ending = data.draw(st.sampled_from([b"\n", b""]))  # a last line cut off, or not
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.jsonl").write_bytes(b"\n".join(lines) + ending)
    scan = ScanOptions(inputs=InputOptions(format=name), allow_no_sessions=True)
    assert _repaired(folder, tmp_path, True, scan) == _repaired(folder, tmp_path, False, scan)
