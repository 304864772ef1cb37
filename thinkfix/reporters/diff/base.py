"""The diff-report renderer interface, and the words every output shares.

A renderer turns one (already redacted) `DiffReport` into one document; it never
reads files and never prints. The same report always renders to the same bytes:
nothing here reads the clock, the terminal or the environment.
"""

from __future__ import annotations

import os
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

from thinkfix.formats.repairs import PlacementKind
from thinkfix.reporters.base import Renderer, plural

if TYPE_CHECKING:  # the audit loads where a report is built (12-16 ms of a repair's start-up)
    from thinkfix.engine.repair.audit import DiffReport, FixDiff, MessageDiff


class DiffFormat(str, Enum):
    """The values of `thinkfix diff --output-format`."""

    TEXT = "text"
    MARKDOWN = "markdown"
    HTML = "html"
    JSON = "json"

    @classmethod
    def for_path(cls, path: str, default: DiffFormat | None = None) -> DiffFormat:
        """The format a report file's name asks for (`.html`, `.md`, `.json`, else text)."""
        ext = os.path.splitext(path)[1].lower()
        by_suffix = {
            ".html": cls.HTML,
            ".htm": cls.HTML,
            ".md": cls.MARKDOWN,
            ".markdown": cls.MARKDOWN,
            ".json": cls.JSON,
            ".txt": cls.TEXT,
        }
        return by_suffix.get(ext, default or cls.TEXT)


class DiffRenderer(Renderer["DiffReport"]):
    """Turns a `DiffReport` into one document of one output format."""

    format: ClassVar[DiffFormat]


# --- words shared by every format --------------------------------------------------------------

_PLACEMENT_WORDS: dict[str, str] = {
    PlacementKind.BLOCK.value: "thinking block",
    PlacementKind.FIELD.value: "reasoning field",
    PlacementKind.RECORD.value: "new reasoning record",
    PlacementKind.THOUGHTS.value: "thoughts list",
    PlacementKind.ANNOTATION.value: "thinkfix annotation",
    PlacementKind.MANIFEST.value: "repair manifest only",
    PlacementKind.SIDECAR.value: "sidecar file",
    PlacementKind.NONE.value: "nothing to place",
    PlacementKind.SKIPPED.value: "not repaired",
}

#: What each label of a `before` segment means, for legends.
SEGMENT_LABELS: dict[str, str] = {
    "thinking": "reasoning moved out of the text",
    "delimiter": "delimiter removed",
    "duplicate": "duplicate of the native reasoning, removed",
    "trimmed": "whitespace trimmed",
}


def placement_words(kind: str) -> str:
    """A placement kind in a few words."""
    return _PLACEMENT_WORDS.get(kind, kind)


def fix_count(n: int) -> str:
    """`1 fix`, `2 fixes` (what `repair --fix` did)."""
    return f"{n} fix{'' if n == 1 else 'es'}"


def fix_rows(report: DiffReport) -> list[tuple[str, str, str, str]]:
    """Each fix as (location, fix, problem, what it did), in the report's order."""
    return [(f.location, f.fix, f.problem, f.detail) for f in report.fixes]


def verb(report: DiffReport) -> str:
    return "were repaired" if report.written else "would change"


def headline(report: DiffReport) -> str:
    """The verdict in a sentence or two, the same words in every human format."""
    t = report.totals
    if t.messages:
        holding = sum(1 for f in report.files if f.messages)  # files_changed counts fixes too
        text = (
            f"{plural(t.messages, 'message')} in {plural(holding, 'file')} "
            f"{verb(report)}: {plural(t.removed_chars, 'character')} left the visible text, "
            f"{plural(t.extracted_segments, 'reasoning segment')} "
            f"({plural(t.extracted_chars, 'char')}) extracted."
        )
    elif report.fixes:
        files = len(report.fixed_paths)
        text = f"{fix_count(len(report.fixes))} in {plural(files, 'file')} {verb(report)}."
    elif t.files:
        text = f"Nothing to repair in {plural(t.files, 'file')}."
    else:
        text = "No session files found."
    if t.messages and report.fixes:
        text += f" {fix_count(len(report.fixes))} beside them (--fix)."
    if t.refused:
        one = t.refused == 1
        text += (
            f" {plural(t.refused, 'leaking message')} {'was' if one else 'were'} left as "
            f"{'it was' if one else 'they were'}: the format could not change "
            f"{'it' if one else 'them'} safely."
        )
    if report.errors:
        text += f" {plural(len(report.errors), 'error')}: those files were not fully processed."
    return text


def message_title(m: MessageDiff) -> str:
    """`line 5 · message.content[1].text` (the location inside the file)."""
    return f"line {m.line} · {m.json_path}"


def message_facts(m: MessageDiff) -> list[tuple[str, str]]:
    """The labelled facts about a message, in display order; empty ones left out."""
    facts = [("kinds", ", ".join(m.kinds) or "-")]
    for name, value in (("model", m.model), ("session", m.session_id), ("message", m.message_id)):
        if value:
            facts.append((name, value))
    if m.applied:
        facts.append(("reasoning", m.where))
    else:
        facts.append(("not repaired", m.reason or "refused"))
    if m.mirrors:
        facts.append(("also fixed", "; ".join(m.mirrors)))
    facts.append(("removed", plural(m.removed_chars, "char")))
    return facts


def by_path(report: DiffReport) -> dict[str, list[MessageDiff]]:
    """Messages grouped by file, in report order."""
    out: dict[str, list[MessageDiff]] = {}
    for m in report.messages:
        out.setdefault(m.path, []).append(m)
    return out


def fixes_by_path(report: DiffReport) -> dict[str, list[FixDiff]]:
    """Fixes grouped by file, in report order (so a file's page section shows its own)."""
    out: dict[str, list[FixDiff]] = {}
    for f in report.fixes:
        out.setdefault(f.path, []).append(f)
    return out


def fix_title(f: FixDiff) -> str:
    """`line 3 · lines: nul-padding` (where, which fix, what problem)."""
    return f"line {f.line} · {f.fix}: {f.problem}"


def kinds_cell(by_kind: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{k} {n}" for k, n in by_kind) or "-"
