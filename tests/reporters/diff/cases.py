"""Hand-built diff reports: small, stable, and holding every trap a renderer must survive."""

from __future__ import annotations

from thinkfix.engine.repair.audit import DiffReport, FileDiff, MessageDiff
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
