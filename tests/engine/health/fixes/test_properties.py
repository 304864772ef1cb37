"""Properties of the `lines` fix over damaged line files: what the checks find, it repairs,
and no whole record is lost."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.engine.health.run import check_bytes, check_records
from thinkfix.engine.health.where import Where
from thinkfix.engine.report.checks import Check
from thinkfix.formats import registry
from thinkfix.formats.repairs import Edits

FMT = registry.get("claude-code")


def _record(n: int) -> bytes:
    entry = {"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": f"m {n}"}}
    return json.dumps(entry, separators=(",", ":")).encode()


# How the line after each record is damaged: glued to the next, NUL-padded, or left alone.
_DAMAGE = st.sampled_from(["ok", "ok", "glue", "nul"])


@st.composite
def _damaged(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    n = draw(st.integers(1, 8))
    damage = draw(st.lists(_DAMAGE, min_size=n, max_size=n))
    out = b""
    for i, how in enumerate(damage):
        pad = b"\x00" * draw(st.integers(1, 9)) if how == "nul" else b""
        out += pad + _record(i) + (b"" if how == "glue" and i < n - 1 else b"\n")
    whole = [_record(i) for i in range(n)]
    if draw(st.booleans()):
        out += _record(n)[: draw(st.integers(1, 20))]  # a cut last line
    return out, whole


def _fixed(data: bytes) -> bytes:
    records = list(FMT.read(io.BytesIO(data)))
    health = check_records(records, Where("-", FMT.id), {Check.LINES})
    planned = plan_fixes(FMT.id, records, health.findings, {Fix.LINES})
    edits, _ = merged(Edits(len(records), {}, {}), planned)
    return b"".join(r.raw + r.eol for r in edits.after(records))


@settings(max_examples=60, deadline=None)
@given(_damaged())
def test_lines_fix_leaves_no_lines_finding_and_every_whole_record(
    case: tuple[bytes, list[bytes]],
) -> None:
    data, whole = case
    out = _fixed(data)
    assert check_bytes(out, FMT, {Check.LINES}).findings == ()
    assert [line for line in out.split(b"\n") if line] == whole
    assert _fixed(out) == out  # a second run changes nothing
