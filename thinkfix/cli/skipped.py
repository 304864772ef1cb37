"""The line every command that walks folders says of the files it did not read: `scan`,
`diff` and `repair` word it alike, so a file left out is named the same way wherever."""

from __future__ import annotations

from collections.abc import Sequence

import click

from thinkfix.engine.controls import visible_name
from thinkfix.engine.report import SkippedFile
from thinkfix.engine.scan.report import name_some
from thinkfix.reporters.base import plural


def echo_skipped(skipped: Sequence[SkippedFile]) -> None:
    """`thinkfix: skipped 2 files (empty: a.jsonl; not a regular file: b.jsonl)` on stderr,
    grouped by reason; nothing when none was skipped."""
    if not skipped:
        return
    by_reason: dict[str, list[str]] = {}
    for s in skipped:
        by_reason.setdefault(s.reason, []).append(s.path)
    parts = [f"{reason}: {name_some(files)}" for reason, files in sorted(by_reason.items())]
    line = f"thinkfix: skipped {plural(len(skipped), 'file')} ({'; '.join(parts)})"
    click.echo(visible_name(line), err=True)
