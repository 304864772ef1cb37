"""`thinkfix diff`: show an auditor every message a repair would change (before, after, reasoning)."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import click

from thinkfix.cli.options import (
    color_option,
    echo_error,
    exit_zero_option,
    quiet_option,
    wants_color,
)
from thinkfix.cli.repairing import (
    engine_options,
    fix_option,
    run,
    selection_options,
    write_report,
)
from thinkfix.cli.settings import SettingsCommand
from thinkfix.cli.skipped import echo_skipped
from thinkfix.engine.commands import repair as repair_run
from thinkfix.engine.controls import visible_name
from thinkfix.engine.health.fixes.model import Fix
from thinkfix.engine.repair.model import WriteMode
from thinkfix.reporters.base import RenderOptions
from thinkfix.reporters.diff import get_renderer
from thinkfix.reporters.diff.base import DiffFormat


@click.command("diff", cls=SettingsCommand)
@color_option
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--output-format",
    "diff_format",
    default=DiffFormat.TEXT.value,
    type=click.Choice([f.value for f in DiffFormat]),
    show_default=True,
    help="text (terminal), markdown, html (one self-contained file) or json.",
)
@click.option(
    "-o",
    "--output",
    "report_path",
    default=None,
    metavar="FILE",
    help="Write the report to FILE instead of stdout.",
)
@click.option(
    "--max-cards",
    default=None,
    type=click.IntRange(min=0),
    metavar="N",
    help="html: show at most N message cards (default 500); the page counts the "
    "rest, and the json report lists them all.",
)
@click.option(
    "--follow-links",
    is_flag=True,
    help="Also read the targets of symlinks found in a folder that lie outside the "
    "paths named (by default each is an error).",
)
@fix_option
@exit_zero_option("something would change", "ignore_changes")
@quiet_option
@selection_options
def diff_command(
    paths: tuple[str, ...],
    diff_format: str,
    report_path: str | None,
    max_cards: int | None,
    fix: frozenset[Fix],
    ignore_changes: bool | None,
    quiet: bool,
    color_setting: bool | None,
    follow_links: bool,
    **kwargs: Any,
) -> None:
    """Show, for an auditor, every message a repair would change: before, after, reasoning."""
    options, redaction, progress = engine_options(WriteMode.DRY_RUN, kwargs, fixes=fix)
    if follow_links:  # a flag only: a checkout's config may not turn the refusal off
        options = replace(options, follow_links=True)
    result = run(paths, options, progress, quiet)
    report = repair_run.diff_report(result, redaction)
    fmt = DiffFormat(diff_format)
    if report_path is not None:
        write_report(report_path, report, fmt, RenderOptions(max_findings=max_cards))
        if not quiet:
            click.echo(f"wrote {visible_name(report_path)}", err=True)
    else:
        renderer = get_renderer(fmt)
        color = fmt is DiffFormat.TEXT and wants_color(color_setting, sys.stdout)
        sys.stdout.buffer.write(
            renderer.render_bytes(report, RenderOptions(color=color, max_findings=max_cards))
        )
        sys.stdout.flush()
    for e in report.errors:
        echo_error(f"{e.path}{f':{e.line}' if e.line else ''}: {e.message}")
    if not quiet:
        echo_skipped(result.skipped)
    sys.exit(int(report.exit_code(exit_zero=bool(ignore_changes))))


commands: list[click.Command] = [diff_command]
