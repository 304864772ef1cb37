"""Rule 4's tool-call evidence from later records (#21 item 3).

A text whose first delimiter is an orphan close with nothing after it keeps its text
visible and loses only the delimiter (`stray_close`), unless a tool call follows it in its
message. Claude Code writes a message's tool_use on the record after its text, Codex its
`function_call` as an item of its own; such a format says so (`SessionFormat.calls_later`)
and finds the calls in one more pass (`calls_after`). Only a text that `awaits_call` needs
it, so a clean file is never read twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from thinkfix.formats.base import SessionFormat
from thinkfix.formats.records import Record, Site
from thinkfix.normalizer.spans import Finding, LeakKind


def awaits_call(fmt: SessionFormat, site: Site, findings: Sequence[Finding]) -> bool:
    """Would a tool call on a later record change this text's findings? Only a close judged
    without evidence (`stray_close`) can split; its site's format must write calls apart."""
    return (
        fmt.calls_later
        and not site.followed_by_tool_call
        and any(f.kind is LeakKind.STRAY_CLOSE for f in findings)
    )


def followed(
    fmt: SessionFormat, records: Iterable[Record], sites: Iterable[Site]
) -> frozenset[int]:
    """The record indices of those `sites` whose message calls a tool on a later one of
    `records` (the whole file, in order): their texts have rule 4's evidence."""
    return fmt.calls_after(records, {s.record_index for s in sites})


def called(site: Site) -> Site:
    """The site with rule 4's evidence."""
    return replace(site, followed_by_tool_call=True)
