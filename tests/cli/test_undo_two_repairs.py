"""Undo of several repairs of one living session, in any order (undo11): a session repaired,
then appended to by its runtime, repaired again (the new leak), appended to again. Each undo
puts back exactly what its own repair changed and keeps every other line, whichever repair is
undone first; after all of them the session is the original followed by every appended line,
byte for byte. Before, undoing an older repair first moved the newer repair's records (a Codex
repair inserts reasoning items, which the older undo dropped) and the newer one was refused.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_undo_appended import FIXTURES, LEAKY
from tests.commands import invoke
from tests.engine.conftest import claude_line

pytestmark = pytest.mark.usefixtures("isolated_cli")

CODEX = (
    FIXTURES / "codex" / "rollout-2026-03-02T10-21-07-0195a0c4-7d3e-7a21-9b5f-3c8e2d1f6a47.jsonl"
)
PI = FIXTURES / "pi" / "2026-01-15T08-30-12-417Z_4b1d6e2a-8c3f-4e5a-9d7b-1f0e2c3a4b5d.jsonl"


def _stamp(n: int) -> str:
    return f"2026-03-02T11:{n // 60 % 60:02d}:{n % 60:02d}.{n // 3600:03d}Z"


def _codex(n: int, text: str) -> bytes:
    """An assistant message of a Codex rollout and its `agent_message` event, as the runtime
    appends them (a repair of a leak there inserts reasoning items: the line count changes)."""
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }
    lines = [
        {"timestamp": _stamp(n), "type": "response_item", "payload": item},
        {
            "timestamp": _stamp(n),
            "type": "event_msg",
            "payload": {"type": "agent_message", "message": text},
        },
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _pi(n: int, text: str) -> bytes:
    """An assistant message of a pi session (a repair edits it in place)."""
    line = {
        "type": "message",
        "id": f"later{n:04d}",
        "parentId": f"later{n - 1:04d}",
        "timestamp": _stamp(n),
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "openai-completions",
            "provider": "openrouter",
            "model": "minimax/minimax-m2",
        },
    }
    return orjson.dumps(line) + b"\n"


def _claude(n: int, text: str) -> bytes:
    return claude_line(text, uuid=f"later-{n}")


Line = Callable[[int, str], bytes]
FORMATS: dict[str, tuple[Path, Line]] = {
    "codex": (CODEX, _codex),
    "claude-code": (LEAKY, _claude),
    "pi": (PI, _pi),
}

LEAKS = ["<think>\nlater reasoning\n</think>\n\nDone.", "<think>caf\u00e9</think>Later answer."]
CLEAN = ["All done.", "caf\u00e9", "Use <think> tags in prose."]


class Session:
    """One session repaired several times, appended to between repairs: what each segment
    was as the runtime wrote it and as its repair left it, to say what each undo gives."""

    def __init__(self, tmp: Path, original: Path) -> None:
        self.work = tmp / "s" / original.name
        self.work.parent.mkdir(parents=True)
        shutil.copy(original, self.work)
        self.tmp = tmp
        self.raw: list[bytes] = []  # segment k as written (0: the original session)
        self.repaired: list[bytes] = []  # segment k as repair k+1 left it
        self.manifests: list[Path] = []
        self.tail = b""  # appended after the last repair

    def repair(self, *flags: str) -> Path:
        before = self.work.read_bytes()
        done = b"".join(self.repaired)
        assert before.startswith(done)
        manifest = self.tmp / f"m{len(self.manifests) + 1}.json"
        args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest"]
        result = invoke(*args, str(manifest), *flags, str(self.work))
        assert result.exit_code in (0, 1) and manifest.exists(), result.output
        after = self.work.read_bytes()
        assert after != before and after.startswith(done)  # it repaired the new segment alone
        self.raw.append(before[len(done) :])
        self.repaired.append(after[len(done) :])
        self.manifests.append(manifest)
        return manifest

    def append(self, data: bytes) -> None:
        with open(self.work, "ab") as fp:
            fp.write(data)

    def expected(self, undone: set[int]) -> bytes:
        """The session once the repairs numbered in `undone` are undone (and no other)."""
        segments = [
            self.raw[k] if k in undone else self.repaired[k] for k in range(len(self.repaired))
        ]
        return b"".join(segments) + self.tail


def _living(tmp: Path, fmt: str, appends: Sequence[Sequence[tuple[bool, str]]]) -> Session:
    """The session of `fmt` repaired len(appends) times: each append's lines (leaking or
    not) written after a repair, the next repair made on them (the last append kept)."""
    original, line = FORMATS[fmt]
    session = Session(tmp, original)
    session.repair()
    n = 0
    for k, lines in enumerate(appends):
        data = b"".join(line(n + j, text) for j, (_, text) in enumerate(lines))
        n += len(lines)
        session.append(data)
        if k < len(appends) - 1:
            session.repair()
        else:
            session.tail = data
    return session


def _undo_in(session: Session, order: Sequence[int]) -> None:
    undone: set[int] = set()
    for k in order:
        result = invoke("undo", str(session.manifests[k]))
        assert result.exit_code == 0, (order, k, result.output)
        undone.add(k)
        assert session.work.read_bytes() == session.expected(undone), (order, k)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("order", [(1, 0), (0, 1)], ids=["newest-first", "oldest-first"])
def test_undo_two_repairs_in_either_order_gives_the_original_and_every_appended_line(
    tmp_path: Path, fmt: str, order: tuple[int, int]
) -> None:
    """repair, append a leak, repair, append: each undo gives back its own repair's
    records alone, and both give the original followed by both appends. Before: Codex's
    oldest-first order refused the second undo (`changed since the repair`), exit 2."""
    session = _living(tmp_path, fmt, [[(True, LEAKS[0]), (False, CLEAN[0])], [(False, CLEAN[1])]])
    _undo_in(session, order)
    assert session.work.read_bytes() == FORMATS[fmt][0].read_bytes() + session.raw[1] + session.tail
    again = invoke("undo", str(session.manifests[order[0]]))  # and once more: done
    assert again.exit_code == 0 and "already" in again.stderr, again.output


def test_undo_of_a_record_two_repairs_changed_refuses_the_older_first_naming_it(
    tmp_path: Path,
) -> None:
    """The first repair took out only `<reasoning>` (`--tags reasoning`); the second took
    `<think>` out of the same message. Undoing the first alone cannot give back what it
    changed without undoing the second's change too: refused, the line named, the file as
    it was (the lines appended since kept); newest first, both undo exactly."""
    text = "<reasoning>\nplan\n</reasoning>\n<think>\nmore\n</think>\n\nDone."
    session = Session(tmp_path, LEAKY)
    session.append(_claude(0, text))
    session.repair("--tags", "reasoning")
    session.append(_claude(1, CLEAN[0]))  # the runtime goes on
    data = session.work.read_bytes()
    manifest = session.tmp / "m2.json"
    args = ["repair", "--in-place", "--isolated", "--include-active", "--manifest", str(manifest)]
    assert invoke(*args, str(session.work)).exit_code in (0, 1)  # 1: a leak left
    assert session.work.read_bytes() != data
    session.append(_claude(2, CLEAN[1]))
    now = session.work.read_bytes()
    line = len(LEAKY.read_bytes().splitlines()) + 1
    refused = invoke("undo", str(session.manifests[0]))
    assert refused.exit_code == 2, refused.output
    assert "changed since the repair" in refused.stderr
    assert f"line {line}" in refused.stderr and "undo that repair first" in refused.stderr
    assert session.work.read_bytes() == now  # nothing written, the appended lines there
    assert invoke("undo", str(manifest)).exit_code == 0
    assert invoke("undo", str(session.manifests[0])).exit_code == 0
    want = LEAKY.read_bytes() + _claude(0, text) + _claude(1, CLEAN[0]) + _claude(2, CLEAN[1])
    assert session.work.read_bytes() == want


_line = st.one_of(
    st.sampled_from(LEAKS).map(lambda text: (True, text)),
    st.sampled_from(CLEAN).map(lambda text: (False, text)),
)


@st.composite
def _appends(draw: st.DrawFn) -> list[list[tuple[bool, str]]]:
    """Lines appended after each of 2 or 3 repairs: the runtime's, before each repair but
    the first a leak among them (the next repair has something to do), any after the last."""
    repairs = draw(st.integers(2, 3))
    out = []
    for k in range(repairs):
        lines = draw(st.lists(_line, max_size=3))
        if k < repairs - 1 and not any(leak for leak, _ in lines):
            at = draw(st.integers(0, len(lines)))
            lines.insert(at, (True, draw(st.sampled_from(LEAKS))))
        out.append(lines)
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fmt=st.sampled_from(sorted(FORMATS)), appends=_appends(), data=st.data())
def test_undo_of_several_repairs_in_any_order_keeps_every_appended_line(
    tmp_path_factory: pytest.TempPathFactory,
    fmt: str,
    appends: list[list[tuple[bool, str]]],
    data: st.DataObject,
) -> None:
    """2 or 3 repairs of a living session, any lines appended between and after them, the
    repairs undone in any order: after each undo, exactly that repair's records are given
    back (the others' kept); after all, the original then every appended line."""
    session = _living(tmp_path_factory.mktemp("living"), fmt, appends)
    orders = list(itertools.permutations(range(len(session.manifests))))
    order = data.draw(st.sampled_from(orders))
    _undo_in(session, order)
    want = FORMATS[fmt][0].read_bytes() + b"".join(session.raw[1:]) + session.tail
    assert session.work.read_bytes() == want


def test_the_manifests_of_a_codex_session_record_inserted_items(tmp_path: Path) -> None:
    """Not vacuous: the Codex repairs insert records (what moves the later ones)."""
    session = _living(tmp_path, "codex", [[(True, LEAKS[0])], []])
    for manifest in session.manifests:
        entry = json.loads(manifest.read_text())["files"][0]
        assert any(r["inserted"] for r in entry["records"])
