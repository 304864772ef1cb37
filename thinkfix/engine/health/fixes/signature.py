"""`--fix signature`: drop the thinking blocks the runtime's API will refuse to replay.

The `signature` check names them (a block with no signature, an empty one, the same
signed block a second time) for the formats whose runtime sends stored thinking back to
an API that checks it. The block leaves its message's array (`jsonedit.RemoveItem`, every
other byte kept); its reasoning is kept in the manifest (`Fixed.dropped`). A message left
with no block keeps its empty array, as the reasoning repair leaves one: no line goes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from thinkfix.engine.health.fixes.model import Finding, Fix, Fixed, FixEdits, problem_of, resolve
from thinkfix.formats.jsonedit import Edit, RemoveItem, SetValue
from thinkfix.formats.turns import Path

PROBLEMS = frozenset({"missing-signature", "empty-signature", "duplicate-thinking"})
_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def fix_signature(edits: FixEdits, findings: Iterable[Finding]) -> None:
    """Plan the removal of every thinking block a `signature` finding names."""
    by_record: dict[int, list[Finding]] = {}
    for finding in findings:
        if problem_of(finding) in PROBLEMS:
            by_record.setdefault(finding.record_index, []).append(finding)
    for index in sorted(by_record):
        if index in edits.held:
            continue  # its arrays may have moved under another repair: left for the next run
        data = edits.data(index)
        drop: dict[Path, set[int]] = {}
        notes: list[Fixed] = []
        for finding in by_record[index]:
            found = resolve(data, finding.json_path)
            if found is None or not found[0]:
                continue
            path, block = found
            at = path[-1]
            if not isinstance(at, int) or not _thinking(block) or at in drop.get(path[:-1], ()):
                continue
            drop.setdefault(path[:-1], set()).add(at)
            notes.append(
                Fixed(
                    Fix.SIGNATURE,
                    problem_of(finding),
                    finding.line,
                    f"{_kind(block)} at {finding.json_path} dropped (its reasoning kept in the "
                    "manifest)",
                    (_reasoning(block),),
                )
            )
        changes: list[Edit] = []
        for array, gone in drop.items():
            found = resolve(data, _dotted(array))
            if found is not None and len(gone) == len(found[1]):
                changes.append(SetValue(array, []))  # a message left with no block
            else:
                changes.extend(RemoveItem(array, at) for at in sorted(gone))
        if changes and edits.edit(index, changes):
            edits.fixed.extend(notes)


def _dotted(path: Path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in _BLOCKS


def _kind(block: dict[str, Any]) -> str:
    return (
        "a redacted_thinking block"
        if block.get("type") == "redacted_thinking"
        else ("a thinking block")
    )


def _reasoning(block: dict[str, Any]) -> str:
    text = block.get("thinking")
    return text if isinstance(text, str) else ""
