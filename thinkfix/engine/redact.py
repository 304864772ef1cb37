"""`--redact`: the one place session text is masked before any reporter sees it.

Leaked reasoning and answers routinely quote what the agent saw: API keys in
shell output, tokens in headers, passwords in connection strings. `SECRETS`
masks text that looks like a credential and keeps the rest readable; `ALL`
keeps no text at all, only each text's length and a hash prefix, so two
reports can still be compared. Reports are redacted as values, before
rendering, so no output format can forget to.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import replace
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thinkfix.engine.diff import DiffReport, MessageDiff
    from thinkfix.engine.report import Report


class Redaction(str, Enum):
    """How much session text an output may show."""

    NONE = "none"
    SECRETS = "secrets"  # likely credentials masked
    ALL = "all"  # every text replaced by its length and hash

    @classmethod
    def from_flag(cls, value: str | None) -> Redaction:
        """`--redact` alone means secrets; `--redact=all`; absent means none."""
        if value is None or value == "":
            return cls.NONE
        if value in ("secrets", "1", "true", "yes"):
            return cls.SECRETS
        return cls(value)


# (name, pattern, group to mask: 0 is the whole match). Kept specific: a false positive
# only hides a few characters, but a broad pattern would make an auditor's report unreadable.
_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("private-key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?"
                               r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.DOTALL), 0),
    ("api-key", re.compile(r"\b(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}"), 0),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
     0),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"), 0),
    ("aws-secret", re.compile(r"(?i)(aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?)"
                              r"([A-Za-z0-9/+=]{40})"), 2),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0),
    ("bearer-token", re.compile(r"(?i)(\bBearer\s+)([A-Za-z0-9._~+/\-]{12,}=*)"), 2),
    ("url-password", re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'<>]+:)"
                                r"([^\s@/\"'<>]+)(@)"), 2),
    ("password", re.compile(r"(?i)(\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token"
                            r"|auth[_-]?token)[\"']?\s*[:=]\s*[\"']?)([^\s\"',;]{6,})"), 2),
)


def mask_secrets(text: str) -> str:
    """`text` with every likely credential replaced by `[REDACTED:<kind>]`."""
    for name, pattern, group in _SECRET_PATTERNS:
        text = pattern.sub(_masker(name, group), text)
    return text


def _masker(name: str, group: int) -> Callable[[re.Match[str]], str]:
    mask = f"[REDACTED:{name}]"

    def sub(m: re.Match[str]) -> str:
        if m.group(group).startswith("[REDACTED:"):
            return m.group(0)
        start, end = m.start(group) - m.start(), m.end(group) - m.start()
        whole = m.group(0)
        return whole[:start] + mask + whole[end:]

    return sub


def fingerprint(text: str) -> str:
    """What `ALL` leaves of a text: its length and a short hash, the same for equal texts."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"[redacted: {len(text)} chars, sha256 {digest}]"


def redact_text(text: str, mode: Redaction) -> str:
    if mode is Redaction.NONE or not text:
        return text
    if mode is Redaction.SECRETS:
        return mask_secrets(text)
    return fingerprint(text)


def redact_message(m: MessageDiff, mode: Redaction) -> MessageDiff:
    """One message with its texts redacted; highlighted segments stay aligned with `before`."""
    if mode is Redaction.NONE:
        return m
    before = redact_text(m.before, mode)
    segments = tuple((label, redact_text(text, mode)) for label, text in m.segments)
    if mode is Redaction.ALL or "".join(t for _, t in segments) != before:
        # A secret that straddles two segments is only masked in the whole text: show that.
        segments = ((("visible", before),) if before else ())
    return replace(m, before=before, after=redact_text(m.after, mode),
                   extracted=tuple(redact_text(t, mode) for t in m.extracted), segments=segments,
                   removed=m.removed_chars, extracted_sizes=m.sizes)


def redact_diff(report: DiffReport, mode: Redaction) -> DiffReport:
    """The auditor's report with every session text redacted as asked."""
    if mode is Redaction.NONE:
        return report
    return replace(report, messages=tuple(redact_message(m, mode) for m in report.messages),
                   unified_diff=redact_lines(report.unified_diff, mode),
                   redaction=mode.value)


def redact_lines(diff_text: str, mode: Redaction) -> str:
    """A unified diff with the content of its `+`/`-` lines redacted (headers kept)."""
    if mode is Redaction.NONE or not diff_text:
        return diff_text
    out = []
    for line in diff_text.splitlines(keepends=True):
        if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")):
            body = line[1:].rstrip("\n")
            out.append(line[0] + redact_text(body, mode) + "\n")
        else:
            out.append(line)
    return "".join(out)


def redact_report(report: Report, mode: Redaction) -> Report:
    """A scan report with its leaked-text snippets redacted (the same rules as the diff)."""
    if mode is Redaction.NONE:
        return report
    return replace(report, findings=tuple(replace(f, snippet=redact_text(f.snippet, mode))
                                          for f in report.findings))
