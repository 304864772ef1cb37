"""The pages users read cite no file the repository does not ship (#27 item 8): fixtures/README.md,
docs/formats.md and two other docs pages named DESIGN.md or FORMATS.md, design notes outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


PAGES = [
    "README.md",
    "fixtures/README.md",
    *(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
]


@pytest.mark.parametrize("page", PAGES)
def test_the_page_cites_no_unshipped_design_note(page: str) -> None:
    text = (ROOT / page).read_text("utf-8")
    assert [n for n in ("DESIGN.md", "FORMATS.md") if n in text] == []
