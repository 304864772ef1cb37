"""Likely credentials in session text, and how much of that text an output may show.

The pattern side of `--redact` (`engine.redact` applies it to whole reports): no
imports from the rest of the engine, so the scanner can mask a finding's snippet
before cutting it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from functools import cache


class Redaction(str, Enum):
    """How much session text an output may show."""

    NONE = "none"
    SECRETS = "secrets"  # likely credentials masked
    ALL = "all"  # every text replaced by its length and hash

    @classmethod
    def from_flag(cls, value: str | None) -> Redaction:
        """Absent or `--redact` alone means secrets (reports are handed to auditors, so
        credentials are masked by default); `--redact none` opts out; `--redact all`."""
        if value is None or value == "":
            return cls.SECRETS
        if value in ("secrets", "1", "true", "yes"):
            return cls.SECRETS
        return cls(value)


#: Where a secret may start: after a non-word character, or right after a JSON escape
#: (`\\n`, `\\u0020`...), since diffs and some reports show records as stored, escaped:
#: in `"see\\nAKIA..."` no word boundary precedes the key.
_B = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrtbf/])|(?<=\\u[0-9a-fA-F]{4}))"
#: A quote as it appears in text or in escaped JSON (`\\"`).
_Q = r"(?:\\?[\"'])?"

# (name, pattern, group to mask: 0 is the whole match). Kept specific: a false positive
# only hides a few characters, but a broad pattern would make an auditor's report unreadable.
# Compiled on first use (`_secret_patterns`): a scan that finds nothing masks nothing, and
# compiling them costs a few ms of every start-up.
_SECRET_SOURCES: tuple[tuple[str, str, int, int], ...] = (
    (
        "private-key",
        (
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)"
        ),
        re.DOTALL,
        0,
    ),
    # Prefixes distinctive enough to need no boundary (a key glued to a word is still a key).
    ("api-key", r"sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_\-]{16,}", 0, 0),
    ("api-key", _B + r"(?:sk|rk|pk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}", 0, 0),
    ("stripe-key", _B + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", 0, 0),
    ("github-token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", 0, 0),
    ("gitlab-token", _B + r"glpat-[A-Za-z0-9_\-]{20,}", 0, 0),
    ("huggingface-token", _B + r"hf_[A-Za-z0-9]{30,}", 0, 0),
    ("npm-token", _B + r"npm_[A-Za-z0-9]{36}", 0, 0),
    (
        "aws-access-key",
        _B + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}(?![0-9A-Za-z])",
        0,
        0,
    ),
    (
        "aws-secret",
        r"(?i)(aws_?secret_?access_?key" + _Q + r"\s*[:=]\s*" + _Q + r")([A-Za-z0-9/+=]{40})",
        0,
        2,
    ),
    ("google-api-key", _B + r"AIza[0-9A-Za-z_\-]{35}", 0, 0),
    ("slack-token", _B + r"xox[abposr]-[A-Za-z0-9\-]{10,}", 0, 0),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}", 0, 0),
    ("jwt", _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0, 0),
    ("bearer-token", r"(?i)(" + _B + r"Bearer\s+)([A-Za-z0-9._~+/\-]{12,}=*)", 0, 2),
    (
        "url-password",
        r"(" + _B + r"[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'<>\\]+:)([^\s@/\"'<>\\]+)(@)",
        0,
        2,
    ),
    (
        "password",
        r"(?i)(" + _B + r"(?:password|passwd|pwd|secret|api[_-]?key"
        r"|access[_-]?token|auth[_-]?token|client[_-]?secret)"
        + _Q
        + r"\s*[:=]\s*"
        + _Q
        + r")([^\s\"',;\\]{6,})",
        0,
        2,
    ),
)

#: Characters past a snippet's end still masked with it: a secret cut by the snippet's end
#: is recognised whole (a private key block is masked from its BEGIN line even when cut).
SNIPPET_MARGIN = 256


def snippet(text: str, chars: int, mode: Redaction) -> str:
    """The first `chars` characters of `text` as a report may show them: masked, then cut,
    so no prefix of a secret survives the cut."""
    if mode is Redaction.NONE:
        return text[:chars]
    if mode is Redaction.ALL:
        return length_and_hash(text)
    return mask_secrets(text[: chars + SNIPPET_MARGIN])[:chars]


def mask_secrets(text: str) -> str:
    """`text` with every likely credential replaced by `[REDACTED:<kind>]`."""
    for name, pattern, group in _secret_patterns():
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


@cache
def _secret_patterns() -> tuple[tuple[str, re.Pattern[str], int], ...]:
    return tuple(
        (name, re.compile(source, flags), group) for name, source, flags, group in _SECRET_SOURCES
    )


def length_and_hash(text: str) -> str:
    """What `ALL` leaves of a text: its length and a short hash, the same for equal texts."""
    import hashlib

    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"[redacted: {len(text)} chars, sha256 {digest}]"


def redact_text(text: str, mode: Redaction) -> str:
    if mode is Redaction.NONE or not text:
        return text
    if mode is Redaction.SECRETS:
        return mask_secrets(text)
    return length_and_hash(text)
