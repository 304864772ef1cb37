"""`--parse-all` scans every record read before a read failure (zstd20's request 1).

The default scan reads blocks and keeps what decoded before a failure; `--parse-all` read
its records 512 at a time with `list(islice(...))`, so a failure part-way through a batch
dropped every record already read into it: a `.jsonl.xz` with garbage after its stream said
`read failed after 1000 records` (exit 2) and reported none of the leaks in its last 488
records, where the default scan reported them.
"""

from __future__ import annotations

import lzma
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.test_repair_record_memory import _answer
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats.reader import in_batches
from thinkfix.formats.records import Record


def _line(i: int, text: str) -> bytes:
    """A Claude Code assistant line, as the repair memory tests write them."""
    return _answer(i, text) + b"\n"


@pytest.mark.parametrize("prefilter", [True, False], ids=["default", "parse-all"])
def test_leaks_read_before_a_failure_are_reported_on_every_path(
    tmp_path: Path, prefilter: bool
) -> None:
    lines = [
        _line(i, f"<think>plan {i}</think>answer" if i == 900 else "answer") for i in range(1000)
    ]
    path = tmp_path / "s.jsonl.xz"
    path.write_bytes(lzma.compress(b"".join(lines)) + b"junk\n")
    report = scan([str(path)], ScanOptions(prefilter=prefilter), jobs=1)
    assert [f.line for f in report.findings] == [901]
    assert len(report.errors) == 1 and "trailing garbage" in report.errors[0].message


class _Failed(Exception):
    pass


@settings(max_examples=50, deadline=None)
@given(n=st.integers(0, 40), fail=st.booleans(), size=st.integers(1, 9))
def test_in_batches_gives_every_record_read_before_the_failure(
    n: int, fail: bool, size: int
) -> None:
    def records() -> Iterator[Record]:
        for i in range(n):
            yield Record(index=i, line=i + 1, raw=b"{}")
        if fail:
            raise _Failed

    got: list[int] = []
    try:
        for batch in in_batches(records(), size):
            assert 0 < len(batch) <= size
            got.extend(r.index for r in batch)
    except _Failed:
        assert fail
    else:
        assert not fail
    assert got == list(range(n))
