"""`thinkfix formats` cites only what a user has (#27 item 8): it named `FORMATS.md section N`,
a design note the repository does not ship; the page users have is docs/formats.md."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from thinkfix.cli import main

ROOT = Path(__file__).resolve().parents[2]
UNSHIPPED = ("FORMATS.md", "DESIGN.md")


def test_the_formats_listing_cites_no_unshipped_file() -> None:
    for argv in (["formats"], ["formats", "--json"]):
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0
        assert [name for name in UNSHIPPED if name in result.stdout] == []


def test_the_formats_it_cites_a_page_for_are_on_that_page() -> None:
    result = CliRunner().invoke(main, ["formats", "--json"])
    cited = [
        f["id"] for f in json.loads(result.stdout)["formats"] if "docs/formats.md" in f["locations"]
    ]
    assert cited  # Claude Code, Codex, pi, claw-code, Gemini CLI: the page's table
    page = (ROOT / "docs" / "formats.md").read_text("utf-8")
    assert [f for f in cited if f"| `{f}` " not in page and f"| `{f}`," not in page] == []
