"""`--fix signature` drops refused thinking blocks (reasoning kept); `--fix secrets` masks."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

from thinkfix.engine.health.fixes.model import Fix, resolve
from thinkfix.engine.health.fixes.plan import merged, plan_fixes
from thinkfix.formats import registry
from thinkfix.formats.repairs import Edits

TOKEN = "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ12"


@dataclass(frozen=True)
class Found:
    record_index: int
    problem: str
    json_path: str
    detail: str = ""
    line: int = 0
    end_line: int = 0


def _assistant(uid: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "type": "assistant",
        "message": {"id": "m_" + uid, "role": "assistant", "content": blocks},
        "uuid": uid,
    }


SIGNED = {"type": "thinking", "thinking": "plan A", "signature": "EqQBCkYIBxgCKkA"}
UNSIGNED = {"type": "thinking", "thinking": "plan B"}
TEXT = {"type": "text", "text": "Done."}


def _run(entries: list[dict[str, Any]], findings: list[Found], fixes: set[Fix]) -> Any:
    data = b"".join(json.dumps(e).encode() + b"\n" for e in entries)
    records = list(registry.get("claude-code").read(io.BytesIO(data)))
    planned = plan_fixes("claude-code", records, findings, fixes)
    edits = merged(Edits(len(records), {}, {}), planned)[0]
    out = b"".join(r.raw + r.eol for r in edits.after(records))
    return [json.loads(x) for x in out.splitlines()], planned.fixed, out


def test_signature_fix_drops_the_unsigned_and_the_repeated_block_and_keeps_their_reasoning() -> (
    None
):
    entries = [_assistant("a", [SIGNED, TEXT]), _assistant("b", [UNSIGNED, SIGNED, TEXT])]
    findings = [
        Found(1, "missing-signature", "message.content[0]"),
        Found(1, "duplicate-thinking", "message.content[1]"),
    ]
    out, fixed, _ = _run(entries, findings, {Fix.SIGNATURE})
    assert out[0] == entries[0]
    assert out[1]["message"]["content"] == [TEXT]
    assert [f.dropped for f in fixed] == [("plan B",), ("plan A",)]


def test_signature_fix_keeps_an_emptied_message_as_an_empty_array() -> None:
    out, _, _ = _run(
        [_assistant("a", [UNSIGNED])],
        [Found(0, "missing-signature", "message.content[0]")],
        {Fix.SIGNATURE},
    )
    assert out[0]["message"]["content"] == []


def test_signature_fix_leaves_a_path_that_is_no_thinking_block() -> None:
    entries = [_assistant("a", [TEXT])]
    out, fixed, _ = _run(
        entries, [Found(0, "missing-signature", "message.content[0]")], {Fix.SIGNATURE}
    )
    assert out == entries and fixed == []


def test_secrets_fix_masks_the_string_and_keeps_every_other_byte() -> None:
    user = {
        "type": "user",
        "message": {"role": "user", "content": f"use {TOKEN} please"},
        "uuid": "u",
    }
    entries = [user, _assistant("a", [TEXT])]
    out, fixed, raw = _run(
        entries, [Found(0, "secret", "message.content", "github-token")], {Fix.SECRETS}
    )
    assert out[0]["message"]["content"] == "use [REDACTED:github-token] please"
    assert TOKEN.encode() not in raw
    assert out[1] == entries[1] and [f.fix for f in fixed] == [Fix.SECRETS]


def test_secrets_then_signature_on_one_record() -> None:
    """Secrets run first, so a removed block does not move the path a secret finding names."""
    block = {"type": "text", "text": f"token {TOKEN}"}
    entries = [_assistant("a", [UNSIGNED, block])]
    findings = [
        Found(0, "missing-signature", "message.content[0]"),
        Found(0, "secret", "message.content[1].text", "github-token"),
    ]
    out, fixed, _ = _run(entries, findings, {Fix.SIGNATURE, Fix.SECRETS})
    assert out[0]["message"]["content"] == [
        {"type": "text", "text": "token [REDACTED:github-token]"}
    ]
    assert sorted(f.fix.value for f in fixed) == ["secrets", "signature"]


def test_resolve_reads_a_findings_path() -> None:
    data = {"message": {"content": [{"text": "a"}, {"text": "b"}]}}
    assert resolve(data, "message.content[1].text") == (("message", "content", 1, "text"), "b")
    assert resolve(data, "message.content[5]") is None
    assert resolve(data, "missing.key") is None
