"""Hand-made reports that exercise every reporter: several kinds, formats and models, a baselined
finding, input errors, a stale baseline entry, and text that needs escaping in every format."""

from __future__ import annotations

from collections import Counter
from typing import Any

from thinkfix.engine.report import (
    InputError,
    LeakFinding,
    MessageCounts,
    Report,
    SkippedFile,
    StaleEntry,
    Summary,
)
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.report import require_sessions

TOOL_VERSION = "0.0.0-test"  # fixed, so a release does not rewrite every golden file

CLAUDE = "sessions/claude/a.jsonl"
PI = "sessions/pi/b.jsonl"
ODD = "sessions/pi/odd, name: 100%.jsonl"  # comma, colon, percent and space in one path
CODEX = "sessions/codex/c.jsonl"
CLEAN = "sessions/claude/clean.jsonl"
BROKEN = "sessions/broken.jsonl.gz"

WEIRD_MODEL = 'local "r1" \\ q4'


def _finding(
    path: str,
    line: int,
    fmt: str,
    kind: str,
    tag: str,
    chars: int,
    json_path: str = "message.content[0].text",
    **kw: Any,
) -> LeakFinding:
    return LeakFinding(
        path=path,
        line=line,
        json_path=json_path,
        format=fmt,
        kind=kind,
        tag=tag,
        start=0,
        end=chars,
        leaked_chars=chars,
        **kw,
    )


FINDINGS = tuple(
    sorted(
        [
            _finding(
                CLAUDE,
                3,
                "claude-code",
                "block",
                "<think>",
                120,
                session_id="s-1",
                message_id="m-1",
                message_index=1,
                model="deepseek-r1",
                fingerprint="fp-claude-3",
                snippet="First, plan the answer.",
            ),
            _finding(
                CLAUDE,
                7,
                "claude-code",
                "orphan_close",
                "</think>",
                48,
                session_id="s-1",
                message_id="m-4",
                message_index=4,
                model="qwen3-32b",
                fingerprint="fp-claude-7",
                json_path="message.content[1].text",
                snippet="a | b\nthen `code` and *stars*",
            ),
            _finding(
                PI,
                2,
                "pi",
                "unclosed",
                "<thinking>",
                300,
                session_id="s-2",
                message_id="m-9",
                message_index=2,
                model="gpt-oss-120b",
                fingerprint="fp-pi-2",
                baselined=True,
                snippet="cut off while thinking",
            ),
            _finding(
                ODD,
                5,
                "pi",
                "duplicate",
                "[THINK]",
                17,
                session_id="s-3",
                message_index=0,
                model=WEIRD_MODEL,
                fingerprint="fp-odd-5",
                snippet="100%, done:\r\nyes",
            ),
            _finding(
                CODEX,
                11,
                "codex",
                "stray_close",
                "◁/think▷",
                0,
                session_id="s-4",
                message_id='msg "quoted"',
                message_index=3,
                fingerprint="fp-codex-11",
                json_path="payload.content[0].text",
                snippet="bell \x07 <script>&amp;</script>",
            ),
            _finding(
                CODEX,
                12,
                "codex",
                "block",
                "<think>",
                64,
                session_id="s-4",
                message_id="m-12",
                message_index=4,
                model="kimi-k2",
                fingerprint="fp-codex-12",
                snippet="Kimi plans.",
            ),
        ]
    )
)

ERRORS = tuple(
    sorted(
        [
            InputError(BROKEN, None, "unreadable", "gzip: not a gzipped file"),
            InputError(PI, 9, "bad_line", "line is not valid JSON: unexpected end of data"),
        ]
    )
)

STALE = (StaleEntry("fp-gone", "sessions/old.jsonl"),)

# Files a walk found but did not read: other JSON, thinkfix's own sidecar, and a name that
# needs escaping in every format.
SKIPPED = tuple(
    sorted(
        [
            SkippedFile("sessions/package.json", "not a known session format"),
            SkippedFile("sessions/claude/a.jsonl.thinkfix.json", "thinkfix repair sidecar"),
            SkippedFile('sessions/odd <b> & "q" | x.json', "empty"),
        ]
    )
)


def _counts(assistant: int, leaking: int, findings: int, fmt: str | None = None) -> MessageCounts:
    return MessageCounts(
        assistant_messages=assistant, leaking_messages=leaking, findings=findings, format=fmt
    )


def full_report() -> Report:
    """Everything at once, consistent the way the engine would aggregate it."""
    summary = Summary(
        files=6,
        records=57,
        assistant_messages=20,
        leaking_messages=6,
        findings=len(FINDINGS),
        leaked_chars=sum(f.leaked_chars for f in FINDINGS),
        baselined=1,
        by_kind=dict(Counter(f.kind for f in FINDINGS)),
        by_format={
            "claude-code": _counts(8, 2, 2),
            "pi": _counts(7, 2, 2),
            "codex": _counts(5, 2, 2),
        },
        by_model={
            "deepseek-r1": _counts(3, 1, 1),
            "qwen3-32b": _counts(3, 1, 1),
            "gpt-oss-120b": _counts(4, 1, 1),
            WEIRD_MODEL: _counts(3, 1, 1),
            "kimi-k2": _counts(3, 1, 1),
            "": _counts(4, 1, 1),
        },
        by_file={
            CLAUDE: _counts(6, 2, 2, "claude-code"),
            CLEAN: _counts(2, 0, 0, "claude-code"),
            PI: _counts(4, 1, 1, "pi"),
            ODD: _counts(3, 1, 1, "pi"),
            CODEX: _counts(5, 2, 2, "codex"),
        },
        by_format_and_model={
            "claude-code": {
                "": _counts(2, 0, 0),
                "deepseek-r1": _counts(3, 1, 1),
                "qwen3-32b": _counts(3, 1, 1),
            },
            "codex": {"": _counts(2, 1, 1), "kimi-k2": _counts(3, 1, 1)},
            "pi": {"gpt-oss-120b": _counts(4, 1, 1), WEIRD_MODEL: _counts(3, 1, 1)},
        },
        by_day={
            "2026-03-01": {
                "deepseek-r1": _counts(3, 1, 1),
                "qwen3-32b": _counts(3, 1, 1),
                WEIRD_MODEL: _counts(3, 1, 1),
            },
            "2026-03-02": {
                "gpt-oss-120b": _counts(4, 1, 1),
                "kimi-k2": _counts(3, 1, 1),
                "": _counts(4, 1, 1),
            },
        },
    )
    return Report(
        summary=summary,
        findings=FINDINGS,
        errors=ERRORS,
        stale_baseline=STALE,
        tool_version=TOOL_VERSION,
        skipped=SKIPPED,
    )


def clean_report() -> Report:
    """Two files read, nothing leaked, nothing failed: exit 0."""
    summary = Summary(
        files=2,
        records=14,
        assistant_messages=6,
        by_format={"claude-code": _counts(4, 0, 0), "pi": _counts(2, 0, 0)},
        by_model={"claude-sonnet-4": _counts(4, 0, 0), "deepseek-r1": _counts(2, 0, 0)},
        by_file={CLEAN: _counts(4, 0, 0, "claude-code"), PI: _counts(2, 0, 0, "pi")},
        by_format_and_model={
            "claude-code": {"claude-sonnet-4": _counts(4, 0, 0)},
            "pi": {"deepseek-r1": _counts(2, 0, 0)},
        },
    )
    return Report(summary=summary, tool_version=TOOL_VERSION)


def empty_report() -> Report:
    """No input at all: every format must still say something sensible."""
    return Report(summary=Summary(), tool_version=TOOL_VERSION)


def unread_report() -> Report:
    """Files found, none a session: the engine's `no_sessions` error, exit 2."""
    skipped = Report(summary=Summary(), tool_version=TOOL_VERSION, skipped=SKIPPED[1:])
    return require_sessions(skipped, ["sessions"], ScanOptions())
