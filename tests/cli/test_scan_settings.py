"""A broken config file stops the run with its location (issue 14 #7), and
`--show-settings` says what was resolved from where."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    for key in [k for k in __import__("os").environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)


def scan(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("name", ["pyproject.toml", "thinkfix.toml"])
def test_a_malformed_config_is_exit_2_with_file_line_and_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # A valid parent config must not be applied in the broken one's place.
    (tmp_path / "thinkfix.toml").write_text('exclude = ["x/**"]\n')
    child = tmp_path / "project"
    child.mkdir()
    (child / name).write_text('[tool.thinkfix]\nselect = ["block"]\nexclude = [ 1 2 ]\n')
    monkeypatch.chdir(child)
    code, out, err = scan(".")
    assert (code, out) == (2, "")
    assert err.startswith(f"thinkfix: error: {child / name}:3:")
    assert "invalid TOML" in err


def test_show_settings_names_each_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.thinkfix]\nexclude = ["archive/**"]\norphan-close = "strip"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("THINKFIX_OUTPUT_FORMAT", "json")
    code, out, _ = scan("--show-settings", "--jobs", "3", "--no-harmony")
    assert code == 0
    lines = dict(line.split(" = ", 1) for line in out.splitlines() if " = " in line)
    config = str(tmp_path / "pyproject.toml")
    assert lines["exclude"] == f'["archive/**"]  # {config}'
    assert lines["orphan_close"] == f'"strip"  # {config}'
    assert lines["output_format"] == '"json"  # $THINKFIX_OUTPUT_FORMAT'
    assert lines["jobs"] == "3  # --jobs"
    assert lines["harmony"] == "false  # --harmony"
    assert lines["statistics"] == "false  # default"
    assert out.startswith(f"# config file: {config}\n")
