"""A file name or a session's text is data in every diff output, never a terminal command or a
line of its own (#22 item 5, the diff formats; tests/reporters/test_hostile_names.py holds scan's).

`diff --output-format markdown` and `html` passed ESC, BEL, CR and newlines from file names
raw (the text view already spelled them with `visible_strings`). Now the human formats show a
name as `visible_name` spells it (the document is the one for the escaped name), session text
keeps only its newlines, and json carries both exactly.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings

from thinkfix.engine.controls import visible_name
from thinkfix.engine.repair.audit import DiffReport
from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.diff import RENDERERS
from thinkfix.reporters.diff.base import DiffFormat

from ..test_hostile_names import NAMES, RAW_CONTROL
from .cases import fixes_report, full_report

OLD = "sessions/a b/<odd>.jsonl"
#: Shown as `visible_name` spells a name.
ESCAPED = (DiffFormat.TEXT, DiffFormat.MARKDOWN, DiffFormat.HTML)
OPTIONS = RenderOptions(color=False)


def renamed(report: DiffReport, old: str, new: str, text: str = "") -> DiffReport:
    """`report` with every mention of the file `old` naming `new`, and `text` (a terminal
    command) before the text of each of its messages and each text its fixes dropped."""

    def swap(value: Any) -> Any:
        if value.path != old:
            return value
        if hasattr(value, "_replace"):  # a NamedTuple: an input error
            return value._replace(path=new)
        return dataclasses.replace(value, path=new)

    def prefixed(m: Any) -> Any:
        segments = (("thinking", text), *m.segments) if m.segments else ()
        return dataclasses.replace(m, path=new, before=text + m.before, segments=segments)

    def fixed(f: Any) -> Any:
        return dataclasses.replace(f, path=new, dropped=tuple(text + d for d in f.dropped))

    messages = tuple(prefixed(m) if m.path == old else m for m in report.messages)
    return dataclasses.replace(
        report,
        messages=messages,
        files=tuple(swap(f) for f in report.files),
        errors=tuple(swap(e) for e in report.errors),
        manifest=new,
        fixes=tuple(fixed(f) if f.path == old else f for f in report.fixes),
    )


def _render(report: DiffReport, fmt: DiffFormat) -> str:
    return RENDERERS[fmt].render(report, OPTIONS)


def test_the_issue_names_in_markdown_and_html_send_no_control_and_split_no_line() -> None:
    name = "a\x1b]0;owned\x07b\nc\r.jsonl"
    report = renamed(full_report(), OLD, name)
    for fmt in (DiffFormat.MARKDOWN, DiffFormat.HTML):
        out = _render(report, fmt)
        assert not RAW_CONTROL.search(out), fmt
        assert "a␛]0;owned␇b␊c␍.jsonl" in out, fmt
        assert out.count("\n") == _render(renamed(full_report(), OLD, OLD), fmt).count("\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES)
def test_no_diff_format_sends_a_control_character_or_splits_a_line(name: str) -> None:
    """Over a report with messages and every kind of fix (#28: the fixes' paths, words and
    dropped texts reach the same outputs)."""
    report = renamed(fixes_report(), OLD, name, "\x1b[2J\x07\x9b")
    shown = renamed(fixes_report(), OLD, visible_name(name), "\x1b[2J\x07\x9b")
    plain = renamed(fixes_report(), OLD, OLD, "\x1b[2J\x07\x9b")
    assert set(RENDERERS) == set(DiffFormat)
    for fmt in DiffFormat:
        out = _render(report, fmt)
        assert not RAW_CONTROL.search(out), fmt
        if fmt in ESCAPED:
            assert out == _render(shown, fmt), fmt
            assert "␛[2J␇\\x9b" in out, fmt  # the session's text, shown
            if fmt is not DiffFormat.TEXT:  # rich wraps a long name in the text view
                assert out.count("\n") == _render(plain, fmt).count("\n"), fmt
        else:
            assert fmt is DiffFormat.JSON
            doc = orjson.loads(out)
            assert doc["manifest"] == name
            assert {f["path"] for f in doc["files"]} >= {name}
            assert any(m["before"].startswith("\x1b[2J\x07\x9b") for m in doc["messages"])
            assert {f["path"] for f in doc["fixes"]} >= {name}
            assert any(d.startswith("\x1b[2J\x07\x9b") for f in doc["fixes"] for d in f["dropped"])
        if fmt is DiffFormat.HTML:  # the fix's dropped text is shown (and spelled) too
            assert '<pre class="dropped">␛[2J␇\\x9bUnsigned: &lt;/pre&gt;' in out
