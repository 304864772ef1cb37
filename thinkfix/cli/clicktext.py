"""click's translated texts, given without gettext's lookup where it has no catalog to read
(#26 item 3): the help and version options' texts, and a file argument's type name."""

from __future__ import annotations

import os
from gettext import bindtextdomain, gettext, textdomain

import click


def click_text(message: str) -> str:
    """`message` as click's `_()` gives it: gettext's translation, looked up only where gettext
    has a catalog folder to look in.

    click translates five texts at a scan's start (the help and version options' help, the
    version line, a file argument's type name); each lookup walks the language variables, and
    the first imports `locale`: ~5.5 M instructions of a pre-commit hook's start-up (#26 item
    3). gettext reads a catalog only from the folder bound to its current domain
    (`bindtextdomain`; by default under `sys.base_prefix`): where that folder does not exist,
    no lookup can translate, and the answer is the message itself."""
    return gettext(message) if _catalogs() else message


def _catalogs() -> bool:
    """Whether gettext has a catalog folder for its current domain (see `click_text`)."""
    return os.path.isdir(bindtextdomain(textdomain()))


def _show_help(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    """click's help option's callback."""
    if value and not ctx.resilient_parsing:
        click.echo(ctx.get_help(), color=ctx.color)
        ctx.exit()


def prepare_help_option(command: click.Command, ctx: click.Context) -> None:
    """Gives `command` the help option click's `get_help_option` makes, with its help text
    from `click_text`: click's own asks gettext every time (`help_option`'s default)."""
    if command._help_option is not None or not command.add_help_option:
        return
    names = command.get_help_option_names(ctx)
    if not names:
        return
    storage = getattr(click.core, "_HELP_OPTION_STORAGE_NAME", None)  # click 8.3+
    command._help_option = click.Option(
        [*names, storage] if storage else names,
        is_flag=True,
        expose_value=False,
        is_eager=True,
        help=click_text("Show this message and exit."),
        callback=_show_help,
    )


def file_path() -> click.Path:
    """`click.Path(dir_okay=False)`, its type name ("file") from `click_text`."""
    if _catalogs():
        return click.Path(dir_okay=False)
    path = click.Path.__new__(click.Path)
    vars(path).update(
        exists=False,
        file_okay=True,
        dir_okay=False,
        readable=True,
        writable=False,
        executable=False,
        resolve_path=False,
        allow_dash=False,
        type=None,
        name="file",
    )
    return path
