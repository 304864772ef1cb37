"""A large session scanned in byte ranges gives the result one pass gives (#13 item 3).

Pieces are scanned apart (here in this process, as a worker would) and merged in file
order; every line format's fixtures, repeated into a large session, give `scan_file`'s
result for any number of pieces and any context window, including none (then the merge's
context check must scan pieces again, which is what the window usually spares).
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.support import FIXTURES
from thinkfix.engine.inputs.files import Candidate, resolve
from thinkfix.engine.scan import sparse, split
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.scan.runner import scan_files
from thinkfix.engine.scan.task import scan_file
from thinkfix.formats import registry

# the files a scan may split: line files of formats the sparse reader takes (Goose reads its
# legacy lines with its store's reader, so it is never split)
SESSIONS = sorted(
    p
    for p in FIXTURES.rglob("*.jsonl*")
    if p.is_file() and sparse.supports(registry.detect_file(str(p)))  # type: ignore[arg-type]
)
OPTIONS = ScanOptions()


def _big(tmp: Path, source: Path, times: int) -> Candidate:
    data = source.read_bytes()
    path = tmp / source.name
    path.write_bytes(data * times)
    return Candidate(str(path), str(path), True, len(data) * times)


def _in_pieces(item: Candidate, count: int) -> tuple[ScannedFile, list[split.PieceResult]]:
    file = resolve(item, OPTIONS.inputs)
    assert split.splittable(file, OPTIONS)
    parts = [split.scan_piece(split.Piece(file, k, count), OPTIONS) for k in range(count)]
    return split.merge(parts, OPTIONS), parts


@pytest.mark.parametrize("source", SESSIONS, ids=lambda p: p.parent.name + "/" + p.name[:12])
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    count=st.integers(2, 9),
    window=st.sampled_from([0, 1, 300, split.WINDOW]),
    times=st.integers(3, 12),
)
def test_pieces_merge_to_the_one_pass_result(
    source: Path,
    count: int,
    window: int,
    times: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(split, "WINDOW", window)
    item = _big(tmp_path, source, times)
    merged, _ = _in_pieces(item, count)
    assert merged == scan_file(item, OPTIONS)


def test_a_piece_that_started_from_the_wrong_context_is_scanned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a window a Codex piece cannot know the turn's model: the check catches it."""
    monkeypatch.setattr(split, "WINDOW", 0)
    source = next(p for p in SESSIONS if p.name.startswith("rollout-2026"))  # enveloped
    item = _big(tmp_path, source, 20)
    merged, parts = _in_pieces(item, 6)
    assert any(b.ctx_in != a.ctx_out for a, b in pairwise(parts))
    assert merged == scan_file(item, OPTIONS)
    monkeypatch.setattr(split, "WINDOW", 1 << 20)  # with a window, the guesses are right
    _, parts = _in_pieces(item, 6)
    assert all(b.ctx_in == a.ctx_out for a, b in pairwise(parts))


def test_a_pool_splits_a_file_far_larger_than_its_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(split, "MIN_PIECE", 4096)
    big = _big(tmp_path, next(p for p in SESSIONS if p.parent.name == "claude-code"), 60)
    small = _big(tmp_path / "..", next(p for p in SESSIONS if p.parent.name == "pi"), 1)
    tasks = split.plan([big, small], OPTIONS, 2)
    assert sum(isinstance(t, split.Piece) for t in tasks) > 2
    assert sorted(scan_files([big, small], OPTIONS, jobs=2), key=lambda r: r.path) == sorted(
        scan_files([big, small], OPTIONS, jobs=1), key=lambda r: r.path
    )


def test_a_scan_whose_worker_dies_finishes_the_files_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared pool raises on a dead worker instead of hanging; scan redoes what is
    missing in its own process, and the results are the ones a one-process run gives."""
    import os

    from thinkfix.engine.scan import runner as scan_module

    items = [
        _big(tmp_path / str(n), source, 2)
        for n, source in enumerate(SESSIONS[:6])
        if (tmp_path / str(n)).mkdir() is None
    ]
    expected = sorted(scan_files(items, OPTIONS, jobs=1), key=lambda r: r.path)
    parent, real = os.getpid(), scan_module.scan_file

    def dying(item: object, options: ScanOptions = OPTIONS) -> ScannedFile:
        if os.getpid() != parent:
            os._exit(9)  # a worker killed mid-file
        return real(item, options)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module, "scan_file", dying)
    got = sorted(scan_files(items, OPTIONS, jobs=2), key=lambda r: r.path)
    assert got == expected


def _claude_line(uuid: str, message_id: str, block: dict[str, object]) -> bytes:
    return orjson.dumps(
        {
            "parentUuid": None,
            "isSidechain": False,
            "type": "assistant",
            "uuid": uuid,
            "timestamp": "2026-03-02T10:21:19.004Z",
            "message": {
                "model": "claude-sonnet-4-5",
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
            },
        }
    )


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    turns=st.integers(20, 60), count=st.integers(2, 7), called=st.lists(st.booleans(), min_size=1)
)
def test_a_piece_settles_its_texts_awaiting_evidence_itself(
    turns: int, count: int, called: list[bool], tmp_path: Path
) -> None:
    """A text with a bare `</think>` waits for rule 4's evidence: whether its message calls a
    tool on a later line (Claude Code writes each block on its own line). A piece reads on
    past its own end for it, so no piece fails and the file is not scanned again whole (it
    was, after every piece: a big Claude Code session took longer split than in one pass)."""
    lines = []
    for t in range(turns):
        mid = f"msg_{t:04d}"
        text = {"type": "text", "text": f"The answer is {t}, I think.\n</think>"}
        lines.append(_claude_line(f"u{t}a", mid, text))
        if called[t % len(called)]:
            call = {"type": "tool_use", "id": f"toolu_{t}", "name": "Bash", "input": {}}
            lines.append(_claude_line(f"u{t}b", mid, call))
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    item = Candidate(str(path), str(path), True, path.stat().st_size)
    merged, parts = _in_pieces(item, count)
    assert not [p.piece.index for p in parts if p.failed]
    whole = scan_file(item, OPTIONS)
    assert whole.findings  # not vacuous: the stray closes are found
    assert merged == whole


def test_a_session_rewritten_shorter_before_its_pieces_are_read_is_an_error(
    tmp_path: Path,
) -> None:
    """A runtime that saves by truncating and rewriting its session may do so between the
    split's plan and its pieces' reads: a piece past the new end reads nothing, the others
    read the new bytes. The merged result is a "changed while it was being read" error,
    never a clean count (review8, finding 5; it was counted clean before)."""
    leaky = next(p for p in SESSIONS if p.parent.name == "claude-code")
    item = _big(tmp_path, leaky, 12)
    file = resolve(item, OPTIONS.inputs)
    data = Path(item.path).read_bytes()
    Path(item.path).write_bytes(data[: len(data) // 3])  # rewritten, shorter
    parts = [split.scan_piece(split.Piece(file, k, 4), OPTIONS) for k in range(4)]
    merged = split.merge(parts, OPTIONS)
    assert any("changed while it was being read" in e.message for e in merged.errors), merged
