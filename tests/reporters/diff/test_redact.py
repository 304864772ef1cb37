"""Redaction: one pass over the report before any renderer, for every output format."""

from __future__ import annotations

import pytest

from thinkfix.engine.report import LeakFinding, Report, Summary
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.secrets.rules import length_and_hash, mask_secrets
from thinkfix.engine.settings.redact import redact_diff, redact_lines, redact_report
from thinkfix.reporters.diff import RENDERERS
from thinkfix.reporters.diff.base import DiffFormat

from .cases import SECRET, full_report

SECRETS = [
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx", "api-key"),
    (SECRET, "api-key"),
    ("ghp_" + "a1B2" * 9, "github-token"),
    ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("AIza" + "S" * 35, "google-api-key"),
    ("xoxb-1234567890-abcdefghij", "slack-token"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "jwt",
    ),
]


@pytest.mark.parametrize(("secret", "kind"), SECRETS)
def test_redact_masks_likely_secrets(secret: str, kind: str) -> None:
    masked = mask_secrets(f"use {secret} now")
    assert secret not in masked and masked == f"use [REDACTED:{kind}] now"


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        (
            "Authorization: Bearer abcdefghijklmnop123",
            "Authorization: Bearer [REDACTED:",
            "abcdefghijklmnop123",
        ),
        (
            "postgres://admin:hunter2secret@db:5432/app",
            "postgres://admin:[REDACTED:url-password]@db",
            "hunter2secret",
        ),
        ('password = "correct horse battery"', 'password = "[REDACTED:password]', "correct"),
        (
            "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYAB",
            "aws_secret_access_key=[REDACTED:aws-secret]",
            "wJalrXUtnFEMI",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\n-----END RSA PRIVATE KEY-----",
            "[REDACTED:private-key]",
            "MIIEpAIB",
        ),
    ],
)
def test_redact_keeps_context_around_masked_part(text: str, kept: str, gone: str) -> None:
    masked = mask_secrets(text)
    assert kept in masked and gone not in masked


@pytest.mark.parametrize(
    "text",
    [
        "a < b > c",
        "sk-short",
        "the skeleton key",
        "http://host/path",
        "Bearer of bad news",
        "password reset flow",
    ],
)
def test_redact_leaves_ordinary_text_alone(text: str) -> None:
    assert mask_secrets(text) == text


def test_redact_all_keeps_only_lengths_and_hashes() -> None:
    assert length_and_hash("abc") == length_and_hash("abc") != length_and_hash("abd")
    assert length_and_hash("abc").startswith("[redacted: 3 chars, sha256 ")


@pytest.mark.parametrize("fmt", list(DiffFormat))
def test_redact_applies_to_every_output_format(fmt: DiffFormat) -> None:
    report = full_report()
    secrets = RENDERERS[fmt].render(redact_diff(report, Redaction.SECRETS))
    assert SECRET not in secrets and "[REDACTED:api-key]" in secrets
    everything = RENDERERS[fmt].render(redact_diff(report, Redaction.ALL))
    for word in ("Check the key", "Done.", "in a fence", "Answer"):
        assert word not in everything
    assert "[redacted: " in everything


def test_redact_keeps_counts_of_the_unredacted_texts() -> None:
    report = full_report()
    for mode in Redaction:
        assert redact_diff(report, mode).totals == report.totals


def test_redact_none_is_the_same_report() -> None:
    report = full_report()
    assert redact_diff(report, Redaction.NONE) is report


def test_redact_unified_diff_lines_but_not_headers() -> None:
    text = f"--- a/x.jsonl\n+++ b/x.jsonl\n@@ -1 +1 @@\n-key {SECRET}\n+key {SECRET}\n"
    assert redact_lines(text, Redaction.SECRETS) == (
        "--- a/x.jsonl\n+++ b/x.jsonl\n@@ -1 +1 @@\n-key [REDACTED:api-key]\n"
        "+key [REDACTED:api-key]\n"
    )
    assert "key" not in redact_lines(text, Redaction.ALL).split("@@")[-1]


def test_redact_scan_report_snippets() -> None:
    finding = LeakFinding(
        "p", 1, "t", "pi", "block", "<think>", 0, 10, 10, snippet=f"<think>{SECRET}</think>"
    )
    report = Report(Summary(), findings=(finding,))
    assert SECRET not in redact_report(report, Redaction.SECRETS).findings[0].snippet


# No flag means secrets: reports are handed to auditors, so credentials are masked by default
# (issue 11, item 7); `--redact none` is the opt-out.
@pytest.mark.parametrize(
    ("flag", "mode"),
    [
        (None, Redaction.SECRETS),
        ("none", Redaction.NONE),
        ("secrets", Redaction.SECRETS),
        ("all", Redaction.ALL),
    ],
)
def test_redact_from_flag(flag: str | None, mode: Redaction) -> None:
    assert Redaction.from_flag(flag) is mode


def test_snippets_are_masked_before_they_are_cut() -> None:
    """Cut first, a token straddling the cut kept its first 20 characters unmasked."""
    from thinkfix.engine.secrets.rules import snippet

    token = "sk-proj-" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9bN2m"
    text = "x" * 180 + token + " and more"
    cut = snippet(text, 200, Redaction.SECRETS)
    assert token[8:14] not in cut and "[REDACTED:api-key]" in cut
    assert snippet(text, 200, Redaction.NONE) == text[:200]


@pytest.mark.parametrize(
    "escaped",
    [
        "see\\nAKIAQ3EGUW7QZXB4NR5T",
        "a\\u0020AKIAQ3EGUW7QZXB4NR5T",
        '{\\"password\\": \\"hunter2-horse\\"}',
        "\\tghp_R8vY2mQ4tL6wN1pZ9kC3xB7dF5hJ0sA2eG4u",
    ],
)
def test_secrets_are_found_after_json_escapes(escaped: str) -> None:
    """Diffs show records as stored: a `\\n` escape put a letter right before the key."""
    masked = mask_secrets(escaped)
    assert "[REDACTED:" in masked
    assert not any(core in masked for core in ("Q3EGUW7QZX", "hunter2-horse", "R8vY2mQ4tL"))
