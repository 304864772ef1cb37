"""The diff page shows the fixes beside the reasoning moves (#28, Done means).

`repair --fix ... --report` and `diff --fix` put each fix in the report; the text and Markdown
views listed them, the HTML page showed none. Now each file's card holds its messages and then
its fixes, each fix with the text it dropped in a folded excerpt, and the page's head counts
them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from thinkfix.engine.repair.audit import DiffReport
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.settings.redact import redact_diff
from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.diff.base import DiffFormat
from thinkfix.reporters.diff.html import _EXCERPT, HtmlDiffRenderer

from .cases import HOSTILE, SECRET, TOOLS, every_fix, fixes_report, full_report


def _page(report: DiffReport, **options: object) -> str:
    return HtmlDiffRenderer().render(report, RenderOptions(color=False, **options))  # type: ignore[arg-type]


class _Cards(HTMLParser):
    """Each file card's text and the fix articles in it, by the card's file name."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, list[str]] = {}  # path -> [fix card texts]
        self.moves: dict[str, int] = {}  # path -> message cards
        self.dropped: list[str] = []  # the text of each pre.dropped, in order
        self._path: str | None = None
        self._in_summary = False
        self._fix: list[str] | None = None
        self._pre: list[str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "details" and "file" in cls.split():
            self._path, self._in_summary = "", True
        elif tag == "span" and self._in_summary:
            self._in_summary = False
        elif tag == "article" and self._path is not None:
            if cls == "fix":
                self._fix = []
            else:
                self.moves[self._path] = self.moves.get(self._path, 0) + 1
        elif tag == "pre" and cls == "dropped":
            self._pre = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "summary":
            self._in_summary = False
        elif tag == "article" and self._fix is not None and self._path is not None:
            self.cards.setdefault(self._path, []).append("".join(self._fix))
            self._fix = None
        elif tag == "pre" and self._pre is not None:
            self.dropped.append("".join(self._pre))
            self._pre = None

    def handle_data(self, data: str) -> None:
        if self._in_summary and self._path is not None:
            self._path += data
        if self._fix is not None:
            self._fix.append(data)
        if self._pre is not None:
            self._pre.append(data)


def _cards(page: str) -> _Cards:
    parser = _Cards()
    parser.feed(page)
    return parser


def test_each_file_card_shows_its_moves_and_its_fixes() -> None:
    report = fixes_report()
    cards = _cards(_page(report))
    expected: dict[str, list[str]] = {}
    for f in every_fix():
        expected.setdefault(f.path, []).append(f"line {f.line} · {f.fix} {f.problem}")
    titles = {p: [t.strip().split("\n")[0] for t in ts] for p, ts in cards.cards.items()}
    assert titles == expected
    for f in every_fix():  # what the fix did, in its own card
        assert any(f.detail in text for text in cards.cards[f.path])
    # the reasoning moves stay in the same cards: a file with both shows both
    assert cards.moves == {"sessions/a b/<odd>.jsonl": 1, "sessions/codex.jsonl": 2}
    assert TOOLS not in cards.moves  # a file only --fix changed has a card of fixes alone


def test_the_head_counts_the_fixes_and_the_files_table_links_their_files() -> None:
    page = _page(fixes_report())
    assert '<div class="card"><b>6</b><span>fixes</span></div>' in page
    assert "6 fixes beside them (--fix)." in page
    by_fix = re.findall(r'<span class="fix-name">([^<]+)</span></td><td class="num">(\d+)', page)
    assert sorted(by_fix) == [
        ("lines: nul-padding", "1"),
        ("lines: truncated", "1"),
        ("secrets: secret", "1"),
        ("signature: missing-signature", "1"),
        ("tool-pairs: call-without-result", "1"),
        ("tool-pairs: result-without-call", "1"),
    ]
    assert '<th class="num">fixes</th>' in page
    assert f"{TOOLS}</a>" in page  # the fix-only file is linked to its card
    assert f"{TOOLS}</a> (3 fixes)" in page  # and indexed


def test_the_dropped_text_shows_escaped_in_a_folded_excerpt_cut_at_its_limit() -> None:
    page = _page(fixes_report())
    cards = _cards(page)
    dropped = [t for f in every_fix() for t in f.dropped]
    long = max(dropped, key=len)
    # every dropped text whole up to the limit; controls spelled, never sent
    assert "\u2400" * 212 in cards.dropped and "\x00" not in page
    (cut,) = [t for t in cards.dropped if t.startswith(long[:_EXCERPT])]
    assert cut == long[:_EXCERPT] + (
        f"\n\u2026 {len(long) - _EXCERPT} more chars (the undo manifest keeps it all)"
    )
    assert {d for d in dropped if "\x00" not in d and d != long} <= set(cards.dropped)
    assert "<script>" not in page and HOSTILE not in page
    assert page.count("<details open><summary>Dropped text (") == len(dropped)
    assert "Dropped text (2599 chars)" in page


def test_a_redacted_page_shows_no_dropped_secret_and_no_sizes() -> None:
    page = _page(redact_diff(fixes_report(), Redaction.SECRETS))
    assert SECRET not in page
    assert "Dropped text &rarr;" in page  # sizes left out: redaction changes lengths
    assert "more (the undo manifest keeps it all)" in page  # still cut


def test_the_cap_counts_fix_cards_with_message_cards() -> None:
    page = _page(fixes_report(), max_findings=3)
    assert page.count("<article") == 3
    assert "5 more fixes in the JSON report" in page


def test_a_page_without_fixes_keeps_its_head() -> None:
    page = _page(full_report())
    assert 'fix-name">' not in page.split("<style>")[-1].split("</style>")[-1]
    assert "<span>fixes</span>" not in page and '<th class="num">fixes</th>' not in page
    assert DiffFormat.HTML is HtmlDiffRenderer.format
