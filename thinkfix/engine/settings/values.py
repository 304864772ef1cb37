"""Every setting's name, type and default (`Settings`), and how a value from a config file, `THINKFIX_*` or a flag is checked and given its type: lists, booleans, counts, sizes (`parse_size`), tag names."""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

import os
from enum import Enum
from typing import TYPE_CHECKING, Any

from thinkfix.engine.inputs.files import UnknownPolicy
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.formats import registry
from thinkfix.formats.repairs import AnthropicMode, ClaudeCodeMode, CodexMode
from thinkfix.normalizer.policy import (
    TAG_NAMES_RULE,
    NativeMode,
    OrphanClose,
    bad_tag,
)

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

ENV_PREFIX = "THINKFIX_"
CONFIG_NAMES = ("thinkfix.toml", "pyproject.toml")


class ConfigError(ValueError):
    """A config file, environment variable or flag value that cannot be used."""


class Settings(NamedTuple):
    """Every scan option and policy knob, after defaults, file, environment and flags.

    A NamedTuple, not a frozen dataclass: every command builds one, and a dataclass of this
    many fields costs ~3 ms of every start-up to define (#26 item 3)."""

    format: str = "auto"
    output_format: str | None = None  # None: text, or github inside GitHub Actions
    output: str | None = None
    report: tuple[str, ...] = ()  # FORMAT=PATH
    statistics: bool = False
    exit_zero: bool = False
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    check: tuple[str, ...] = ()  # session health checks (`scan --check`)
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


FIELDS = frozenset(Settings._fields)
LISTS = {
    "report",
    "select",
    "check",
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
PATHS = {"output", "baseline", "write_baseline"}
#: The settings whose value is a file thinkfix writes: a config file keeps them inside its folder.
WRITES = ("output", "write_baseline", "report")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
INTERNAL = {"config_file"}
#: The settings a flag, a config key or a `THINKFIX_*` variable may set.
SETTING_NAMES = frozenset(FIELDS) - INTERNAL


def setting_key(name: str) -> str:
    return name.strip().replace("-", "_").lower()


def coerce(name: str, value: Any, source: str) -> Any:
    """A value of the field's type, from TOML (typed) or an environment variable (text)."""
    where = f"{source}: {name}"
    if name in LISTS:
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
