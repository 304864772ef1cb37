"""`--fix lines`: records the runtime cannot read, made readable again, no line lost.

Claude Code stops loading a session at its first unreadable line (and Codex and pi skip
one), so every record such a line still holds is lost to the runtime. What each problem
gets (the `lines` check says which problem a line has):

- glued (`{...}{...}` on one line, often a cut-off record followed by the next append) and
  NUL padding (the zeros an interrupted append leaves): every whole JSON object of the
  line, byte for byte, on a line of its own; the cut-off fragments between them, and the
  NULs, are dropped from the file and kept in the manifest;
- split (one record over several lines: a raw line break inside a string): the lines
  joined with the break escaped (`\\n`), the lines it took left empty (every reader here
  skips an empty line, and no line is deleted);
- truncated (the last line, cut off with no line end): cut, kept in the manifest.

Each salvaged object is the original's own bytes; nothing is re-serialised.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from thinkfix.engine.health.fixes.model import Finding, Fix, Fixed, FixEdits, problem_of

GLUED, NUL_PADDING, SPLIT_RECORD, TRUNCATED = "glued", "nul-padding", "split-record", "truncated"
PROBLEMS = frozenset({GLUED, NUL_PADDING, SPLIT_RECORD, TRUNCATED})
_DECODER = json.JSONDecoder()
_BLANK = " \t\r\n\x00"


def salvage(raw: bytes) -> tuple[list[bytes], list[bytes]]:
    """The whole JSON objects of a line, each its own bytes, and the fragments between them
    (a cut-off record, NULs); ([], [raw]) when the line is not UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return [], [raw]
    objects: list[bytes] = []
    dropped: list[bytes] = []
    pos, n = 0, len(text)
    while pos < n:
        start = _skip_blank(text, pos)
        if start >= n:
            if text[pos:].strip(_BLANK.replace("\x00", "")):
                dropped.append(text[pos:].encode("utf-8"))
            break
        end = _object_at(text, start)
        if end is not None:
            if pos < start and "\x00" in text[pos:start]:
                dropped.append(text[pos:start].encode("utf-8"))
            objects.append(text[start:end].encode("utf-8"))
            pos = end
            continue
        nxt = _next_object(text, start + 1)
        dropped.append(text[pos:nxt].encode("utf-8"))
        pos = nxt
    return objects, dropped


def _skip_blank(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _BLANK:
        pos += 1
    return pos


def _object_at(text: str, pos: int) -> int | None:
    """The end of a whole JSON object starting at `pos`, or None."""
    if text[pos] != "{":
        return None
    try:
        value, end = _DECODER.raw_decode(text, pos)
    except ValueError:
        return None
    return end if isinstance(value, dict) else None


def _next_object(text: str, pos: int) -> int:
    """Where the next whole object starts at or after `pos` (the line's end if none does)."""
    at = text.find("{", pos)
    while at != -1:
        if _object_at(text, at) is not None:
            return at
        at = text.find("{", at + 1)
    return len(text)


def _shown(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def fix_lines(edits: FixEdits, findings: Iterable[Finding]) -> None:
    """Plan the `lines` fix of every finding of a problem it repairs (see the module doc)."""
    for finding in sorted(findings, key=lambda f: f.record_index):
        problem = problem_of(finding)
        if problem not in PROBLEMS or finding.record_index in edits.replaced:
            continue
        if problem == SPLIT_RECORD:
            _join(edits, finding)
        else:
            _salvage(edits, finding)


def _salvage(edits: FixEdits, finding: Finding) -> None:
    i = finding.record_index
    raw, eol = edits.raw(i), edits.eol(i)
    objects, dropped = salvage(raw)
    if not objects and not eol and i == edits.count - 1:
        edits.replace(i, b"", b"")  # a cut-off last line: cut
        what = f"cut the truncated last line ({len(raw)} bytes, kept in the manifest)"
    elif objects:
        edits.inserted.setdefault(i, []).extend(objects[:-1])
        edits.replace(i, objects[-1])
        what = f"{len(objects)} record(s) salvaged, each on a line of its own"
        if dropped:
            what += f"; {sum(map(len, dropped))} unreadable bytes dropped (kept in the manifest)"
    else:
        edits.replace(i, b"")
        what = f"an unreadable line of {len(raw)} bytes emptied (kept in the manifest)"
    edits.fixed.append(
        Fixed(Fix.LINES, problem_of(finding), finding.line, what, tuple(map(_shown, dropped)))
    )


def _join(edits: FixEdits, finding: Finding) -> None:
    """Lines i..j as one record, their raw line breaks escaped; the lines after i emptied.
    Refused (nothing planned) unless the joined bytes parse as one object."""
    i = finding.record_index
    j = i + max(finding.end_line - finding.line, 0)
    if j <= i or j >= edits.count or any(k in edits.replaced for k in range(i + 1, j + 1)):
        return
    parts = [edits.raw(k) for k in range(i, j + 1)]
    breaks = [edits.eol(k) for k in range(i, j)]
    escaped = parts[0] + b"".join(
        br.replace(b"\r", b"\\r").replace(b"\n", b"\\n") + p
        for br, p in zip(breaks, parts[1:], strict=True)
    )
    try:
        text = escaped.decode("utf-8")
    except UnicodeDecodeError:
        return
    if _object_at(text, 0) != len(text):
        return
    edits.replace(i, escaped)
    for k in range(i + 1, j + 1):
        edits.replace(k, b"")
    edits.fixed.append(
        Fixed(
            Fix.LINES,
            problem_of(finding),
            finding.line,
            f"lines {finding.line}-{finding.end_line} joined into one record (line breaks "
            f"escaped); lines {finding.line + 1}-{finding.end_line} left empty",
        )
    )
