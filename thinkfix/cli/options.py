"""Option bundles shared by several commands."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import IO, Any, cast

import click

from thinkfix.cli.settings import F, setting, stacked
from thinkfix.normalizer.policy import DEFAULT, NativeMode, OrphanClose, Policy

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
        setting(
            "--tags",
            "tags",
            default=None,
            metavar="NAMES",
            help="Comma-separated XML-style tag names (default: " + ",".join(DEFAULT.tags) + ").",
        ),
        setting(
            "--orphan-close",
            type=click.Choice([m.value for m in OrphanClose]),
            default=None,
            help="What a close tag with no opener does (rule 4).",
        ),
        setting(
            "--native-mode",
            type=click.Choice([m.value for m in NativeMode]),
            default=None,
            help="How inline reasoning combines with a native reasoning field (rule 9).",
        ),
        setting(
            "--protect-code/--no-protect-code",
            default=None,
            help="Treat tags inside code spans and fences as text (default: on).",
        ),
        setting(
            "--trim/--no-trim", default=None, help="Trim whitespace around extracted reasoning."
        ),
        setting("--harmony/--no-harmony", default=None, help="Recognise gpt-oss Harmony channels."),
        setting(
            "--prose-delimiters/--no-prose-delimiters",
            default=None,
            help="Recognise prose delimiters such as 'Here is my thought process:'.",
        ),
    ]
    return stacked(*options)(func)


def pop_policy(kwargs: dict[str, Any], base: Policy = DEFAULT) -> Policy:
    """Take the policy flags out of a command's kwargs and apply them over `base`."""
    changes: dict[str, Any] = {}
    for key in POLICY_KEYS:
        value = kwargs.pop(key, None)
        if value is None:
            continue
        if key == "tags":
            from thinkfix.engine.settings.values import ConfigError, tag_names

            try:
                value = tag_names(tuple(t.strip() for t in value.split(",") if t.strip()), "--tags")
            except ConfigError as exc:
                raise click.UsageError(str(exc)) from None
        changes["native" if key == "native_mode" else key] = value
    return base.with_changes(**changes) if changes else base


# --- one CLI surface: the same words for the same things in every command --------------------


def dask_option(help: str) -> Callable[[F], F]:
    """`--dask ADDRESS`, for the commands that can run on a cluster: an empty address is a
    usage error (it used to run locally without a word)."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise click.BadParameter("give the scheduler's address, e.g. tcp://scheduler:8786")
        return value

    return click.option(
        "--dask", "dask_address", default=None, metavar="ADDRESS", callback=check, help=help
    )


ERROR_PREFIX = "thinkfix: error: "


def echo_error(message: str) -> None:
    """An error line on stderr, spelled the same by every command (`thinkfix: error: ...`):
    one line whatever file name or value it quotes (`visible_name`)."""
    from thinkfix.engine.controls import visible_name

    click.echo(ERROR_PREFIX + visible_name(message), err=True)


class Failure(click.ClickException):
    """A bad setting, input or output path: exit 2, on one `thinkfix: error: ...` line
    (DESIGN.md's contract), without click's usage lines."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        echo_error(self.format_message())


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


def wants_color(setting: bool | None, stream: IO[Any]) -> bool:
    """Colour when `--color` says so; else not under NO_COLOR, yes under FORCE_COLOR
    (no-color.org, force-color.org), else only on a terminal."""
    if setting is not None:
        return setting
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def color_option(func: F) -> F:
    """`--color/--no-color` for a command that prints colour (scan's is a setting, so a
    config file may set it; see `wants_color`)."""
    return click.option(
        "--color/--no-color",
        "color_setting",
        default=None,
        help="Color the output (default: on a terminal, unless NO_COLOR is set).",
    )(func)


def json_option(document: str) -> Callable[[F], F]:
    """`--output-format text|json`, the spelling of scan and diff, for a command whose only
    report is text or a JSON `document` (its keys; see `echo_json`); `--json` stays as a hidden
    alias. The command receives `as_json`."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def command(*args: Any, output_format: str | None, json_alias: bool, **kwargs: Any) -> Any:
            return func(*args, as_json=json_alias or output_format == "json", **kwargs)

        click.option(
            "--json", "json_alias", is_flag=True, hidden=True, help="--output-format json."
        )(command)
        click.option(
            "--output-format",
            type=click.Choice(["text", "json"]),
            default=None,
            help=f"text (the default), or json: {document}.",
        )(command)
        return cast(F, command)

    return decorate


def echo_json(document: Any) -> None:
    """A `--json` document on stdout: indented, UTF-8, one newline at the end."""
    from thinkfix.io import jsontext

    sys.stdout.buffer.write(jsontext.dumps(document, indent=True, newline=True))
    sys.stdout.flush()


def exit_zero_option(
    what: str, name: str = "exit_zero", cls: type[click.Option] = click.Option
) -> Callable[[F], F]:
    """`--exit-zero/--no-exit-zero` for a command whose exit 1 means `what`. A command that
    reads settings names it otherwise (`ignore_changes`): the `exit_zero` setting, from the
    config file or `THINKFIX_EXIT_ZERO`, speaks of scan's findings, not of its changes; scan
    declares it with `cls=SettingOption`."""

    def decorate(func: F) -> F:
        return click.option(
            "--exit-zero/--no-exit-zero",
            name,
            cls=cls,
            default=None,
            help=f"Exit 0 even when {what} (errors still exit 2).",
        )(func)

    return decorate


def format_option(func: F) -> F:
    """`--format NAME`: one declaration for every command that reads sessions."""
    from thinkfix.formats import registry  # the names only; no format module loads

    return setting(
        "--format",
        "format",
        default=None,
        metavar="NAME",
        type=click.Choice(["auto", *registry.names()]),
        help="Read every file as this format instead of detecting it per file.",
    )(func)
