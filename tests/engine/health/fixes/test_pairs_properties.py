"""Properties of `--fix tool-pairs` over generated sessions: whatever calls are left open and
whatever results answer nothing, the fix leaves no `tool-pairs` finding, keeps every other
record byte for byte and in order, and a second run changes nothing."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.engine.health.run import check_bytes, check_records
from thinkfix.engine.health.where import Where
from thinkfix.engine.report.checks import Check
from thinkfix.formats import registry
from thinkfix.formats.repairs import Edits

#: Each turn: how many calls, which of them are answered, how many orphan results follow.
_TURN = st.tuples(
    st.integers(1, 3), st.lists(st.booleans(), min_size=3, max_size=3), st.integers(0, 1)
)


def _openai_session(turns: list[tuple[int, list[bool], int]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for t, (n, answered, orphans) in enumerate(turns):
        ids = [f"call_{t}_{k}" for k in range(n)]
        calls = [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ]
        out.append({"role": "assistant", "content": None, "tool_calls": calls})
        out += [
            {"role": "tool", "tool_call_id": i, "content": "ok"} for i, a in zip(ids, answered) if a
        ]
        out += [
            {"role": "tool", "tool_call_id": f"gone_{t}_{k}", "content": "x"}
            for k in range(orphans)
        ]
        out.append({"role": "user", "content": f"next {t}"})
    return out


def _cline_session(turns: list[tuple[int, list[bool], int]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    for t, (n, answered, orphans) in enumerate(turns):
        ids = [f"toolu_{t}_{k}" for k in range(n)]
        out.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": i, "name": "f", "input": {}} for i in ids],
            }
        )
        blocks = [
            {"type": "tool_result", "tool_use_id": i, "content": "ok"}
            for i, a in zip(ids, answered)
            if a
        ]
        blocks += [
            {"type": "tool_result", "tool_use_id": f"gone_{t}_{k}", "content": "x"}
            for k in range(orphans)
        ]
        blocks.append({"type": "text", "text": f"next {t}"})
        out.append({"role": "user", "content": blocks})
    return out


def _fix(fmt: str, data: bytes) -> bytes:
    f = registry.get(fmt)
    records = list(f.read(io.BytesIO(data)))
    health = check_records(records, Where("-", fmt), {Check.TOOL_PAIRS})
    planned = plan_fixes(fmt, records, health.findings, {Fix.TOOL_PAIRS})
    edits, _ = merged(Edits(len(records), {}, {}), planned)
    return b"".join(r.raw + r.eol for r in edits.after(records))


@settings(max_examples=40, deadline=None)
@given(st.lists(_TURN, min_size=1, max_size=4))
def test_openai_lines_fix_pairs_every_call_and_keeps_every_other_line(
    turns: list[tuple[int, list[bool], int]],
) -> None:
    lines = [json.dumps(m, separators=(",", ":")).encode() for m in _openai_session(turns)]
    data = b"".join(x + b"\n" for x in lines)
    out = _fix("openai-chat", data)
    assert check_bytes(out, registry.get("openai-chat"), {Check.TOOL_PAIRS}).findings == ()
    kept = [x for x in lines if b'"gone_' not in x]
    assert [x for x in out.split(b"\n") if x and x in kept] == kept
    assert _fix("openai-chat", out) == out


@settings(max_examples=40, deadline=None)
@given(st.lists(_TURN, min_size=1, max_size=4))
def test_cline_history_fix_pairs_every_call_and_is_idempotent(
    turns: list[tuple[int, list[bool], int]],
) -> None:
    data = json.dumps(_cline_session(turns), separators=(",", ":")).encode()
    out = _fix("cline", data)
    assert check_bytes(out, registry.get("cline"), {Check.TOOL_PAIRS}).findings == ()
    assert _fix("cline", out) == out
    assert [m["role"] for m in json.loads(out)] == [m["role"] for m in json.loads(data)]
