"""The diff page shows its before/after on screen and on paper (#27 item 10): every card was
collapsed, so a printout or a full-page view showed no before/after. Cards open by default,
one control collapses them all (CSS only: the page runs no script), and a print stylesheet
shows every card whole.

No browser here (Chromium is not installed): the page is parsed, and the rules that make it
so are checked in its stylesheet.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from thinkfix.reporters.diff import RENDERERS
from thinkfix.reporters.diff.base import DiffFormat

from .cases import full_report


def _render() -> str:
    return RENDERERS[DiffFormat.HTML].render(full_report())


class _Body(HTMLParser):
    """The body's direct children in order (tag, attributes), and every <details>."""

    def __init__(self) -> None:
        super().__init__()
        self.children: list[tuple[str, dict[str, str | None]]] = []
        self.details: list[dict[str, str | None]] = []
        self.labels: dict[str, str] = {}
        self._depth = 0
        self._label: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "body":
            self._depth = 0
        elif self._depth == 0:
            self.children.append((tag, a))
        if tag == "details":
            self.details.append(a)
        if tag == "label":
            self._label = a.get("for") or ""
            self.labels[self._label] = ""
        if tag not in ("body", "input", "meta", "br"):
            self._depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._depth == 0:
            self.children.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self._label = None
        if tag != "body":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._label is not None:
            self.labels[self._label] += data


def _body(html: str) -> _Body:
    parser = _Body()
    parser.feed(html.split("<body>", 1)[1].rsplit("</body>", 1)[0])
    return parser


def _css(html: str) -> str:
    found = re.search(r"<style>(.*)</style>", html, re.DOTALL)
    assert found is not None
    return re.sub(r"\s+", " ", found[1])


def test_every_card_and_its_reasoning_is_open_by_default() -> None:
    body = _body(_render())
    files = [d for d in body.details if d.get("class") == "file"]
    reasoning = [d for d in body.details if d.get("class") != "file"]
    assert files and reasoning
    assert all("open" in d for d in body.details)


def test_one_control_collapses_every_card_without_script() -> None:
    html = _render()
    body = _body(html)
    tags = [t for t, _ in body.children]
    control = tags.index("input")
    _, attrs = body.children[control]
    assert attrs["type"] == "checkbox" and attrs["id"] == "collapse-all"
    assert body.labels["collapse-all"].strip() == "Collapse all"
    # a sibling before every card, so `:checked ~ details` reaches each of them
    first_card = next(
        i for i, (t, a) in enumerate(body.children) if t == "details" and a.get("class") == "file"
    )
    assert control < first_card
    css = _css(html)
    assert ".collapse-all:checked ~ details.file > .body { display: none; }" in css
    assert "<script" not in html.lower()


def test_the_print_stylesheet_shows_every_card_whole() -> None:
    css = _css(_render())
    prints = " ".join(re.findall(r"@media print \{(.*?\}) \}", css))
    assert "pre { max-height: none; overflow: visible; }" in prints  # no scroll box cut
    assert ".collapse-control { display: none; }" in prints  # the control is for screens
    assert ".collapse-all:checked ~ details.file > .body { display: block; }" in prints
    assert "article { break-inside: avoid; }" in prints
    assert "print-color-adjust: exact" in prints  # the marked spans keep their colours
