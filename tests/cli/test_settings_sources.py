"""Settings come through click (issue 12 item 6): the config file is the command's
`default_map`, `THINKFIX_<NAME>` each setting's environment variable, and the flags win; these
are the edges of that layering: one key at every level, `--isolated` with the environment,
and settings a command has no flag for."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.engine.conftest import FIXTURES
from thinkfix.cli import main
from thinkfix.cli import settings as settings_mod
from thinkfix.engine.commands import repair as repair_run
from thinkfix.engine.settings import config, values


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("GITHUB_ACTIONS", "CI", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    for key in [k for k in os.environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def settings(*args: str, env: dict[str, str] | None = None) -> dict[str, tuple[object, str]]:
    """`scan --show-settings`: each setting's value and where it came from."""
    result = CliRunner().invoke(main, ["scan", "--show-settings", *args], env=env)
    assert result.exit_code == 0, result.output
    out: dict[str, tuple[object, str]] = {}
    for line in result.stdout.splitlines()[1:]:
        name, rest = line.split(" = ", 1)
        value, source = rest.split("  # ", 1)
        out[name] = (None if value == "(unset)" else json.loads(value), source)
    return out


def _config(folder: Path) -> Path:
    path = folder / "thinkfix.toml"
    path.write_text('exclude = ["file/**"]\nstatistics = true\nbaseline = "from-file.json"\n')
    return path


@pytest.mark.parametrize(
    ("env", "flags", "expected"),
    [
        ({}, [], ("file", "file")),
        ({"THINKFIX_EXCLUDE": "env/**,more/**"}, [], ("env", "env")),
        ({"THINKFIX_EXCLUDE": "env/**"}, ["--exclude", "flag/**"], ("flag", "flag")),
    ],
)
def test_a_list_at_a_higher_level_replaces_the_lower_one(
    tmp_path: Path, env: dict[str, str], flags: list[str], expected: tuple[str, str]
) -> None:
    path = _config(tmp_path)
    got = settings(*flags, env=env)["exclude"]
    level, _ = expected
    assert (
        got
        == {
            "file": (["file/**"], str(path)),
            "env": (["env/**", "more/**"], "$THINKFIX_EXCLUDE"),
            "flag": (["flag/**"], "--exclude"),
        }[level]
    )


def test_a_bool_and_a_path_at_each_level(tmp_path: Path) -> None:
    path = _config(tmp_path)
    got = settings()
    assert got["statistics"] == (True, str(path))
    assert got["baseline"] == (str(tmp_path / "from-file.json"), str(path))  # the file's folder
    env = {"THINKFIX_STATISTICS": "off", "THINKFIX_BASELINE": "env.json"}
    got = settings(env=env)
    assert got["statistics"] == (False, "$THINKFIX_STATISTICS")
    assert got["baseline"] == ("env.json", "$THINKFIX_BASELINE")  # as given: the working folder
    got = settings("--statistics", "--baseline", "flag.json", env=env)
    assert got["statistics"] == (True, "--statistics")
    assert got["baseline"] == ("flag.json", "--baseline")
    assert settings("--no-statistics", env={"THINKFIX_STATISTICS": "1"})["statistics"] == (
        False,
        "--statistics",
    )


def test_isolated_ignores_the_file_but_not_the_environment(tmp_path: Path) -> None:
    _config(tmp_path)
    got = settings("--isolated", env={"THINKFIX_OUTPUT_FORMAT": "json"})
    assert got["output_format"] == ("json", "$THINKFIX_OUTPUT_FORMAT")
    assert got["exclude"] == ([], "default")
    assert got["statistics"] == (False, "default")


@pytest.mark.parametrize(
    "order", [["--isolated", "--config", "X"], ["--config", "X", "--isolated"]]
)
def test_config_and_isolated_in_either_order_read_the_named_file(
    tmp_path: Path, order: list[str]
) -> None:
    other = tmp_path / "other.toml"
    other.write_text('select = ["block"]\n')
    _config(tmp_path)
    got = settings(*[str(other) if a == "X" else a for a in order])
    assert got["select"] == (["block"], str(other))
    assert got["exclude"] == ([], "default")


def test_thinkfix_config_names_the_file_even_with_isolated(tmp_path: Path) -> None:
    other = tmp_path / "other.toml"
    other.write_text('select = ["block"]\n')
    got = settings("--isolated", env={"THINKFIX_CONFIG": str(other)})
    assert got["select"] == (["block"], str(other))


def test_an_empty_variable_is_a_value_and_a_spaced_one_is_one_item(tmp_path: Path) -> None:
    _config(tmp_path)
    assert settings(env={"THINKFIX_EXCLUDE": ""})["exclude"] == ([], "$THINKFIX_EXCLUDE")
    got = settings(env={"THINKFIX_EXCLUDE": "my dir/**, b/**"})["exclude"]
    assert got == (["my dir/**", "b/**"], "$THINKFIX_EXCLUDE")


def test_jobs_0_on_the_command_line_means_all_cores_over_the_file(tmp_path: Path) -> None:
    # jobs = 2: a config file's jobs is at most twice the cores, so 2 holds on any machine
    (tmp_path / "thinkfix.toml").write_text("jobs = 2\n")
    assert settings()["jobs"] == (2, str(tmp_path / "thinkfix.toml"))
    assert settings("--jobs", "0")["jobs"] == (0, "--jobs")
    assert settings("-j", "1", env={"THINKFIX_JOBS": "5"})["jobs"] == (1, "--jobs")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {"THINKFIX_JOBS": "many"}, "$THINKFIX_JOBS: jobs must be a whole number"),
        ([], {"THINKFIX_ORPHAN_CLOSE": "never"}, "$THINKFIX_ORPHAN_CLOSE: orphan_close must be"),
        (["--max-record-size", "lots"], {}, "--max-record-size: max_record_size must be a size"),
    ],
)
def test_bad_values_from_the_environment_or_a_flag_exit_2(
    args: list[str], env: dict[str, str], message: str
) -> None:
    result = CliRunner().invoke(main, ["scan", "--show-settings", *args], env=env)
    assert result.exit_code == 2
    assert result.stderr == f"thinkfix: error: {message}" + result.stderr.split(message, 1)[1]


def test_a_bad_flag_is_clicks_usage_error_and_exit_2() -> None:
    result = CliRunner().invoke(main, ["scan", "--show-settings", "--jobs", "x"])
    assert result.exit_code == 2
    assert "'x' is not a valid integer" in result.stderr


@pytest.mark.parametrize("command", ["diff", "repair --check", "watch"])
def test_a_setting_with_no_flag_still_reaches_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """repair, diff and watch have no --max-findings, yet the file and the variable set it."""
    seen: list[values.Settings] = []

    def capture(settings: values.Settings, *args: object, **kwargs: object) -> object:
        seen.append(settings)
        raise values.ConfigError("captured")

    monkeypatch.setattr(repair_run, "options", capture)
    monkeypatch.setattr(config, "scan_options", capture)
    args = [*command.split(), str(tmp_path)]
    (tmp_path / "thinkfix.toml").write_text("max-findings = 7\n")
    CliRunner().invoke(main, args)
    CliRunner().invoke(main, args, env={"THINKFIX_MAX_FINDINGS": "9"})
    if command == "watch" and not seen:
        pytest.importorskip("prometheus_client")  # without its extra, watch stops before
    assert [s.max_findings for s in seen] == [7, 9]


def test_scans_settings_do_not_reach_options_of_the_same_name_elsewhere(tmp_path: Path) -> None:
    """diff's --output-format (a diff report format) and repair's --exit-zero (exit 0 on a
    change) are not the settings `output-format` and `exit-zero`, which speak of scan."""
    session = tmp_path / "s.jsonl"
    shutil.copyfile(next((FIXTURES / "pi").glob("*.jsonl")), session)
    (tmp_path / "thinkfix.toml").write_text('output-format = "sarif"\nexit-zero = true\n')
    diff = CliRunner().invoke(main, ["diff", "--no-progress", str(session)])
    assert not diff.stdout.startswith("{")  # text, the diff command's own default
    check = CliRunner().invoke(main, ["repair", "--check", str(session)])
    assert (diff.exit_code, check.exit_code) == (1, 1)


def test_the_cli_and_the_engine_name_the_same_variables() -> None:
    assert settings_mod.ENV_PREFIX == values.ENV_PREFIX
    assert config.env_name("output_format") == "THINKFIX_OUTPUT_FORMAT"
