"""Repair's fast paths (#26 item 4) change no byte: the repaired files and the undo manifest
are the same with them and without (the line index keeping a start every 256 bytes instead of
every 4 KB, `pread` instead of `preadv`, the original's runs copied by `read` and `write`
instead of by the kernel), on every fixture and on generated sessions of Claude Code, pi and
Codex (leaks at the start, middle and end, decoys, blank lines, CRLF, a last line cut off)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import FIXTURES
from tests.formats.test_fast_paths import GENERATED, lines_of
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.repair import lineindex as lineindex_module
from thinkfix.engine.repair import source as source_module
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, WriteMode
from thinkfix.engine.repair.source import Source
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.io import ranges

#: What differs between two runs of the same repair: when it ran and its own signature.
_VOLATILE = ("created", "integrity")
# each example writes files under one tmp_path (a fresh folder per example inside it)
ON_FILES = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _repaired(
    inputs: Path,
    work: Path,
    fast: bool,
    scan: ScanOptions | None = None,
    kernel: bool = True,
    whole: bool = True,
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Every output file's bytes (by path under the output) and the manifest, less its
    volatile keys, of `repair --out` of `inputs` with the fast paths on or off (`whole`: the
    survey keeps a file read in one block, and a repaired one is written from those bytes)."""
    out, run_dir = work / "out", work / "run"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(run_dir, ignore_errors=True)
    options = RepairOptions(
        mode=WriteMode.OUT, out_dir=str(out), run_dir=str(run_dir), scan=scan or ScanOptions()
    )
    with pytest.MonkeyPatch.context() as mp:
        if not fast:
            mp.setattr(lineindex_module, "SPACING", 256)
            mp.setattr(source_module, "_PREADV", None)
        if not fast or not whole:
            # the survey through the buffered stream: no bytes kept (`Source.whole`)
            mp.setattr(
                Source, "survey_stream", lambda self, hashed=False: self.stream(hashed=hashed)
            )
        if not fast or not kernel:  # every byte through this process: `pread` then `write`
            mp.setattr(ranges, "_COPY_FILE_RANGE", None)
            mp.setattr(ranges, "_SENDFILE", None)
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
@settings(ON_FILES, max_examples=20)
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


#: A line of each format whose assistant text leaks (the normalizer moves the `<think>` block).
_LEAK = "<think>check the caller</think>The fix is in."
LEAKS = {
    "claude-code": orjson.dumps(
        {
            "parentUuid": None,
            "type": "assistant",
            "uuid": "u9",
            "sessionId": "s1",
            "message": {
                "model": "qwen3:32b",
                "id": "msg_9",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": _LEAK}],
            },
        }
    ),
    "pi": orjson.dumps(
        {
            "type": "message",
            "id": "e9",
            "parentId": None,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": _LEAK}],
                "provider": "x",
                "model": "qwen3:32b",
                "stopReason": "stop",
            },
        }
    ),
    "codex": orjson.dumps(
        {
            "timestamp": "2026-03-02T10:21:19.004Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": _LEAK}],
            },
        }
    ),
}


@pytest.mark.parametrize("name", sorted(LEAKS))
@settings(ON_FILES, max_examples=15)
@given(data=st.data())
def test_runs_copied_by_the_kernel_are_the_bytes_a_plain_copy_writes(
    name: str, data: st.DataObject, tmp_path: Path
) -> None:
    """`--out` copies the original's untouched runs by the kernel (`ranges.copy_range`) where
    the survey kept no bytes: the output and manifest are those of the same repair with every
    byte read and written by this process, and of the output joined from the bytes the survey
    kept, whether the leak is the first line, one in the middle or the last, with LF or CRLF
    lines, with or without a final newline."""
    lines = data.draw(st.lists(lines_of(name) | st.just(b""), max_size=30))
    at = data.draw(st.sampled_from([0, len(lines) // 2, len(lines)]))
    lines.insert(at, LEAKS[name])
    eol = data.draw(st.sampled_from([b"\n", b"\r\n"]))
    ending = data.draw(st.sampled_from([eol, b""]))
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.jsonl").write_bytes(eol.join(lines) + ending)
    scan = ScanOptions(inputs=InputOptions(format=name), allow_no_sessions=True)
    kernel = _repaired(folder, tmp_path, True, scan, whole=False)
    assert any(entry.get("records") for entry in kernel[1]["files"])  # the leak was repaired
    assert kernel == _repaired(folder, tmp_path, True, scan, kernel=False, whole=False)
    assert kernel == _repaired(folder, tmp_path, True, scan)
