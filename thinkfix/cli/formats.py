"""`thinkfix formats`: what thinkfix can read, how it recognises it, where reasoning goes."""

from __future__ import annotations

import shutil
import textwrap

import click

from thinkfix.cli.options import echo_json, json_option, quiet_option
from thinkfix.engine.report import SCHEMA_VERSION
from thinkfix.formats.registry import FORMATS


def _wrapped(label: str, text: str, width: int) -> str:
    return textwrap.fill(
        text,
        width=width,
        initial_indent=f"  {label:<11}",
        subsequent_indent=" " * 13,
        break_on_hyphens=False,  # `--claude-code-mode` split at a hyphen reads as `--claude`
        break_long_words=False,
    )


@click.command("formats")
@json_option("{schema_version, formats: [...]}")
@quiet_option
def formats_command(as_json: bool, quiet: bool) -> None:
    """List the supported session formats, how each is detected, and where repairs put
    the extracted reasoning."""
    if as_json:
        payload = {
            "schema_version": SCHEMA_VERSION,
            "formats": [
                {
                    "id": f.id,
                    "description": f.description,
                    "detection": f.detection,
                    "placement": f.placement,
                    "locations": f.locations_source,
                }
                for f in FORMATS.values()
            ],
        }
        echo_json(payload)
        return
    width = max(60, min(100, shutil.get_terminal_size((100, 24)).columns))
    blocks = []
    for f in FORMATS.values():
        blocks.append(
            "\n".join(
                [
                    click.style(f.id, bold=True) + f"  {f.description}",
                    _wrapped("detected:", f.detection, width),
                    _wrapped("reasoning:", f.placement, width),
                    *(
                        [_wrapped("sessions:", f.locations_source, width)]
                        if f.locations_source
                        else []
                    ),
                ]
            )
        )
    click.echo("\n\n".join(blocks))


commands: list[click.Command] = [formats_command]
