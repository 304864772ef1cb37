"""`--redact`: the one place session text is masked before any reporter sees it.

Leaked reasoning and answers routinely quote what the agent saw: API keys in
shell output, tokens in headers, passwords in connection strings. `SECRETS`
masks text that looks like a credential and keeps the rest readable; `ALL`
keeps no text at all, only each text's length and a hash prefix, so two
reports can still be compared. Reports are redacted as values, before
rendering, so no output format can forget to.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.secrets.rules import redact_text

if TYPE_CHECKING:
    from thinkfix.engine.repair.audit import DiffReport, MessageDiff
    from thinkfix.engine.report import Report


def redact_message(m: MessageDiff, mode: Redaction) -> MessageDiff:
    """One message with its texts redacted; highlighted segments stay aligned with `before`."""
    if mode is Redaction.NONE:
        return m
    before = redact_text(m.before, mode)
    segments = tuple((label, redact_text(text, mode)) for label, text in m.segments)
    if mode is Redaction.ALL or "".join(t for _, t in segments) != before:
        # A secret that straddles two segments is only masked in the whole text: show that.
        segments = (("visible", before),) if before else ()
    return replace(
        m,
        before=before,
        after=redact_text(m.after, mode),
        extracted=tuple(redact_text(t, mode) for t in m.extracted),
        segments=segments,
        removed=m.removed_chars,
        extracted_sizes=m.sizes,
    )


def redact_diff(report: DiffReport, mode: Redaction) -> DiffReport:
    """The auditor's report with every session text redacted as asked."""
    if mode is Redaction.NONE:
        return report
    return replace(
        report,
        messages=tuple(redact_message(m, mode) for m in report.messages),
        fixes=tuple(
            replace(f, dropped=tuple(redact_text(t, mode) for t in f.dropped)) for f in report.fixes
        ),
        unified_diff=redact_lines(report.unified_diff, mode),
        redaction=mode.value,
    )


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
    return replace(
        report,
        findings=tuple(f._replace(snippet=redact_text(f.snippet, mode)) for f in report.findings),
    )
