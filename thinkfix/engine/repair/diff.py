"""A repair as a unified diff of the changed lines (`repair --diff`).

No context lines: session lines are long. A line file's hunks come straight
from the plan (records map one to one, plus inserted ones), reading only the
changed records; a one-record document is diffed by line with difflib.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from thinkfix.engine.controls import visible_name
from thinkfix.engine.repair.plan import FilePlan, New

Opcode = tuple[str, int, int, int, int]


def unified_diff(plan: FilePlan, label: str | None = None) -> str:
    """The changed lines of a file as a unified diff."""
    if not plan.changed:
        return ""
    name = (label or plan.path).replace(os.sep, "/").lstrip("/")  # `a/` + path, as git writes
    # A header is one line: a newline in the name would end it, and a patch tool would read
    # the rest as a header of its own; ESC and BEL would reach the terminal showing it.
    name = visible_name(name)
    if plan.count <= 1 or not plan.lines:
        old_lines, new_lines = _lines(plan.content), _lines(plan.new_content)
        groups = _hunks(plan, old_lines, new_lines)

        def old_at(a: int, b: int) -> list[str]:
            return old_lines[a:b]

        def new_at(a: int, b: int) -> list[str]:
            return new_lines[a:b]
    else:
        groups = _hunks(plan, [], [])
        news = {seg.record.index: seg.data for seg in plan.segments if isinstance(seg, New)}

        def old_at(a: int, b: int) -> list[str]:
            return [_text(plan.source.read(*plan.span(i))) for i in range(a, b)]

        def new_at(a: int, b: int) -> list[str]:
            return [_text(news[j]) for j in range(a, b)]

    out = [f"--- a/{name}\n", f"+++ b/{name}\n"]
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag in ("replace", "delete"):
                out.extend(_emit("-", old_at(a1, a2)))
            if tag in ("replace", "insert"):
                out.extend(_emit("+", new_at(b1, b2)))
    return "".join(out)


def _hunks(plan: FilePlan, old_lines: list[str], new_lines: list[str]) -> list[list[Opcode]]:
    """Groups of adjacent changes: a line file's from its edits (a record is a line, so
    positions are record indices), in linear time in the changes; others by difflib."""
    if plan.count <= 1 or not plan.lines:
        import difflib

        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        return list(matcher.get_grouped_opcodes(0))
    codes: list[Opcode] = []
    edits = plan.edits
    for i in sorted(set(edits.inserted) | set(edits.replaced)):
        added = edits.inserted.get(i, ())
        j = edits.new_index(i)
        if added:
            codes.append(("insert", i, i, j - len(added), j))
        new = edits.replaced.get(i)
        if new is not None and not new.raw and not new.eol:  # a record a fix cut away
            codes.append(("delete", i, i + 1, j, j))
        elif new is not None:
            codes.append(("replace", i, i + 1, j, j + 1))
    groups: list[list[Opcode]] = []
    for code in codes:
        last = groups[-1][-1] if groups else None
        if last is not None and last[2] == code[1] and last[4] == code[3]:
            groups[-1].append(code)
        else:
            groups.append([code])
    return groups


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace")


def _lines(content: bytes) -> list[str]:
    """Lines split at `\\n` only (JSON strings may hold raw U+2028, which is no line end)."""
    parts = content.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    return [line.decode("utf-8", "replace") for line in lines]


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


def _emit(sign: str, lines: list[str]) -> Iterator[str]:
    for line in lines:
        if line.endswith("\n"):
            yield sign + line.removesuffix("\r\n").removesuffix("\n") + "\n"
        else:
            yield sign + line + "\n"
            yield "\\ No newline at end of file\n"
