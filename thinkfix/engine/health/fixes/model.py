"""The values the fixes trade in: their names, what each repaired, and the edits they plan."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from thinkfix.formats.jsonedit import Edit, edit
from thinkfix.formats.jsonspans import Style
from thinkfix.formats.records import parse_json
from thinkfix.formats.repairs import UnsafeEdit
from thinkfix.formats.turns import Path


class Fix(str, Enum):
    """The names `repair --fix` takes (the checks of the same name find what each repairs)."""

    LINES = "lines"  # salvage glued, split and NUL-padded records; cut a truncated tail
    TOOL_PAIRS = "tool-pairs"  # the runtime's own "interrupted" result for a call left without one
    SIGNATURE = "signature"  # drop thinking blocks the runtime's API refuses (reasoning kept)
    SECRETS = "secrets"  # mask likely credentials in the stored text


def parse_fixes(text: str | Iterable[str]) -> frozenset[Fix]:
    """`lines,tool-pairs` (or several such values) as fixes; ValueError names an unknown one."""
    parts = [text] if isinstance(text, str) else list(text)
    names = {n.strip() for part in parts for n in part.split(",") if n.strip()}
    known = {f.value: f for f in Fix}
    unknown = sorted(names - set(known))
    if unknown:
        raise ValueError(
            f"unknown fix {', '.join(unknown)}; the fixes are {', '.join(f.value for f in Fix)}"
        )
    return frozenset(known[n] for n in names)


class Finding(Protocol):
    """What a fix reads of a health finding (`engine.health.model.HealthFinding`)."""

    @property
    def record_index(self) -> int: ...
    @property
    def problem(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def json_path(self) -> str: ...


_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


def resolve(data: Any, json_path: str) -> tuple[Path, Any] | None:
    """A finding's `json_path` (`message.content[2].text`) as a path into `data`, and the
    value there; None when the path does not lead to a value (a key holding a dot)."""
    path: list[str | int] = []
    at, value = 0, data
    while at < len(json_path):
        m = _STEP.match(json_path, at)
        if m is None:
            return None
        at = m.end()
        if m.group(2) is not None:
            step: str | int = int(m.group(2))
            if not isinstance(value, list) or not isinstance(step, int) or step >= len(value):
                return None
        else:
            step = m.group(1)
            if not isinstance(value, dict) or step not in value:
                return None
        value = value[step]
        path.append(step)
    return tuple(path), value


def problem_of(finding: Finding) -> str:
    """A finding's problem as its plain name (the checks' `Problem` is a str enum)."""
    problem = finding.problem
    return str(getattr(problem, "value", problem))


@dataclass(frozen=True)
class Fixed:
    """One problem a fix repaired: what the diff report shows and the manifest keeps."""

    fix: Fix
    problem: str  # the health check's problem (glued, truncated, call-without-result, ...)
    line: int  # 1-based line of the original record
    detail: str  # what was done, in a line
    dropped: tuple[str, ...] = ()  # bytes the fix could not keep in the file (kept here)

    def to_dict(self) -> dict[str, object]:
        return {
            "fix": self.fix.value,
            "problem": self.problem,
            "line": self.line,
            "detail": self.detail,
            "dropped": list(self.dropped),
        }


@dataclass
class FixEdits:
    """The records fixes replace or insert, keyed by original record index.

    `replaced[i]` is record i's new (raw, eol); `inserted[i]` are new raws written just
    before original record i (`count` means at the end), each ending with `eol`. Fixes run
    one after another on the same value, so each sees what earlier ones wrote (`raw`).
    """

    originals: Sequence[tuple[bytes, bytes]]  # (raw, eol) of every original record
    # records another repair rewrote before the fixes ran: paths into them may have moved
    held: frozenset[int] = frozenset()
    replaced: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)
    inserted: dict[int, list[bytes]] = field(default_factory=dict)
    fixed: list[Fixed] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.originals)

    def raw(self, index: int) -> bytes:
        """Record `index` as the fixes so far leave it."""
        return self.replaced.get(index, self.originals[index])[0]

    def eol(self, index: int) -> bytes:
        return self.replaced.get(index, self.originals[index])[1]

    def replace(self, index: int, raw: bytes, eol: bytes | None = None) -> None:
        self.replaced[index] = (raw, self.eol(index) if eol is None else eol)

    def data(self, index: int) -> Any:
        """Record `index` parsed as the fixes so far leave it (None: it does not parse)."""
        value, error = parse_json(self.raw(index))
        return None if error is not None else value

    def edit(self, index: int, changes: Sequence[Edit]) -> bool:
        """Splice `changes` into record `index`, every other byte kept (`jsonedit.edit`);
        False, and nothing planned, when the splice cannot be proven."""
        raw = self.raw(index)
        try:
            new, _ = edit(raw, changes, Style.sniff([raw]))
        except UnsafeEdit:
            return False
        self.replace(index, new)
        return True

    def insert_after(self, index: int, raws: Sequence[bytes]) -> None:
        """New records right after record `index` (after what earlier fixes put there);
        a last record without a line end gets one, so the new records start a line."""
        if not raws:
            return
        if not self.eol(index):
            self.replace(index, self.raw(index), self.line_end)
        self.inserted.setdefault(index + 1, []).extend(raws)

    @property
    def line_end(self) -> bytes:
        """The file's line end (that of its first record that has one)."""
        return next((eol for _, eol in self.originals if eol), b"\n")

    @property
    def rebuildable(self) -> bool:
        """Undo can still rebuild the original from the new file record by record
        (`ledger.manifest.rebuild`): no line end changed and no record was cut away."""
        return all(
            eol == self.originals[i][1] and (raw or eol) for i, (raw, eol) in self.replaced.items()
        )

    @property
    def changed(self) -> bool:
        return any(self.originals[i] != v for i, v in self.replaced.items()) or any(
            self.inserted.values()
        )
