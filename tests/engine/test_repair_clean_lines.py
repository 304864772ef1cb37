"""Repair's survey takes a block's clean assistant lines at once (#26 item 4).

`plan.CleanLines` is the sparse reader's block survey for repair: it accepts, for a whole
block, the wanted lines the line-by-line path would skip (no possible delimiter, one compact
object in UTF-8, within the record limit). The reader must yield exactly the records it
yields without it, with the native passes and without, whatever the block size; and the
accepted lines must never reach the per-line test.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.repair_helpers import options
from tests.engine.test_bulk import CANONICAL, NAMES
from tests.engine.test_repair_fast_identical import LEAKS
from tests.formats.test_fast_paths import GENERATED
from thinkfix.engine.repair import plan as plan_module
from thinkfix.engine.repair.model import WriteMode
from thinkfix.engine.repair.plan import CleanLines, _sound, _uncounted, plan_file
from thinkfix.engine.repair.source import Source
from thinkfix.engine.scan import native, sparse
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import delimiter_candidates
from thinkfix.formats import registry
from thinkfix.formats.records import set_record_limit

# Lines the block test must turn away: not an object, cut off, not UTF-8, CR before the
# newline, a possible delimiter spelled as an escape, one long enough to pass a small record
# limit; and one the block takes that the reader must still read, for its context marker.
_HOSTILE = st.sampled_from(
    [
        b'["type","assistant"]',
        b'{"type":"assistant","message":{"role":"assistant","content":"cut off',
        b'{"type":"assistant","message":{"role":"assistant","content":"\xff\xfe"}}',
        b'{"type":"assistant","message":{"role":"assistant","content":"caf\xc3\xa9"}}',
        b'{"type":"assistant","message":{"role":"assistant","content":"a"}}\r',
        b' {"type":"assistant","message":{"role":"assistant","content":"a"}}',
        b'{"type":"assistant","message":{"role":"assistant","content":"\\u003cthink>x"}}',
        b'{"type":"assistant","message":{"role":"assistant","content":"' + b"y" * 900 + b'"}}',
        # clean, but holding a context marker (Claude Code's `"thinking"`): read as marked
        (
            b'{"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking",'
            b'"thinking":"x"},{"type":"text","text":"ok"}]}}'
        ),
    ]
)


def _lines(name: str) -> st.SearchStrategy[list[bytes]]:
    line = st.one_of(CANONICAL[name], GENERATED[name], st.just(LEAKS[name]), _HOSTILE, st.just(b""))
    return st.lists(line, min_size=1, max_size=40)


def _records(
    data: bytes, name: str, block: int, survey: bool
) -> tuple[list[tuple[int, bytes, bytes, object]], int]:
    """What the reader yields as repair's survey calls it (with or without `CleanLines`),
    and the lines it counted."""
    fmt, policy = registry.get(name), ScanOptions().policy
    extra = {"surveyor": CleanLines(policy), "bulk": _uncounted} if survey else {}
    reader = sparse.SparseReader(
        fmt,
        io.BufferedReader(io.BytesIO(data)),
        block,
        candidates=delimiter_candidates(policy),
        quick=_sound,
        **extra,  # type: ignore[arg-type]
    )
    out = [(r.index, r.raw, r.eol, r.ctx) for r in reader]
    return out, reader.records


@contextmanager
def _native(on: bool) -> Iterator[None]:
    with patch.object(native, "USE", on), patch.object(native, "WARM_UP", 0):
        yield


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_the_block_survey_yields_what_the_line_by_line_survey_yields(
    name: str, data: st.DataObject
) -> None:
    lines = data.draw(_lines(name))
    ending = data.draw(st.sampled_from([b"\n", b""]))
    content = b"\n".join(lines) + ending
    block = data.draw(st.sampled_from([64, 512, 4096, 1 << 22]))
    fast = data.draw(st.booleans())
    limit = data.draw(st.sampled_from([0, 600]))
    set_record_limit(limit)
    try:
        with _native(fast):
            assert _records(content, name, block, True) == _records(content, name, block, False)
    finally:
        set_record_limit(ScanOptions().max_record_size)


def test_clean_assistant_lines_never_reach_the_per_line_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of clean assistant lines and one leak: the clean ones are taken by the block,
    so `_sound` (the per-line test) sees none of them, and the leak is still planned."""
    clean = LEAKS["claude-code"].replace(b"<think>check the caller</think>", b"")
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([clean] * 300 + [LEAKS["claude-code"]] + [clean] * 300) + b"\n")
    seen: list[bytes] = []

    def counting(raw: bytes, ctx: object) -> bool:
        seen.append(raw)
        return _sound(raw, ctx)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_module, "_sound", counting)
    src = Source.open(str(path))
    try:
        plan = plan_file(
            str(path), registry.get("claude-code"), src, options(WriteMode.DRY_RUN, tmp_path)
        )
    finally:
        src.close()
    assert len(plan.changes) == 1 and plan.count == 601
    assert seen == []
