"""A URL whose fsspec backend is not installed is a usage error naming the package (#27
item 2: `thinkfix scan s3://bucket/x` without s3fs printed a 60-line traceback and
"internal error")."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from thinkfix.cli import main

MISSING = [
    (scheme, package)
    for scheme, package in (("s3", "s3fs"), ("gs", "gcsfs"), ("az", "adlfs"))
    if importlib.util.find_spec(package) is None
]


@pytest.mark.skipif(importlib.util.find_spec("fsspec") is None, reason="fsspec not installed")
@pytest.mark.parametrize("command", [["scan"], ["diff"], ["repair", "--dry-run"]])
@pytest.mark.parametrize(("scheme", "package"), MISSING)
def test_a_url_without_its_backend_is_a_usage_error(
    command: list[str], scheme: str, package: str
) -> None:
    result = CliRunner().invoke(main, [*command, f"{scheme}://bucket/sessions"])
    assert result.exit_code == 2, result.output
    assert f"pip install {package}" in result.stderr
    assert "Traceback" not in result.output and "internal error" not in result.stderr
