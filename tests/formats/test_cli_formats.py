"""`thinkfix formats` lists every format with how it is detected and where reasoning goes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.formats.registry import FORMATS


def test_cli_formats_lists_each_format() -> None:
    result = CliRunner().invoke(main, ["formats"])
    assert result.exit_code == 0
    for fmt in FORMATS.values():
        assert fmt.id in result.output
    assert result.output.count("detected:") == len(FORMATS)
    assert result.output.count("reasoning:") == len(FORMATS)


def test_cli_formats_json_has_schema_version() -> None:
    result = CliRunner().invoke(main, ["formats", "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.output)
    assert payload["schema_version"] == 1
    assert [f["id"] for f in payload["formats"]] == list(FORMATS)
    assert all(f["detection"] and f["placement"] for f in payload["formats"])
