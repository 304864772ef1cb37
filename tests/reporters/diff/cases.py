"""Hand-built diff reports: small, stable, and holding every trap a renderer must survive."""

from __future__ import annotations

from dataclasses import replace

from thinkfix.engine.repair.audit import DiffReport, FileDiff, FixDiff, MessageDiff
from thinkfix.engine.report import InputError

HOSTILE = "</pre><script>alert(1)</script> & `code` | pipe"
SECRET = "sk-proj-AbCdEf0123456789XyZ0123"


def leaky_message() -> MessageDiff:
    before = "<think>\nCheck the key " + SECRET + " first.\n</think>\n\nDone. " + HOSTILE
    after = "Done. " + HOSTILE
    return MessageDiff(
        path="sessions/a b/<odd>.jsonl",
        line=5,
        json_path="message.content[1].text",
        format="pi",
        session_id="4b1d6e2a",
        message_id="d4e5f6a7",
        message_index=4,
        model="minimax/minimax-m2",
        kinds=("block",),
        before=before,
        after=after,
        extracted=("Check the key " + SECRET + " first.",),
        placement="block",
        where="thinking block (thinkingSignature 'reasoning') before message.content[1]",
        segments=(
            ("delimiter", "<think>"),
            ("trimmed", "\n"),
            ("thinking", "Check the key " + SECRET + " first."),
            ("trimmed", "\n"),
            ("delimiter", "</think>"),
            ("trimmed", "\n\n"),
            ("visible", after),
        ),
    )


def fenced_message() -> MessageDiff:
    before = "```\n<think>in a fence</think>\n```\n</think>"
    after = "```\n<think>in a fence</think>\n```\n"
    return MessageDiff(
        path="sessions/codex.jsonl",
        line=11,
        json_path="payload.content[0].text",
        format="codex",
        session_id=None,
        message_id=None,
        message_index=10,
        model=None,
        kinds=("stray_close",),
        before=before,
        after=after,
        extracted=(),
        placement="none",
        where="no reasoning to place (only delimiters were removed)",
        mirrors=("record 12: payload.message",),
        segments=(("visible", after), ("delimiter", "</think>")),
    )


def refused_message() -> MessageDiff:
    text = "<think>signed</think>Answer"
    return MessageDiff(
        path="sessions/codex.jsonl",
        line=20,
        json_path="payload.content[0].text",
        format="codex",
        session_id=None,
        message_id="m2",
        message_index=19,
        model="gpt-oss",
        kinds=("block",),
        before=text,
        after=text,
        extracted=(),
        placement="skipped",
        where="not modified",
        applied=False,
        reason="signed: the text carries a provider signature and cannot be changed",
    )


def full_report() -> DiffReport:
    return DiffReport(
        messages=(fenced_message(), refused_message(), leaky_message()),
        files=(
            FileDiff(
                "sessions/a b/<odd>.jsonl",
                "pi",
                "would-change",
                1,
                0,
                100,
                1,
                0,
                None,
                (("block", 1),),
            ),
            FileDiff(
                "sessions/codex.jsonl",
                "codex",
                "would-change",
                1,
                1,
                8,
                2,
                0,
                None,
                (("stray_close", 1),),
            ),
            FileDiff("sessions/clean.jsonl", "claude-code", "clean"),
        ),
        errors=(
            InputError(
                "sessions/bad.jsonl",
                3,
                "bad_line",
                "line 3: not JSON: Expecting value; copied through untouched",
            ),
        ),
        mode="dry-run",
        tool_version="0.0.0-test",
    )


def clean_report() -> DiffReport:
    return DiffReport(
        files=(FileDiff("sessions/clean.jsonl", "claude-code", "clean"),),
        mode="dry-run",
        tool_version="0.0.0-test",
    )


TOOLS = "sessions/tools.jsonl"  # a file only `--fix` changed: no reasoning moved in it


def every_fix() -> tuple[FixDiff, ...]:
    """One fix of each kind `repair --fix` makes, worded as the fixes word them, the dropped
    texts holding the traps (markup, a secret, NUL padding, a record too long to show)."""
    odd, codex = "sessions/a b/<odd>.jsonl", "sessions/codex.jsonl"
    return (
        FixDiff(
            odd,
            7,
            "signature",
            "missing-signature",
            "a thinking block at message.content[0] dropped (its reasoning kept in the manifest)",
            ("Unsigned: " + HOSTILE + " " + SECRET,),
        ),
        FixDiff(
            codex,
            3,
            "lines",
            "nul-padding",
            "an unreadable line of 212 bytes emptied (kept in the manifest)",
            ("\x00" * 212,),
        ),
        FixDiff(
            codex,
            30,
            "lines",
            "truncated",
            "cut the truncated last line (2600 bytes, kept in the manifest)",
            ('{"type":"response_item","payload":{"text":"' + "x" * 2556,),
        ),
        FixDiff(
            TOOLS,
            5,
            "tool-pairs",
            "call-without-result",
            'toolu_01Fg: "Interrupted by user" tool_result (is_error) added',
        ),
        FixDiff(
            TOOLS,
            6,
            "tool-pairs",
            "result-without-call",
            "toolu_01Xy: its result dropped (no call in the session; the record is kept in "
            "the manifest)",
            (
                '{"type":"user","message":{"content":[{"type":"tool_result","content":"'
                + HOSTILE
                + '"}]}}',
            ),
        ),
        FixDiff(
            TOOLS,
            8,
            "secrets",
            "secret",
            "a likely credential (openai-key) masked at message.content",
        ),
    )


def fixes_report() -> DiffReport:
    """`full_report` with every kind of fix beside its reasoning moves (#28)."""
    full = full_report()
    return replace(
        full,
        files=(*full.files, FileDiff(TOOLS, "claude-code", "would-change", records_inserted=1)),
        fixes=every_fix(),
    )
