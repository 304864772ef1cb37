"""A file's read failure is reported with its exception's text masked as snippets are.

A reader's exception may quote what it read (sqlite3's decode error quoted a row's text;
`int()` and `fromisoformat` quote the value they refuse), and no reporter masks an error's
message: the scan masks it where it is made (`engine/scan/task.py`, `_why`), as `--redact`
asks, so a credential in a damaged file is not shown by the error that reports it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands import invoke
from thinkfix.engine.scan import one_file

pytestmark = pytest.mark.usefixtures("isolated_cli")

TOKEN = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
SESSION = Path(__file__).resolve().parents[2] / "fixtures" / "pi"


@pytest.mark.parametrize("error", [ValueError, RuntimeError], ids=["expected", "unexpected"])
@pytest.mark.parametrize("redact", [None, "none"], ids=["default", "none"])
def test_a_read_failure_quoting_a_token_is_masked(
    monkeypatch: pytest.MonkeyPatch, error: type[Exception], redact: str | None
) -> None:
    def fail(self: object, fp: object, *args: object, **kwargs: object) -> None:
        raise error(f"invalid literal for int() with base 10: 'key {TOKEN}'")

    monkeypatch.setattr(one_file._FileScan, "run", fail)
    extra = ["--redact", redact] if redact else []
    result = invoke("scan", "--output-format", "json", *extra, str(SESSION))
    assert result.exit_code == 2
    (err,) = json.loads(result.stdout)["errors"]
    assert err["kind"] == "unreadable" and "invalid literal for int()" in err["message"]
    assert (TOKEN in err["message"]) == (redact == "none")
