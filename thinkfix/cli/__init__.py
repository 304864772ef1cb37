"""The thin command layer: parse flags, call the library, pick a reporter, exit."""

from __future__ import annotations

import gc

# click's import makes ~18 thousand objects that live as long as the process; the cyclic
# collector walked them each time they aged a generation (~9 M instructions of a small scan,
# #26 item 3). They are imported with it off; then, unless the importer froze objects of its
# own, `freeze` and `unfreeze` move every object alive to the oldest generation unwalked
# (what a collection of the younger ones would do after walking them), and the collector is
# back on as the importer had it: its thresholds, nothing frozen, old objects still collected.
_COLLECTING = gc.isenabled()
gc.disable()
try:
    import importlib
    import os
    import sys
    from collections.abc import Iterator, MutableMapping
    from contextlib import contextmanager
    from gettext import gettext
    from typing import IO, Any

    import click

    from thinkfix._version import __version__
    from thinkfix.cli.clicktext import click_text, prepare_help_option
finally:
    if _COLLECTING:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        gc.enable()

#: Command name -> the `thinkfix.cli` module defining it. Named, not imported: a command's
#: module is imported only when that command runs (click's lazy-group pattern), so
#: `thinkfix scan` in a pre-commit hook does not pay for repair's diff renderers, replay's
#: providers or show's rich transcript views.
LAZY_COMMANDS: dict[str, str] = {
    "scan": "scan",
    "repair": "repair",
    "undo": "undo",
    "diff": "diff",
    "normalize": "normalize",
    "replay": "replay",
    "show": "show",
    "formats": "formats",
    "where": "where",
    "watch": "watch",
}

#: Command name -> the first paragraph of its help: what `thinkfix --help` lists, so the
#: listing imports no command module (and with it no engine: #26 item 3).
#: tests/cli/test_startup.py holds each to the command's own short help at every width.
SUMMARIES: dict[str, str] = {
    "scan": "Find reasoning that leaked into the visible text of stored agent sessions.",
    "repair": "Repair leaked reasoning in session files: into --out DIR, or --in-place.",
    "undo": "Restore every file a repair wrote, byte for byte, from its MANIFEST.",
    "diff": "Show, for an auditor, every message a repair would change: before, after, reasoning.",
    "normalize": "Split text on stdin into visible answer and leaked reasoning.",
    "replay": "Replay a captured provider stream (SSE or NDJSON) through the adapters and the "
    "streaming normalizer; print the normalized message and what leaked.",
    "show": "Show a session file as a transcript: turns, tool calls, and thinking.",
    "formats": "List the supported session formats, how each is detected, and where repairs "
    "put the extracted reasoning.",
    "where": "List the session folders found on this machine (what `scan --discover` reads), "
    "honouring each runtime's override variable (CLAUDE_CONFIG_DIR, CODEX_HOME, ...), "
    "spelled for the OS it runs on (platform: linux, macos or windows, as platformdirs tells).",
    "watch": "Follow session files as agents write them: print each new leak as it lands, "
    "and export counters (thinkfix_assistant_messages_total, "
    "thinkfix_leaking_messages_total, thinkfix_findings_total{kind}, by format and model) "
    "over HTTP and/or to a text file.",
}


def _show_version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    """click's `version_option` callback, for thinkfix's name and version."""
    if not value or ctx.resilient_parsing:
        return
    message = click_text("%(prog)s, version %(version)s")
    values = {"prog": "thinkfix", "package": "thinkfix", "version": __version__}
    click.echo(message % values, color=ctx.color)
    ctx.exit()


@contextmanager
def _uncollected(program: bool) -> Iterator[None]:
    """A program imports its command's module with the cyclic garbage collector off, then
    freezes what is alive and turns the collector back on for the work.

    Importing a command (the engine's ~70 modules) makes thousands of objects that live as
    long as the process and frees almost none, yet the collector walks them again each time
    they age a generation: ~8% of a small scan's start-up (#26 item 3). Frozen, they are never
    walked again. Only a program does this, not a library caller (click's test runner calls
    `main.main`): `gc.freeze` is process-wide."""
    if not program or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


class _LazyCommands(MutableMapping[str, click.Command]):
    """The group's `commands` mapping, importing a command's module on first lookup.

    Listing names (`--help`, `sorted(main.commands)`) imports nothing; `main.commands[name]`
    and `.values()` import what they return, so code that treats it as click's plain dict
    keeps working."""

    def __init__(self, lazy: dict[str, str]) -> None:
        self._lazy = dict(lazy)
        self._loaded: dict[str, click.Command] = {}
        self.program = False  # set where the program starts (`_Main.__call__`): `_uncollected`

    def _load(self, name: str) -> click.Command:
        with _uncollected(self.program):
            module = importlib.import_module(f"thinkfix.cli.{self._lazy[name]}")
        for command in module.commands:
            if command.name in self._lazy:
                self._loaded.setdefault(command.name, command)
        return self._loaded[name]

    def __getitem__(self, name: str) -> click.Command:
        if name in self._loaded:
            return self._loaded[name]
        if name in self._lazy:
            return self._load(name)
        raise KeyError(name)

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._lazy.pop(name, None)
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._lazy, *self._loaded]))

    def __len__(self) -> int:
        return len(set(self._lazy) | set(self._loaded))

    def listed(self, name: str) -> click.Command | None:
        """The command as `--help` lists it: the loaded one, or a stand-in carrying its
        summary (a command not loaded yet is never hidden nor deprecated)."""
        if name in self._loaded:
            return self._loaded[name]
        if name in SUMMARIES:
            return click.Command(name, help=SUMMARIES[name])
        return None


def _carry_lone_surrogates() -> None:
    """Text written to the terminal shows a lone surrogate (valid in JSON session text) as its
    `\\udXXX` escape instead of crashing on it; bytes written by reporters are already safe."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream that cannot change its error handler
                pass


class _Prefixed(click.ClickException):
    """Any click error, shown as `thinkfix: error: ...` like the commands' own errors, so a
    wrapper script or a problem matcher needs one pattern for every failure."""

    def __init__(self, original: click.ClickException) -> None:
        super().__init__(original.format_message())
        self.original = original
        # click types exit_code as a class variable; each instance keeps its original's.
        setattr(self, "exit_code", original.exit_code)  # noqa: B010

    def show(self, file: IO[Any] | None = None) -> None:
        ctx = getattr(self.original, "ctx", None)
        if type(self.original).__name__ == "NoArgsIsHelpError":  # click 8.2+: bare `thinkfix`
            click.echo(self.original.format_message(), err=True)  # the help, once; exit 2
            return
        from thinkfix.cli.options import echo_error

        if isinstance(self.original, click.UsageError) and ctx is not None:
            # The usage line and the help hint, as click gives them; then one error line.
            click.echo(ctx.get_usage(), err=True)
            click.echo(f"Try '{ctx.command_path} --help' for help.\n", err=True)
        echo_error(self.format_message())


class _Main(click.Group):
    """The command group: one error spelling for every command, and a crash exits 2 (an
    error), never 1 (which means findings).

    Exit 1 is the CI signal for "leaks found", so a bug must not be mistaken for one,
    even under `--exit-zero`: the traceback goes to stderr and the exit code is 2.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The program's start (the `thinkfix` script, `python -m thinkfix`); a library
        caller and click's test runner call `main.main` instead."""
        if isinstance(self.commands, _LazyCommands):
            self.commands.program = True
        if sys.stdin is None:  # started with it closed (`<&-`, a service manager): empty
            sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - for the process
        return super().__call__(*args, **kwargs)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        prepare_help_option(self, ctx)
        return super().get_help_option(ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.ClickException as exc:
            raise _Prefixed(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        _carry_lone_surrogates()
        try:
            return super().invoke(ctx)
        except _Prefixed:
            raise
        except click.exceptions.ClickException as exc:
            raise _Prefixed(exc) from None
        except (click.exceptions.Exit, click.exceptions.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - the contract's last line of defence
            if _remote_unavailable(exc):  # s3:// without s3fs: what to install, exit 2
                raise _Prefixed(click.UsageError(str(exc))) from None
            import traceback  # only on a crash: a start-up cost every run would pay

            from thinkfix.cli.options import echo_error
            from thinkfix.engine.report import ExitCode

            traceback.print_exc(file=sys.stderr)
            echo_error(
                f"internal error: {type(exc).__name__}: {exc} (please report it with "
                "the traceback above)"
            )
            ctx.exit(int(ExitCode.ERROR))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, from the summaries of commands not loaded yet (see SUMMARIES)."""
        commands = self.commands
        if not isinstance(commands, _LazyCommands):
            super().format_commands(ctx, formatter)
            return
        listed = [(name, commands.listed(name)) for name in self.list_commands(ctx)]
        rows = [(name, cmd) for name, cmd in listed if cmd is not None and not cmd.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section(gettext("Commands")):  # click's own spelling
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])


def _remote_unavailable(exc: Exception) -> bool:
    """A URL without its fsspec backend; only `thinkfix.io.remote` raises it, so a run that
    never imported that module cannot have one (and `--version` does not import it)."""
    remote = sys.modules.get("thinkfix.io.remote")
    return remote is not None and isinstance(exc, remote.RemoteUnavailable)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(  # click's `version_option`, its texts from `click_text`
    "-V",
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    help=click_text("Show the version and exit."),
    callback=_show_version,
)
def main() -> None:
    """Find, count and repair reasoning that leaked into stored LLM agent sessions."""


main.commands = _LazyCommands(LAZY_COMMANDS)
