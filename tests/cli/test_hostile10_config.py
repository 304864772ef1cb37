"""A checkout's config file, second pass (hostile10): what it sets must neither break a command
that does not take the setting, nor start as many processes as it likes, nor lift the bounds
on hostile input, nor make thinkfix read what lies outside the project (docs/reliability.md,
"A hostile checkout")."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.cli.test_hostile_config import _pyproject
from tests.cli.test_hostile_config import checkout as one_session  # noqa: F401 - a fixture
from thinkfix.cli import main
from thinkfix.engine.parallel import pool
from thinkfix.engine.settings.config import Origin, settings
from thinkfix.engine.settings.values import ConfigError, Settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LEAKING = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"


@pytest.fixture
def checkout(one_session: Path) -> Path:  # noqa: F811 - the fixture imported above
    """The first pass's checkout (`test_hostile_config.checkout`), with six sessions."""
    for n in range(1, 6):
        shutil.copy(LEAKING, one_session / "sessions" / f"s{n}.jsonl")
    return one_session


def _run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [*args], env=env)


def test_hostile10_a_scan_setting_named_like_a_repair_flag_does_not_crash_repair(
    checkout: Path, tmp_path: Path
) -> None:
    """`check` is scan's health checks and the name of repair's `--check` flag: the config's
    list reached the flag (click's default map is by name) and repair crashed."""
    _pyproject(checkout, 'check = ["signature"]')
    out = tmp_path / "out"
    result = _run("repair", "--out", str(out), "sessions")
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert result.exit_code == 1, result.output
    assert len(list(out.rglob("*.jsonl"))) == 6  # repaired, not merely checked
    assert _run("scan", "--show-settings", "sessions").output.count('check = ["signature"]') == 1


def test_hostile10_config_jobs_is_capped_at_twice_the_cores(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`jobs = 100000` in a checkout started one process per session file found."""
    monkeypatch.setattr(pool, "default_jobs", lambda: 1)
    seen: list[int] = []
    real_run = pool.run

    def spy(fn, tasks, shared, workers, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(workers)
        return real_run(fn, tasks, shared, workers, **kwargs)

    monkeypatch.setattr(pool, "run", spy)
    _pyproject(checkout, "jobs = 100000")
    assert _run("scan", "sessions").exit_code == 1
    assert _run("repair", "--out", str(checkout.parent / "out"), "sessions").exit_code == 1
    assert seen and max(seen) <= 2, seen  # 6 files: 6 workers before
    shown = _run("scan", "--show-settings", "sessions").output
    assert "jobs = 2  #" in shown, shown  # twice the one core


def test_hostile10_jobs_from_the_runner_is_theirs() -> None:
    given = {"jobs": (100000, Origin.FLAG)}
    assert settings(given).jobs == 100000
    assert settings({"jobs": ("100000", Origin.ENV)}).jobs == 100000


def test_hostile10_config_jobs_below_the_cores_is_kept(tmp_path: Path) -> None:
    config = str(tmp_path / "pyproject.toml")
    assert settings({"jobs": (1, Origin.FILE)}, config).jobs == 1
    assert settings({"jobs": (0, Origin.FILE)}, config).jobs == 0  # all cores


@pytest.mark.parametrize(
    "body",
    [
        "max-record-size = 0",
        'max-record-size = "1GB"',
        "max-findings = 0",
        "max-findings = 100000000",
    ],
)
def test_hostile10_config_cannot_lift_the_bounds_on_hostile_input(
    checkout: Path, body: str
) -> None:
    """A checkout that holds a compression bomb could turn the record limit (and with it the
    bomb limit, 16 times it) or the findings cap off beside it."""
    config = _pyproject(checkout, body)
    for command in (["scan"], ["repair", "--dry-run"], ["diff"]):
        result = _run(*command, "sessions")
        assert result.exit_code == 2, (command, result.output)
        assert str(config) in result.stderr and body.split(" ")[0].replace("-", "_") in (
            result.stderr
        )
        assert "Traceback" not in result.output


@pytest.mark.parametrize("body", ['max-record-size = "1MB"', "max-findings = 10"])
def test_hostile10_config_may_tighten_the_bounds(checkout: Path, body: str) -> None:
    _pyproject(checkout, body)
    assert _run("scan", "sessions").exit_code == 1


def test_hostile10_the_runner_may_lift_the_bounds(checkout: Path) -> None:
    _pyproject(checkout, "max-findings = 10")
    assert _run("scan", "sessions", env={"THINKFIX_MAX_RECORD_SIZE": "0"}).exit_code == 1
    assert _run("scan", "--max-record-size", "0", "sessions").exit_code == 1
    assert settings({"max_findings": ("0", Origin.ENV)}).max_findings == 0


@pytest.mark.parametrize("where", ["{outside}", "link.json"])
def test_hostile10_config_reads_a_baseline_only_from_its_project(
    checkout: Path, tmp_path: Path, where: str
) -> None:
    """Any file of the user's could be read as a baseline (and a baseline excuses findings).
    `/dev/zero` and a FIFO are `settings`' cases below: the run they start never ends."""
    outside = tmp_path / "outside.json"
    outside.write_text('{"findings": {}, "schema_version": 1}')
    (checkout / "link.json").symlink_to(outside)
    config = _pyproject(checkout, f"baseline = {where.format(outside=outside)!r}")
    result = _run("scan", "sessions")
    assert result.exit_code == 2, result.output
    assert str(config) in result.stderr and "baseline" in result.stderr
    assert "Traceback" not in result.output


def test_hostile10_config_baseline_inside_and_the_runners_anywhere(
    checkout: Path, tmp_path: Path
) -> None:
    assert _run("scan", "--write-baseline", "b.json", "sessions").exit_code == 0
    _pyproject(checkout, 'baseline = "b.json"')
    assert _run("scan", "sessions").exit_code == 0  # every finding in the baseline
    shutil.move(checkout / "b.json", tmp_path / "b.json")
    _pyproject(checkout, "")
    assert _run("scan", "--baseline", str(tmp_path / "b.json"), "sessions").exit_code == 0


def test_hostile10_settings_from_a_file_refuse_what_the_cli_refuses(tmp_path: Path) -> None:
    """`baseline = "/dev/zero"` read until memory ran out (MemoryError under `ulimit -v`, the
    machine's memory without), a FIFO in the checkout hung the run."""
    config = str(tmp_path / "thinkfix.toml")
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(ConfigError, match="max_record_size"):
        settings({"max_record_size": (0, Origin.FILE)}, config)
    for where in ("/dev/zero", str(tmp_path / "fifo.json")):
        with pytest.raises(ConfigError, match="baseline"):
            settings({"baseline": (where, Origin.FILE)}, config)
    assert settings({"baseline": ("/dev/zero", Origin.FLAG)}) == Settings(baseline="/dev/zero")


def _owned_by_another(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`path` as another user's file: chowned when we are root, else we pose as another uid."""
    if os.getuid() == 0:
        os.chown(path, 4242, -1)
        monkeypatch.setattr(os, "getuid", lambda: 1000)
    else:
        me = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: me + 1)


@pytest.mark.parametrize("name", ["thinkfix.toml", "pyproject.toml"])
def test_hostile10_a_config_another_user_owns_above_the_run_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Anyone may write /tmp/thinkfix.toml: a run in /tmp/mine obeyed it (its `output` inside
    /tmp is inside its project, so it could replace the runner's files there)."""
    for key in [k for k in os.environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)
    shared = tmp_path / "shared"
    mine = shared / "mine"
    mine.mkdir(parents=True)
    shutil.copy(LEAKING, mine / "s.jsonl")
    (mine / "notes.txt").write_text("mine")
    config = shared / name
    table = "[tool.thinkfix]\n" if name == "pyproject.toml" else ""
    config.write_text(f'{table}output = "mine/notes.txt"\nexit-zero = true\n')
    _owned_by_another(config, monkeypatch)
    monkeypatch.chdir(mine)
    result = _run("scan", "s.jsonl")
    assert result.exit_code == 2, result.output
    assert str(config) in result.stderr and "another user" in result.stderr
    assert (mine / "notes.txt").read_text() == "mine"
    assert _run("scan", "--isolated", "s.jsonl").exit_code == 1
    named = _run("scan", "--config", str(config), "s.jsonl")  # named: the runner's choice
    assert named.exit_code == 0 and (mine / "notes.txt").read_text() != "mine"


def test_hostile10_another_users_pyproject_without_a_table_is_passed_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in [k for k in os.environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)
    mine = tmp_path / "shared" / "mine"
    mine.mkdir(parents=True)
    shutil.copy(LEAKING, mine / "s.jsonl")
    for text in ("[project]\nname = 'x'\n", "not [ toml"):
        (tmp_path / "shared" / "pyproject.toml").write_text(text)
        _owned_by_another(tmp_path / "shared" / "pyproject.toml", monkeypatch)
        monkeypatch.chdir(mine)
        assert _run("scan", "s.jsonl").exit_code == 1
