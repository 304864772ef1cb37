"""Option bundles shared by several commands."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import click

from thinkfix.normalizer.policy import DEFAULT, NativeMode, OrphanClose, Policy

if TYPE_CHECKING:
    from thinkfix.engine.config import Settings

F = TypeVar("F", bound=Callable[..., Any])

POLICY_KEYS = (
    "tags",
    "orphan_close",
    "native_mode",
    "protect_code",
    "trim",
    "harmony",
    "prose_delimiters",
)


def policy_options(func: F) -> F:
    """The normalizer's knobs as flags; unset flags leave the configured value alone."""
    options = [
        click.option(
            "--tags",
            "tags",
            default=None,
            metavar="NAMES",
            help="Comma-separated XML-style tag names (default: " + ",".join(DEFAULT.tags) + ").",
        ),
        click.option(
            "--orphan-close",
            type=click.Choice([m.value for m in OrphanClose]),
            default=None,
            help="What a close tag with no opener does (rule 4).",
        ),
        click.option(
            "--native-mode",
            type=click.Choice([m.value for m in NativeMode]),
            default=None,
            help="How inline reasoning combines with a native reasoning field (rule 9).",
        ),
        click.option(
            "--protect-code/--no-protect-code",
            default=None,
            help="Treat tags inside code spans and fences as text (default: on).",
        ),
        click.option(
            "--trim/--no-trim", default=None, help="Trim whitespace around extracted reasoning."
        ),
        click.option(
            "--harmony/--no-harmony", default=None, help="Recognise gpt-oss Harmony channels."
        ),
        click.option(
            "--prose-delimiters/--no-prose-delimiters",
            default=None,
            help="Recognise prose delimiters such as 'Here is my thought process:'.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def pop_policy(kwargs: dict[str, Any], base: Policy = DEFAULT) -> Policy:
    """Take the policy flags out of a command's kwargs and apply them over `base`."""
    changes: dict[str, Any] = {}
    for key in POLICY_KEYS:
        value = kwargs.pop(key, None)
        if value is None:
            continue
        if key == "tags":
            value = tuple(t.strip() for t in value.split(",") if t.strip())
        changes["native" if key == "native_mode" else key] = value
    return base.with_changes(**changes) if changes else base


#: `--config FILE` and `--isolated`: where the settings come from (see `resolve_settings`).
CONFIG_OPTIONS = (
    click.option(
        "--config",
        "config_file",
        default=None,
        metavar="FILE",
        help="Read settings from FILE instead of looking for pyproject.toml/thinkfix.toml.",
    ),
    click.option("--isolated", is_flag=True, help="Ignore configuration files."),
)


def config_options(func: F) -> F:
    """The `CONFIG_OPTIONS` on a command, in their order."""
    for option in reversed(CONFIG_OPTIONS):
        func = option(func)
    return func


def split_commas(values: Sequence[str]) -> tuple[str, ...]:
    """Repeatable options also take comma-separated lists."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def resolve_settings(
    kwargs: dict[str, Any], *, keep: Sequence[str] = ()
) -> tuple[Settings, dict[str, str]]:
    """The settings for a command, and where each came from: defaults, then the config file
    (`--config FILE`, else found from here upward; none with `--isolated`), then
    `THINKFIX_*`, then the flags the user gave. Every flag named like a setting is taken out
    of `kwargs` (except those in `keep`), so one rule serves every command; an unset flag is
    None or empty. Raises `config.ConfigError` (a `ValueError`)."""
    from thinkfix.engine import config

    config_file, isolated = kwargs.pop("config_file", None), kwargs.pop("isolated", False)
    flags: dict[str, Any] = {}
    for name in [n for n in kwargs if n in config.SETTING_NAMES and n not in keep]:
        value = kwargs.pop(name)
        if isinstance(value, tuple) and name != "report":  # FORMAT=PATH may hold a comma
            value = split_commas(value)
        flags[name] = None if name == "jobs" and value == 0 else value  # 0: all cores
    return config.resolve_with_sources(flags, config=config_file, use_config=not isolated)


class RedactCommand(click.Command):
    """A command whose `--redact` may be given without a value.

    `--redact none` and `--redact=none` take the value; a bare `--redact` followed by
    anything else (a path: `--redact sessions/`) means `--redact=secrets`, so Click
    does not take the path as the value.
    """

    choices: ClassVar[frozenset[str]] = frozenset({"none", "secrets", "all"})

    optional_values: ClassVar[dict[str, str]] = {"--redact": "secrets"}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out, literal = [], False
        for i, arg in enumerate(args):
            following = args[i + 1] if i + 1 < len(args) else None
            if not literal and arg in self.optional_values and following not in self.choices:
                arg = f"{arg}={self.optional_values[arg]}"
            literal = literal or arg == "--"
            out.append(arg)
        return super().parse_args(ctx, out)


# --- one CLI surface: the same words for the same things in every command --------------------

ERROR_PREFIX = "thinkfix: error: "


def echo_error(message: str) -> None:
    """An error line on stderr, spelled the same by every command (`thinkfix: error: ...`)."""
    click.echo(ERROR_PREFIX + message, err=True)


def fail(message: str, code: int = 2) -> None:
    """Print an error and leave the command with `code` (2: the input or usage was wrong)."""
    echo_error(message)
    click.get_current_context().exit(code)


def quiet_option(func: F) -> F:
    """`-q/--quiet`: only results, warnings and errors; no progress, notes or summaries."""
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        help="Print only results, warnings and errors (no progress, notes or summary lines).",
    )(func)


def exit_zero_option(what: str) -> Callable[[F], F]:
    """`--exit-zero/--no-exit-zero` for a command whose exit 1 means `what`."""

    def decorate(func: F) -> F:
        return click.option(
            "--exit-zero/--no-exit-zero",
            default=None,
            help=f"Exit 0 even when {what} (errors still exit 2).",
        )(func)

    return decorate


def format_option(func: F) -> F:
    """`--format NAME`: one declaration for every command that reads sessions."""
    from thinkfix.formats import registry  # the names only; no format module loads

    return click.option(
        "--format",
        "format",
        default=None,
        metavar="NAME",
        type=click.Choice(["auto", *registry.names()]),
        help="Read every file as this format instead of detecting it per file.",
    )(func)
