"""`Change`: one assistant text a repair changes, the value both repair and its manifest speak.

Its own module so the manifest (which records changes) and repair (which makes them)
do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from thinkfix.formats.records import Site
from thinkfix.formats.repairs import Placement
from thinkfix.normalizer.spans import Finding


@dataclass(frozen=True)
class Change:
    """One assistant text that a repair changes (or would, or refused to)."""

    site: Site
    findings: tuple[Finding, ...]
    before: str
    after: str
    extracted: tuple[str, ...]  # reasoning taken out of the text, in order (native not included)
    placement: Placement
    spans: tuple[tuple[int, int, str], ...] = ()  # (start, end, label) of `before`, every char

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({f.kind.value for f in self.findings if f.kind.changes_text}))

    @property
    def applied(self) -> bool:
        return self.placement.applied
