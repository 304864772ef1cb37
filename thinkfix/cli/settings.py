"""Settings on the command line: a flag, else `THINKFIX_<NAME>`, else the config file, else the default; every command reads them the same way (black's pattern, see below)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import click
from click.core import ParameterSource

from thinkfix.cli.clicktext import prepare_help_option

if TYPE_CHECKING:
    from thinkfix.engine.settings.config import Origin
    from thinkfix.engine.settings.values import Settings

# --- settings: flag, else $THINKFIX_<NAME>, else the config file, else the default ----------
#
# black's pattern: an eager `--config` reads the file and makes it the command's
# `ctx.default_map`; each setting is a click parameter whose `envvar` is `THINKFIX_<NAME>`, so
# click's own precedence (command line > environment > default_map > default) picks each
# value and `ctx.get_parameter_source` says where it came from. `engine.config` reads the
# file and gives each value its meaning (`config.settings`).

#: The prefix of the variables that set settings (`engine.config.ENV_PREFIX`).
ENV_PREFIX = "THINKFIX_"
_CONFIG_SEEN = "thinkfix.config_flags"
_CONFIG_FILE = "thinkfix.config_file"
_CONFIG_ERROR = "thinkfix.config_error"

F = TypeVar("F", bound=Callable[..., Any])


def stacked(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several option decorators as one, applied so that they list in the order given."""

    def decorate(func: F) -> F:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return decorate


class _Setting(click.Parameter):
    """What every setting parameter shares: `THINKFIX_<NAME>` as read (an empty value too),
    and a value from the environment or the config file left as it is for `engine.config` to
    read, so its errors name the variable or the file. Only a `SettingsCommand` reads them."""

    def setting_envvar(self) -> str:
        return ENV_PREFIX + (self.name or "").upper()

    def value_from_envvar(self, ctx: click.Context) -> Any:
        if not isinstance(ctx.command, SettingsCommand):
            return None
        return os.environ.get(self.setting_envvar())

    def type_cast_value(self, ctx: click.Context, value: Any) -> Any:
        if ctx.get_parameter_source(self.name or "") is ParameterSource.COMMANDLINE:
            return super().type_cast_value(ctx, value)
        return value


class SettingOption(_Setting, click.Option):
    """A flag that is also a setting (`--jobs`, `THINKFIX_JOBS`, `jobs = 4`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.envvar = self.setting_envvar()


def setting(*decls: str, **attrs: Any) -> Callable[[F], F]:
    """`click.option` for a setting: its flag, `THINKFIX_<NAME>`, and its config key."""
    return click.option(*decls, cls=SettingOption, **attrs)


class ConfigOnly(_Setting):
    """A setting this command has no flag for, still read from the file and the environment
    (`repair` has no `--max-findings`, yet `max-findings = 10` applies to it)."""

    param_type_name = "setting"

    def __init__(self, name: str) -> None:
        super().__init__([name], default=None, multiple=False)
        self.envvar = self.setting_envvar()

    def _parse_decls(
        self, decls: Sequence[str], expose_value: bool
    ) -> tuple[str, list[str], list[str]]:
        return decls[0], [], []

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        """No flag: the value comes from the environment or the config file."""


def _shared_flags() -> dict[str, tuple[tuple[str, ...], dict[str, Any]]]:
    """The flags of the settings that scan, repair and diff share, each declared once: what
    it takes and its help where the words hold for every command."""
    from thinkfix.engine.secrets.redaction import Redaction

    many_globs = {"multiple": True, "metavar": "GLOB"}
    return {
        "select": (("--select",), {"multiple": True, "metavar": "KINDS"}),
        "ignore": (("--ignore",), {"multiple": True, "metavar": "KINDS"}),
        "jobs": (
            ("-j", "--jobs"),
            {
                "type": click.IntRange(min=0),
                "metavar": "N",
                "help": "Worker processes (default, or 0: all cores).",
            },
        ),
        "include": (
            ("--include",),
            {
                **many_globs,
                "help": "Files to read in walked folders (replaces the default *.jsonl, "
                "*.json; compressed and OpenClaw .reset/.deleted copies match too).",
            },
        ),
        "exclude": (
            ("--exclude",),
            {
                **many_globs,
                "help": "Paths to leave out (gitignore-style; relative to the config file's "
                "folder, else the working folder).",
            },
        ),
        "respect_gitignore": (
            ("--respect-gitignore/--no-respect-gitignore",),
            {
                "help": "Skip what .gitignore / .thinkfixignore in walked folders ignore (default: on)."
            },
        ),
        "unknown_format": (
            ("--unknown-format",),
            {
                "type": click.Choice(["auto", "error", "skip"]),
                "help": "A file no format claims: auto (default) is an error when named, a "
                "skip when found in a folder.",
            },
        ),
        "parse_all": (
            ("--parse-all/--no-parse-all",),
            {
                "help": "Parse every line with its format's reader, so a line of a shape the "
                "format refuses is reported too (slower; by default a line that cannot hold "
                "assistant text is only checked to be UTF-8 and one JSON object).",
            },
        ),
        "progress": (
            ("--progress/--no-progress",),
            {"help": "Show a progress bar on stderr (default: on a terminal, outside CI)."},
        ),
        "redact": (("--redact",), {"type": click.Choice([r.value for r in Redaction])}),
        "max_record_size": (("--max-record-size",), {"metavar": "SIZE"}),
        "disable_models": (
            ("--disable-model", "disable_models"),
            {
                **many_globs,
                "help": "Models whose messages are not checked (their prompts use <think> on "
                "purpose).",
            },
        ),
        "disable_paths": (
            ("--disable-path", "disable_paths"),
            {**many_globs, "help": "Files not checked at all."},
        ),
    }


def shared_settings(*names: str, **helps: str) -> Callable[[F], F]:
    """The flags of the named shared settings, in that order; `helps` words a flag's help for
    this command where what it does is the command's own (`select`: leaks to report, or to
    repair)."""
    flags = _shared_flags()
    options = []
    for name in names:
        decls, attrs = flags[name]
        own = {"help": helps[name]} if name in helps else {}
        unset = {} if attrs.get("multiple") else {"default": None}  # None: the flag not given
        options.append(setting(*decls, **attrs, **own, **unset))
    return stacked(*options)


def _read_config(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """`--config`/`--isolated` (black's `read_pyproject_toml`): once both are known, read
    `--config FILE` (or `$THINKFIX_CONFIG`), else the file found from here upward (none with
    `--isolated`), into `ctx.default_map`. A bad file is raised when the command reads its
    settings (`resolve_settings`), where each command says its errors its own way."""
    seen = ctx.meta.setdefault(_CONFIG_SEEN, {})
    seen[param.name] = value
    if len(seen) < 2 or ctx.resilient_parsing:
        return value
    from thinkfix.engine.settings import config
    from thinkfix.engine.settings import values as values_mod

    try:
        path, values = config.config_values(seen["config_file"], isolated=seen["isolated"])
    except values_mod.ConfigError as exc:
        ctx.meta[_CONFIG_ERROR] = exc
        return value
    ctx.meta[_CONFIG_FILE] = path
    # Settings only: click's default map is by parameter name, and a setting may share its
    # name with another command's own flag (scan's `check` list reached `repair --check`).
    settable = {p.name for p in ctx.command.get_params(ctx) if isinstance(p, _Setting)}
    values = {name: v for name, v in values.items() if name in settable}
    ctx.default_map = {**values, **(ctx.default_map or {})}
    return value


#: `--config FILE` and `--isolated`: where the settings come from (see `resolve_settings`).
CONFIG_OPTIONS = (
    click.option(
        "--config",
        "config_file",
        default=None,
        metavar="FILE",
        envvar=ENV_PREFIX + "CONFIG",
        is_eager=True,
        expose_value=False,
        callback=_read_config,
        help="Read settings from FILE instead of looking for pyproject.toml/thinkfix.toml.",
    ),
    click.option(
        "--isolated",
        is_flag=True,
        is_eager=True,
        expose_value=False,
        callback=_read_config,
        help="Ignore configuration files.",
    ),
)


def config_options(func: F) -> F:
    """The `CONFIG_OPTIONS` on a command, in their order."""
    return stacked(*CONFIG_OPTIONS)(func)


def resolve_settings(kwargs: dict[str, Any]) -> tuple[Settings, dict[str, str]]:
    """The settings of the running command, and where each came from (what
    `--show-settings` prints): click has picked each setting's value (flag, else
    `THINKFIX_*`, else the config file, else the default); each is taken out of `kwargs`.
    Raises `values_mod.ConfigError` (a `ValueError`)."""
    from thinkfix.engine.settings import config
    from thinkfix.engine.settings.config import Origin

    ctx = click.get_current_context()
    if _CONFIG_ERROR in ctx.meta:
        raise ctx.meta[_CONFIG_ERROR]
    config_file = ctx.meta.get(_CONFIG_FILE)
    given: dict[str, tuple[Any, config.Origin]] = {}
    sources: dict[str, str] = {}
    for param in ctx.command.get_params(ctx):
        if isinstance(param, _Setting) and param.name:
            origin, sources[param.name] = _source(ctx, param, config_file)
            given[param.name] = (kwargs.pop(param.name, None), origin)
    flags = {name: sources[name] for name, (_, origin) in given.items() if origin is Origin.FLAG}
    return config.settings(given, config_file, flags), sources


def _source(ctx: click.Context, param: _Setting, config_file: str | None) -> tuple[Origin, str]:
    """Where click took the value from, as an `Origin` and as `--show-settings` says it."""
    from thinkfix.engine.settings.config import Origin

    source = ctx.get_parameter_source(param.name or "")
    if source is ParameterSource.COMMANDLINE and isinstance(param, click.Option):
        return Origin.FLAG, next(o for o in param.opts if o.startswith("--"))
    if source is ParameterSource.ENVIRONMENT:
        return Origin.ENV, "$" + param.setting_envvar()
    if source is ParameterSource.DEFAULT_MAP:
        return Origin.FILE, str(config_file)
    return Origin.DEFAULT, "default"


class RedactCommand(click.Command):
    """A command whose `--redact` may be given without a value, and whose short flags reach
    click by their long names.

    `--redact none` and `--redact=none` take the value; a bare `--redact` followed by
    anything else (a path: `--redact sessions/`) means `--redact=secrets`, so Click
    does not take the path as the value.

    Click tries every argument as a long option first, and a short one (`-q`) fails that
    try only after ranking every long option by its likeness (difflib, ~4 M instructions
    of a pre-commit hook's start-up: #26 item 3) for a suggestion nobody reads. A short flag
    on its own is the same option as its long name, so it is given by that name; an
    argument that is an option's value, one after `--`, and short flags run together
    (`-qv`) go to click as typed.
    """

    choices: ClassVar[frozenset[str]] = frozenset({"none", "secrets", "all"})

    optional_values: ClassVar[dict[str, str]] = {"--redact": "secrets"}

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        prepare_help_option(self, ctx)
        return super().get_help_option(ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        long_names, values = self._spellings()
        out, literal, value = [], False, 0
        for i, arg in enumerate(args):
            following = args[i + 1] if i + 1 < len(args) else None
            if value:  # an option's value, whatever it looks like
                value -= 1
            elif not literal:
                if arg in self.optional_values and following not in self.choices:
                    arg = f"{arg}={self.optional_values[arg]}"
                arg = long_names.get(arg, arg)
                value = values.get(arg, 0)
            literal = literal or arg == "--"
            out.append(arg)
        return super().parse_args(ctx, out)

    def _spellings(self) -> tuple[dict[str, str], dict[str, int]]:
        """(short flag -> its long name, option -> how many values follow it), for the
        command's own options (click's help option goes as typed)."""
        long_names: dict[str, str] = {}
        values: dict[str, int] = {}
        for param in self.params:
            if not isinstance(param, click.Option):
                continue
            if not param.is_flag and not param.count:
                values.update(dict.fromkeys([*param.opts, *param.secondary_opts], param.nargs))
                continue
            for names in (param.opts, param.secondary_opts):
                long = next((n for n in names if n.startswith("--")), None)
                if long is not None:
                    long_names.update((n, long) for n in names if len(n) == 2 and n[0] == "-")
        return long_names, values


class SettingsCommand(RedactCommand):
    """A command that reads settings: every setting is one of its parameters (a flag, or
    `ConfigOnly`), so the config file and `THINKFIX_*` reach each through click alike."""

    _complete = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not self._complete:  # on first use: `engine.config` is not imported before
            from thinkfix.engine.settings.values import SETTING_NAMES

            flags = {p.name for p in self.params}
            self.params.extend(ConfigOnly(name) for name in sorted(SETTING_NAMES - flags))
            self._complete = True
        return super().get_params(ctx)
