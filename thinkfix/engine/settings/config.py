"""Settings from `[tool.thinkfix]` (pyproject.toml) or thinkfix.toml, `THINKFIX_*`, and flags.

Precedence, lowest first: built-in defaults, the config file, environment
variables, command-line flags. A list given at a higher level replaces the one
below (it does not extend it). The config file is `--config FILE` when given,
else the first `thinkfix.toml` or `pyproject.toml` with a `[tool.thinkfix]`
table found from the working folder upward. Keys may be written `snake_case`
or `kebab-case`; environment variables are `THINKFIX_` + the key in upper case
(`THINKFIX_OUTPUT_FORMAT=json`, `THINKFIX_EXCLUDE=a/**,b/**`). Paths in the
config file (baseline, output, reports, `disable.paths`) are relative to the
file's folder. Which value wins is click's work (`cli.options`: the file read here becomes
the command's `default_map`, each `THINKFIX_*` a setting's `envvar`); this module finds and
checks the file (`config_values`) and gives the winning values their meaning (`settings`).

A config file travels with the files it configures, so it is trusted no more than they are
(docs/reliability.md, "A hostile checkout"): a value it gives may not name a file to write
outside its own folder (symlinks and `..` resolved), nor weaken redaction (`redact = "none"`);
the same value from a flag or `THINKFIX_*`, which come from whoever runs thinkfix, may.
Example:

    [tool.thinkfix]
    exclude = ["archive/**"]
    select = ["block", "orphan_close", "unclosed"]
    baseline = "thinkfix-baseline.json"
    orphan-close = "strip"
    disable = {paths = ["datasets/**"], models = ["minimax-*"]}
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any

from thinkfix.engine.inputs.files import InputOptions, UnknownPolicy
from thinkfix.engine.scan.options import ScanOptions, select_kinds
from thinkfix.engine.secrets.rules import Redaction
from thinkfix.formats import registry
from thinkfix.formats.base import AnthropicMode, ClaudeCodeMode, CodexMode
from thinkfix.normalizer.policy import (
    DEFAULT,
    TAG_NAMES_RULE,
    NativeMode,
    OrphanClose,
    Policy,
    bad_tag,
)

ENV_PREFIX = "THINKFIX_"
CONFIG_NAMES = ("thinkfix.toml", "pyproject.toml")


class ConfigError(ValueError):
    """A config file, environment variable or flag value that cannot be used."""


@dataclass(frozen=True)
class Settings:
    """Every scan option and policy knob, after defaults, file, environment and flags."""

    format: str = "auto"
    output_format: str | None = None  # None: text, or github inside GitHub Actions
    output: str | None = None
    report: tuple[str, ...] = ()  # FORMAT=PATH
    statistics: bool = False
    exit_zero: bool = False
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    jobs: int | None = None  # None or 0: all cores
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    unknown_format: str = UnknownPolicy.AUTO.value
    allow_no_sessions: bool = False  # a run with no session file to read is not an error
    parse_all: bool = False
    baseline: str | None = None
    write_baseline: str | None = None
    color: bool | None = None  # None: when stdout is a terminal and NO_COLOR is unset
    progress: bool | None = None  # None: when stderr is a terminal outside CI
    redact: str | None = None
    max_findings: int = 1000  # per message; 0: no cap
    max_record_size: int = 64 << 20  # bytes; "64MB" in files and flags; 0: no limit
    # normalizer policy (None: the default policy's value)
    tags: tuple[str, ...] | None = None
    orphan_close: str | None = None
    native_mode: str | None = None
    protect_code: bool | None = None
    trim: bool | None = None
    harmony: bool | None = None
    prose_delimiters: bool | None = None
    # opt-outs for applications whose own prompts use <think> as an annotation
    disable_paths: tuple[str, ...] = ()
    disable_models: tuple[str, ...] = ()
    # repair: where each format puts the extracted reasoning (`thinkfix formats` says more)
    claude_code_mode: ClaudeCodeMode = ClaudeCodeMode.RESUMABLE
    codex_mode: CodexMode = CodexMode.AUTO
    anthropic_mode: AnthropicMode = AnthropicMode.AUTO
    # where the file-level settings came from
    config_file: str | None = None

    @property
    def config_root(self) -> str | None:
        return os.path.dirname(self.config_file) if self.config_file else None

    @property
    def pattern_anchor(self) -> str:
        """The folder `exclude` and `disable.paths` patterns are relative to, wherever they
        were given: the config file's folder, else the working folder (ruff's rule)."""
        return self.config_root or os.getcwd()


_FIELDS = {f.name: f for f in fields(Settings)}
_LISTS = {
    "report",
    "select",
    "ignore",
    "include",
    "exclude",
    "tags",
    "disable_paths",
    "disable_models",
}
_BOOLS = {
    "statistics",
    "exit_zero",
    "respect_gitignore",
    "parse_all",
    "color",
    "progress",
    "allow_no_sessions",
    "protect_code",
    "trim",
    "harmony",
    "prose_delimiters",
}
_INTS = {"jobs", "max_findings"}
_CHOICES: dict[str, tuple[str, ...]] = {
    "orphan_close": tuple(m.value for m in OrphanClose),
    "native_mode": tuple(m.value for m in NativeMode),
    "unknown_format": tuple(m.value for m in UnknownPolicy),
    "claude_code_mode": tuple(m.value for m in ClaudeCodeMode),
    "codex_mode": tuple(m.value for m in CodexMode),
    "anthropic_mode": tuple(m.value for m in AnthropicMode),
}
#: Placement modes: held as their enum, given by name.
_PLACEMENTS: dict[str, type[Enum]] = {
    "claude_code_mode": ClaudeCodeMode,
    "codex_mode": CodexMode,
    "anthropic_mode": AnthropicMode,
}
_SIZES = {"max_record_size"}
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
}
_PATHS = {"output", "baseline", "write_baseline"}
#: The settings whose value is a file thinkfix writes: a config file keeps them inside its folder.
WRITES = ("output", "write_baseline", "report")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_INTERNAL = {"config_file"}
#: The settings a flag, a config key or a `THINKFIX_*` variable may set.
SETTING_NAMES = frozenset(_FIELDS) - _INTERNAL


def _key(name: str) -> str:
    return name.strip().replace("-", "_").lower()


def _coerce(name: str, value: Any, source: str) -> Any:
    """A value of the field's type, from TOML (typed) or an environment variable (text)."""
    where = f"{source}: {name}"
    if name in _LISTS:
        if isinstance(value, str):
            value = [v for v in (p.strip() for p in value.split(",")) if v]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} must be a list of strings")
        if name == "tags":
            return tag_names(value, where)
        return tuple(value)
    if name in _BOOLS:
        if isinstance(value, str):
            low = value.strip().lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, not {value!r}")
        return value
    if name in _SIZES:
        return parse_size(value, where)
    if name in _INTS:
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where} must be a whole number, not {value!r}") from None
        if number < 0 or isinstance(value, bool):
            raise ConfigError(f"{where} must be 0 or more, not {value!r}")
        return number
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, not {value!r}")
    if name in _CHOICES and value not in _CHOICES[name]:
        raise ConfigError(f"{where} must be one of {', '.join(_CHOICES[name])}, not {value!r}")
    if name in _PLACEMENTS:
        return _PLACEMENTS[name](value)
    if name == "format" and value != "auto" and value not in registry.FORMATS:
        raise ConfigError(
            f"{where} must be auto or one of {', '.join(registry.FORMATS)}, not {value!r}"
        )
    if name == "redact":  # checked here, where the variable or flag that gave it is known
        try:
            Redaction.from_flag(value)
        except ValueError:
            raise ConfigError(f"{where} must be one of none, secrets, all, not {value!r}") from None
    return value


def parse_size(value: Any, where: str = "size") -> int:
    """Bytes from `67108864`, `"64MB"`, `"64 MiB"` or `"1g"` (binary units)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = str(value).strip().lower().replace(" ", "")
    number = text.rstrip("kmgib")
    unit = text[len(number) :]
    try:
        size = int(float(number) * _UNITS[unit])
    except (KeyError, ValueError, OverflowError):  # inf and 1e400 overflow, nan is no number
        raise ConfigError(f"{where} must be a size such as 64MB, not {value!r}") from None
    if size < 0:
        raise ConfigError(f"{where} must be 0 or more, not {value!r}")
    return size


def tag_names(values: Any, where: str) -> tuple[str, ...]:
    """The tag names of a `tags` setting; ConfigError naming `where` for one that no tag
    could have (an empty one, one with a space or `<`)."""
    bad = bad_tag(values)
    if bad is not None:
        raise ConfigError(f"{where} must be {TAG_NAMES_RULE}, not {bad!r}")
    return tuple(values)


def _inside(path: str, root: str) -> bool:
    """Does `path`, every symlink and `..` resolved, lie inside the folder `root`?"""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _trusted_file_value(name: str, value: Any, config_file: str) -> None:
    """ConfigError when a config file's value writes outside its folder or unmasks secrets:
    the config of a checkout is as untrusted as the sessions in it."""
    root = os.path.dirname(config_file)
    if name in WRITES:
        targets = value if isinstance(value, tuple) else (value,)
        for target in targets:
            path = target.partition("=")[2] if name == "report" else target
            if path and not _inside(path, root):
                raise ConfigError(
                    f"{config_file}: {name} names {path!r}, outside the project ({root}); "
                    f"a config file writes only inside its own folder (a flag or "
                    f"${env_name(name)} may name any file)"
                )
    if name == "redact" and _weakens(value):
        raise ConfigError(
            f"{config_file}: redact = {value!r} would show what the default masks; a config "
            "file may only ask for as much or more (secrets, all); --redact none or "
            f"${env_name('redact')}=none may ask for less"
        )


def _weakens(redact: Any) -> bool:
    try:
        return Redaction.from_flag(redact) is Redaction.NONE
    except ValueError:
        return False  # not a redaction at all: `redaction` says so


def find_config(start: str) -> str | None:
    """The first thinkfix.toml, or pyproject.toml with [tool.thinkfix], from `start` upward."""
    folder = os.path.abspath(start)
    while True:
        for name in CONFIG_NAMES:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and (name != "pyproject.toml" or _has_table(path)):
                return path
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


_TOML_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


def toml_error(path: str, exc: ValueError) -> ConfigError:
    """`path:line:col: invalid TOML: message`, the location editors jump to.

    tomllib puts the place at the end of its message ("... (at line 3, column 5)"); it becomes
    the prefix, where compilers and linters put it.
    """
    message = str(exc)
    at = _TOML_AT.search(message)
    if at is None:
        return ConfigError(f"{path}: invalid TOML: {message}")
    if at[1] is None:  # "at end of document": the place is after the last line
        try:
            with open(path, "rb") as fp:
                lines = fp.read().count(b"\n") or 1
        except OSError:
            lines = 1
        return ConfigError(
            f"{path}:{lines}:1: invalid TOML: {message[: at.start()]} (at end of document)"
        )
    return ConfigError(f"{path}:{at[1]}:{at[2]}: invalid TOML: {message[: at.start()]}")


def _load(path: str) -> dict[str, Any]:
    # Imported here: most runs read no config file, and tomllib costs ~2 ms of start-up.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 with the tomli backport
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
    try:
        with open(path, "rb") as fp:
            return tomllib.load(fp)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(path, exc) from exc


def _has_table(pyproject: str) -> bool:
    # A pyproject.toml that does not parse is an error, never "no table here": skipping it
    # would silently apply a parent folder's settings instead of the ones the user wrote.
    doc = _load(pyproject)
    return isinstance(doc.get("tool"), dict) and "thinkfix" in doc["tool"]


def read_config(path: str) -> dict[str, Any]:
    """The settings a config file sets, typed and with paths made absolute."""
    doc = _load(path)
    tool = doc.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("thinkfix"), dict):
        table, where = tool["thinkfix"], f"{path} [tool.thinkfix]"
    elif os.path.basename(path) == "pyproject.toml":
        return {}
    else:
        table, where = {k: v for k, v in doc.items() if k != "tool"}, path
    flat: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = _key(raw_key)
        if key == "disable":
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{where}: disable must be a table {{paths = [...], models = [...]}}"
                )
            for sub, items in value.items():
                name = f"disable_{_key(sub)}"
                if name not in ("disable_paths", "disable_models"):
                    raise ConfigError(f"{where}: unknown key disable.{sub} (known: paths, models)")
                flat[name] = items
            continue
        if key not in _FIELDS or key in _INTERNAL:
            raise ConfigError(f"{where}: unknown key {raw_key!r}")
        flat[key] = value
    out = {k: _coerce(k, v, where) for k, v in flat.items()}
    root = os.path.dirname(os.path.abspath(path))
    for key in _PATHS & out.keys():
        out[key] = os.path.join(root, out[key])
    if "report" in out:
        out["report"] = tuple(_report_path(spec, root) for spec in out["report"])
    return out


def _report_path(spec: str, root: str) -> str:
    name, sep, target = spec.partition("=")
    return f"{name}={os.path.join(root, target)}" if sep and target else spec


def config_values(
    config: str | None, *, isolated: bool = False, cwd: str | None = None
) -> tuple[str | None, dict[str, Any]]:
    """The config file to use and the settings it sets (typed, paths made absolute), keyed by
    setting name, which is the name of the command-line parameter that sets it: `config`
    when given, else the first one found from `cwd` upward (none with `isolated`). What
    the CLI hands click as `ctx.default_map`. Raises `ConfigError`."""
    path = config or (None if isolated else find_config(cwd or os.getcwd()))
    if not path:
        return None, {}
    return os.path.abspath(path), read_config(path)


class Origin(Enum):
    """Where a setting's value came from, lowest precedence first (click picks the winner)."""

    DEFAULT = "default"
    FILE = "file"
    ENV = "env"
    FLAG = "flag"


def env_name(name: str) -> str:
    """The environment variable that sets `name`: `THINKFIX_` and the name in upper case."""
    return ENV_PREFIX + name.upper()


def settings(
    given: Mapping[str, tuple[Any, Origin]],
    config_file: str | None = None,
    flags: Mapping[str, str] | None = None,
) -> Settings:
    """The settings from each one's winning value and where it came from: a file's value is
    already typed (`read_config`), an environment variable's is text, a flag's is what click
    parsed (a repeatable flag also takes comma-separated lists; `flags` spells each one as
    given, for its errors); a default leaves the field's
    own. A config file's value that writes outside its folder or weakens redaction is refused
    (`_trusted_file_value`). Raises `ConfigError` naming the variable, flag or file."""
    values: dict[str, Any] = {}
    for name, (value, origin) in given.items():
        if name not in SETTING_NAMES:
            raise ConfigError(f"unknown setting {name!r}")
        if origin is Origin.ENV:
            values[name] = _coerce(name, value, f"${env_name(name)}")
        elif origin is Origin.FLAG:
            if name in _LISTS and isinstance(value, tuple) and name != "report":
                # FORMAT=PATH may hold a comma; other lists also take comma-separated values
                value = tuple(v.strip() for item in value for v in item.split(",") if v.strip())
            values[name] = _coerce(name, value, (flags or {}).get(name, "flag"))
        elif origin is Origin.FILE:
            if config_file is not None:
                _trusted_file_value(name, value, config_file)
            values[name] = value
    return replace(Settings(), config_file=config_file, **values)


#: Policy settings and the `Policy` attribute each sets.
_POLICY_FIELDS = {
    "tags": "tags",
    "orphan_close": "orphan_close",
    "native_mode": "native",
    "protect_code": "protect_code",
    "trim": "trim",
    "harmony": "harmony",
    "prose_delimiters": "prose_delimiters",
}


def describe(settings: Settings, sources: Mapping[str, str]) -> str:
    """The resolved settings as TOML-like lines, each with its source as a comment."""
    lines = [f"# config file: {settings.config_file or '(none)'}"]
    for name in sorted(sources):
        value = getattr(settings, name)
        if value is None and name in _POLICY_FIELDS:  # unset: the default policy's own value
            value = getattr(DEFAULT, _POLICY_FIELDS[name])
        if isinstance(value, Enum):
            value = value.value
        shown = (
            "(unset)"
            if value is None
            else json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)
        )
        lines.append(f"{name} = {shown}  # {sources[name]}")
    return "\n".join(lines) + "\n"


def policy(settings: Settings, base: Policy = DEFAULT) -> Policy:
    """The normalizer policy the settings ask for."""
    changes: dict[str, Any] = {}
    for name in ("tags", "orphan_close", "protect_code", "trim", "harmony", "prose_delimiters"):
        value = getattr(settings, name)
        if value is not None:
            changes[name] = value
    if settings.native_mode is not None:
        changes["native"] = settings.native_mode
    return base.with_changes(**changes) if changes else base


def redaction(settings: Settings) -> Redaction:
    """How much session text outputs may show: secrets masked unless `redact = "none"`."""
    try:
        return Redaction.from_flag(settings.redact)
    except ValueError:
        raise ConfigError(
            f"redact must be one of none, secrets, all, not {settings.redact!r}"
        ) from None


def scan_options(settings: Settings, base_policy: Policy | None = None) -> ScanOptions:
    """What the engine needs from the settings."""
    try:
        kinds = select_kinds(settings.select, settings.ignore)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return ScanOptions(
        policy=base_policy if base_policy is not None else policy(settings),
        kinds=kinds,
        inputs=InputOptions(
            include=settings.include,
            exclude=settings.exclude,
            anchor=settings.pattern_anchor,
            respect_ignore=settings.respect_gitignore,
            format=settings.format,
            unknown=UnknownPolicy(settings.unknown_format),
        ),
        disabled_models=settings.disable_models,
        disabled_paths=settings.disable_paths,
        disabled_base=settings.pattern_anchor,
        prefilter=not settings.parse_all,
        max_findings=settings.max_findings,
        max_record_size=settings.max_record_size,
        allow_no_sessions=settings.allow_no_sessions,
        redaction=redaction(settings),
    )
