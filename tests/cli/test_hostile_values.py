"""Hostile option values are usage errors, never crashes (issue 22 item 8): each exits 2 on one
`thinkfix: error:` line naming the setting and where its value came from (the flag, the
environment variable or the config file), with no traceback and no "internal error"."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKING = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("THINKFIX_STATE_DIR", str(tmp_path / "state"))
    (tmp_path / "sessions").mkdir()
    shutil.copy(LEAKING, tmp_path / "sessions" / "s.jsonl")
    (tmp_path / "a-folder").mkdir()
    monkeypatch.chdir(tmp_path)


def _toml(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return value if isinstance(value, str) and value[:1] in "-0123456789in" else repr(value)


#: (setting, its flag, the hostile value as a flag or variable gives it, as TOML writes it).
SETTINGS = [
    ("max_record_size", "--max-record-size", "inf", "inf"),
    ("max_record_size", "--max-record-size", "1e400", '"1e400"'),
    ("max_record_size", "--max-record-size", "-inf", "-inf"),
    ("max_record_size", "--max-record-size", "nan", "nan"),
    ("max_record_size", "--max-record-size", "1e400MB", '"1e400MB"'),
    ("tags", "--tags", "th<ink", '["th<ink"]'),
    ("tags", "--tags", "think,a b", '["think", "a b"]'),
    ("tags", None, None, '[""]'),
    ("redact", "--redact", "bogus", '"bogus"'),  # #27 item 8: the variable went unnamed
]


def _case_id(case: tuple[str, str | None, str | None, str]) -> str:
    return f"{case[0]}={case[3]}"


@pytest.mark.parametrize("source", ["flag", "env", "config"])
@pytest.mark.parametrize("command", ["scan", "repair", "diff"])
@pytest.mark.parametrize("case", SETTINGS, ids=_case_id)
def test_a_hostile_setting_is_a_usage_error_naming_its_source(
    tmp_path: Path,
    case: tuple[str, str | None, str | None, str],
    source: str,
    command: str,
) -> None:
    name, flag, value, toml = case
    args, env = [command], {}
    if command == "repair":
        args.append("--dry-run")
    if source == "flag":
        if flag is None:
            pytest.skip("no flag spells this value")
        args.append(f"{flag}={value}")  # one word: `--redact` alone takes no value
        where = flag
    elif source == "env":
        if value is None:
            pytest.skip("no variable spells this value")
        env[f"THINKFIX_{name.upper()}"] = value
        where = f"$THINKFIX_{name.upper()}"
    else:
        config = tmp_path / "thinkfix.toml"
        config.write_text(f"{name.replace('_', '-')} = {toml}\n")
        where = str(config)
    result = CliRunner().invoke(main, [*args, "sessions"], env=env)
    _assert_usage_error(result.exit_code, result.output, result.stderr, name, where)


def _assert_usage_error(code: int, output: str, stderr: str, name: str, where: str) -> None:
    assert code == 2, output
    assert "Traceback" not in output and "internal error" not in output, output
    error = stderr.strip().splitlines()[-1]
    assert error.startswith("thinkfix: error: "), stderr
    assert name in error and where in error, error


@pytest.mark.parametrize("command", ["scan", "repair"])
@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_dask_address_is_a_usage_error(command: str, address: str) -> None:
    args = [command, "--dry-run"] if command == "repair" else [command]
    result = CliRunner().invoke(main, [*args, "--dask", address, "sessions"])
    _assert_usage_error(result.exit_code, result.output, result.stderr, "--dask", "--dask")


@pytest.mark.parametrize("command", ["scan", "repair"])
def test_a_dask_address_that_cannot_connect_is_an_error_not_a_traceback(command: str) -> None:
    pytest.importorskip("distributed")
    args = [command, "--dry-run"] if command == "repair" else [command]
    result = CliRunner().invoke(main, [*args, "--dask", "tls://127.0.0.1:1", "sessions"])
    _assert_usage_error(
        result.exit_code, result.output, result.stderr, "--dask", "tls://127.0.0.1:1"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "--state", "a-folder"],
        ["watch", "--poll", "--state", "a-folder"],
        ["watch", "--poll", "--textfile", "a-folder"],
    ],
    ids=" ".join,
)
def test_a_file_option_naming_a_folder_is_a_usage_error(args: list[str]) -> None:
    """`a-folder` is a folder: a file cannot be written there by that name."""
    result = CliRunner().invoke(main, [*args, "sessions"])
    _assert_usage_error(result.exit_code, result.output, result.stderr, args[-2], "a-folder")


def test_a_textfile_in_a_missing_folder_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "thinkfix.prom"
    result = CliRunner().invoke(
        main, ["watch", "--poll", "--isolated", "--textfile", str(missing), "sessions"]
    )
    _assert_usage_error(result.exit_code, result.output, result.stderr, str(missing), "cannot")
