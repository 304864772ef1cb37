"""Settings: file < environment < flags, discovery, validation, and what they build.

Settings are resolved by click (`cli.options`: the config file as `ctx.default_map`,
`THINKFIX_*` as each setting's `envvar`, then the flags); `resolve` runs that on the real
`thinkfix scan` and returns the `Settings` it built."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from thinkfix.cli import main
from thinkfix.engine.settings import config as config_module
from thinkfix.engine.settings.config import find_config, policy, read_config, scan_options
from thinkfix.engine.settings.values import ConfigError, Settings
from thinkfix.normalizer.policy import DEFAULT, OrphanClose

Resolve = Callable[..., Settings]


@pytest.fixture
def resolve(monkeypatch: pytest.MonkeyPatch) -> Resolve:
    """`resolve(*flags, config=, environ=, cwd=, use_config=)`: the settings `thinkfix scan`
    resolves from the flags, the config file and the environment, run from `cwd`."""
    for key in [k for k in os.environ if k.startswith("THINKFIX_")]:
        monkeypatch.delenv(key)
    seen: list[Settings] = []
    monkeypatch.setattr(
        config_module, "describe", lambda settings, sources: seen.append(settings) or ""
    )

    def run(
        *flags: str,
        config: str | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: str | None = None,
        use_config: bool = True,
    ) -> Settings:
        monkeypatch.chdir(cwd or "/")
        args = ["scan", "--show-settings", *flags]
        args += ["--config", config] if config else []
        args += [] if use_config else ["--isolated"]
        result = CliRunner().invoke(main, args, env=dict(environ or {}))
        if result.exit_code == 2 and not seen:
            raise ConfigError(result.stderr)
        assert result.exit_code == 0, result.output
        return seen.pop()

    return run


def _pyproject(folder: Path, body: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text("[project]\nname = 'x'\n\n[tool.thinkfix]\n" + body)
    return path


def test_config_precedence_file_env_flag(tmp_path: Path, resolve: Resolve) -> None:
    _pyproject(
        tmp_path,
        # jobs = 2: a config file's jobs is at most twice the cores, so 2 holds on any machine
        'output-format = "json"\njobs = 2\norphan-close = "strip"\n'
        'exclude = ["a/**"]\nstatistics = true\n',
    )
    env = {"THINKFIX_JOBS": "1", "THINKFIX_ORPHAN_CLOSE": "split", "THINKFIX_EXCLUDE": "b/**,c/**"}
    s = resolve(environ={}, cwd=str(tmp_path))
    assert (s.output_format, s.jobs, s.orphan_close, s.exclude) == ("json", 2, "strip", ("a/**",))
    s = resolve(environ=env, cwd=str(tmp_path))
    assert (s.output_format, s.jobs, s.orphan_close, s.exclude) == (
        "json",
        1,
        "split",
        ("b/**", "c/**"),
    )
    s = resolve(
        "--jobs", "3", "--exclude", "d/**", "--no-statistics", environ=env, cwd=str(tmp_path)
    )
    assert (s.output_format, s.jobs, s.exclude, s.statistics) == ("json", 3, ("d/**",), False)
    assert policy(s).orphan_close is OrphanClose.SPLIT


def test_config_found_upward_and_pyproject_without_table_skipped(
    tmp_path: Path, resolve: Resolve
) -> None:
    (tmp_path / "thinkfix.toml").write_text('format = "pi"\n')
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_config(str(inner)) == str(tmp_path / "thinkfix.toml")
    assert resolve(environ={}, cwd=str(inner)).format == "pi"
    _pyproject(tmp_path / "a", 'format = "codex"\n')
    assert resolve(environ={}, cwd=str(inner)).format == "codex"


def test_config_explicit_file_and_env_file(tmp_path: Path, resolve: Resolve) -> None:
    other = tmp_path / "other.toml"
    other.write_text('[tool.thinkfix]\nselect = ["block"]\n')
    assert resolve(config=str(other), environ={}, cwd="/").select == ("block",)
    assert resolve(environ={"THINKFIX_CONFIG": str(other)}, cwd="/").select == ("block",)
    assert resolve(environ={}, cwd=str(tmp_path), use_config=False) == Settings()


def test_config_paths_are_relative_to_the_file(tmp_path: Path, resolve: Resolve) -> None:
    path = _pyproject(
        tmp_path,
        'baseline = "b.json"\nreport = ["sarif=out/r.sarif"]\n'
        'disable = {paths = ["datasets/**"], models = ["minimax-*"]}\n',
    )
    s = resolve(config=str(path), environ={})
    assert s.baseline == os.path.join(tmp_path, "b.json")
    assert s.report == (f"sarif={os.path.join(tmp_path, 'out/r.sarif')}",)
    options = scan_options(s)
    assert options.disabled_base == str(tmp_path)
    assert options.path_disabled(str(tmp_path / "datasets" / "x" / "s.jsonl"))
    assert not options.path_disabled(str(tmp_path / "sessions" / "s.jsonl"))
    assert options.model_disabled("MiniMax-M2") and not options.model_disabled("qwen3")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("colour = true\n", "unknown key 'colour'"),
        ("jobs = 'many'\n", "whole number"),
        ("statistics = 'maybe'\n", "true or false"),
        ("orphan-close = 'never'\n", "must be one of"),
        ("format = 'word'\n", "auto or one of"),
        ("exclude = 'a'\nselect = [1]\n", "list of strings"),
        ("disable = {files = ['x']}\n", "disable.files"),
        ("[", "invalid TOML"),
    ],
)
def test_config_errors(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "thinkfix.toml"
    path.write_text(body)
    with pytest.raises(ConfigError, match=message):
        read_config(str(path))


def test_config_env_values_are_checked(resolve: Resolve) -> None:
    with pytest.raises(ConfigError, match="THINKFIX_EXIT_ZERO"):
        resolve(environ={"THINKFIX_EXIT_ZERO": "perhaps"}, use_config=False)
    s = resolve(
        environ={
            "THINKFIX_EXIT_ZERO": "yes",
            "THINKFIX_PROTECT_CODE": "0",
            "THINKFIX_TAGS": "think, thought",
        },
        use_config=False,
    )
    assert s.exit_zero is True
    p = policy(s)
    assert p.protect_code is False and set(p.tags) == {"think", "thought"}


def test_config_scan_options_kinds_and_inputs() -> None:
    s = Settings(
        select=("all",),
        ignore=("duplicate",),
        exclude=("x/**",),
        parse_all=True,
        unknown_format="skip",
    )
    options = scan_options(s)
    assert "unclosed_inline" in options.kinds and "duplicate" not in options.kinds
    assert options.inputs.exclude == ("x/**",) and not options.prefilter
    assert options.policy == DEFAULT
    with pytest.raises(ConfigError, match="unknown leak kind"):
        scan_options(Settings(select=("nope",)))
