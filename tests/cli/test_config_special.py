"""A config file that is not a regular file, or never ends (edges11). `--config FIFO` waited
for a writer forever (as `--state` and `--baseline` did before review10), `--config
/dev/zero` read until memory ran out, and a config that is not UTF-8 was an internal error.
Every config read (`--config`, `$THINKFIX_CONFIG`, the `thinkfix.toml` or `pyproject.toml`
found upward) now goes through `open_regular` and a bounded read: a usage error naming the
file, exit 2. Each run has a `timeout`: a hang fails the test instead of stalling the suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.processes import run_thinkfix
from tests.telemetry import sessions
from thinkfix.engine.settings.config import MAX_CONFIG_BYTES


def _scan(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    session = tmp_path / "a.jsonl"
    session.write_bytes(sessions.claude_code(0, leak=False))
    done = run_thinkfix(
        "scan",
        "--no-progress",
        *flags,
        str(session),
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
        timeout=60,
    )
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr
    return done.returncode, done.stderr


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("how", ["--config", "$THINKFIX_CONFIG"])
def test_config_fifo_named_is_refused_not_waited_on(tmp_path: Path, how: str) -> None:
    fifo = _fifo(tmp_path / "c.toml")
    if how == "--config":
        code, err = _scan(tmp_path, "--config", str(fifo))
    else:
        code, err = _scan(tmp_path, env={"THINKFIX_CONFIG": str(fifo)})
    assert code == 2, err
    assert str(fifo) in err
    assert "a FIFO, not a regular file" in err


@pytest.mark.parametrize("name", ["thinkfix.toml", "pyproject.toml"])
def test_config_fifo_found_upward_is_refused_not_skipped(tmp_path: Path, name: str) -> None:
    """Skipping it would apply a parent folder's settings instead (as a pyproject.toml that
    does not parse is an error, never "no table here")."""
    fifo = _fifo(tmp_path / name)
    code, err = _scan(tmp_path)
    assert code == 2, err
    assert str(fifo) in err
    assert "a FIFO, not a regular file" in err


def test_config_device_is_refused_not_read_without_end(tmp_path: Path) -> None:
    code, err = _scan(tmp_path, "--config", "/dev/zero")
    assert code == 2, err
    assert "/dev/zero" in err
    assert "a character device, not a regular file" in err


def test_config_link_to_a_device_found_upward_is_refused(tmp_path: Path) -> None:
    (tmp_path / "thinkfix.toml").symlink_to("/dev/zero")
    code, err = _scan(tmp_path)
    assert code == 2, err
    assert "thinkfix.toml" in err
    assert "a character device, not a regular file" in err


def test_config_larger_than_the_bound_is_refused_unread(tmp_path: Path) -> None:
    """A sparse file: its size costs no disk, and reading it whole would cost its size."""
    big = tmp_path / "thinkfix.toml"
    with open(big, "wb") as fp:
        fp.write(b"jobs = 1\n# ")
        fp.truncate(MAX_CONFIG_BYTES + 1)
    code, err = _scan(tmp_path, "--config", str(big))
    assert code == 2, err
    assert str(big) in err
    assert "larger than" in err


def test_config_at_the_bound_is_read(tmp_path: Path) -> None:
    config = tmp_path / "thinkfix.toml"
    body = b'output-format = "json"\n'
    config.write_bytes(body + b"#" + b"x" * (MAX_CONFIG_BYTES - len(body) - 2) + b"\n")
    assert config.stat().st_size == MAX_CONFIG_BYTES
    code, err = _scan(tmp_path, "--config", str(config))
    assert code == 0, err


def test_config_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "thinkfix.toml"
    config.write_bytes(b"jobs = 1\n# caf\xe9\n")
    code, err = _scan(tmp_path, "--config", str(config))
    assert code == 2, err
    assert str(config) in err
    assert "UTF-8" in err
