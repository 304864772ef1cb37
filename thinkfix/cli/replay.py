"""`thinkfix replay CAPTURE`: what a captured stream would have shown, and what it should have."""

from __future__ import annotations

import click

from thinkfix.cli.options import echo_json, exit_zero_option, fail, json_option, quiet_option
from thinkfix.cli.settings import RedactCommand
from thinkfix.engine.commands import replay as replay_run
from thinkfix.engine.report import ExitCode
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.engine.secrets.rules import mask_secrets
from thinkfix.providers.capture import Capture, CaptureError
from thinkfix.providers.message import AssembledMessage, Block, BlockType
from thinkfix.providers.registry import ADAPTERS, Resolution

_SNIPPET = 60


def _block_heading(block: Block) -> str:
    if block.type is BlockType.THINKING:
        notes = [block.source.value if block.source else "native"]
        if block.signature is not None:
            notes.append(f"signature {len(block.signature)} chars")
        return f"[thinking, {', '.join(notes)}]"
    if block.type is BlockType.TOOL_CALL:
        return f"[tool_call {block.name or '?'} id={block.id or '?'}]"
    if block.type is BlockType.REDACTED_THINKING:
        return f"[redacted_thinking, {len(block.text)} chars]"
    note = f", signature {len(block.signature)} chars" if block.signature is not None else ""
    return f"[text{note}]"


def _snippet(text: str) -> str:
    short = text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."
    return repr(short)


def render_text(
    path: str, capture: Capture, resolution: Resolution, message: AssembledMessage
) -> str:
    """The human report: where the stream came from, the normalized message, the leaks."""
    lines = [
        f"capture   {path} ({capture.encoding.value}, {len(capture.events)} events)",
        f"provider  {resolution.adapter} (rule: {resolution.rule})",
        f"model     {message.model or '-'}",
        f"stop      {message.stop_reason or '-'}",
        "",
        "normalized message:",
    ]
    for block in message.blocks:
        lines.append(_block_heading(block))
        if block.type is not BlockType.REDACTED_THINKING:
            lines.append(block.text)
    if not message.blocks:
        lines.append("(no blocks)")
    lines.append("")
    if message.leaks:
        lines.append(f"leaks in the raw visible text: {len(message.leaks)}")
        for leak in message.leaks:
            lines.append(
                f"  {leak.kind.value} {leak.tag} (run {leak.run}, {leak.start}-{leak.end}): "
                f"{_snippet(leak.text)}"
            )
    else:
        lines.append("leaks in the raw visible text: none")
    lines.append(
        "result: LEAKED (the raw stream would have shown reasoning as answer text)"
        if message.leaked
        else "result: clean"
    )
    return "\n".join(lines) + "\n"


@click.command("replay", cls=RedactCommand)
@click.argument("capture", type=click.Path(dir_okay=False, allow_dash=False))
@click.option(
    "--provider",
    metavar="NAME",
    help="Use this adapter or host instead of detecting it from the events. Adapters: "
    + ", ".join(ADAPTERS)
    + "; hosts: openrouter, together, vertex, ...",
)
@json_option("{schema_version, capture, adapter, leaked, message}")
@click.option(
    "--redact",
    default=None,
    type=click.Choice([r.value for r in Redaction]),
    help="secrets (the default): mask likely credentials in the streamed text; "
    "none: show it as received.",
)
@exit_zero_option("the raw stream leaked reasoning")
@quiet_option
def replay_command(
    capture: str,
    provider: str | None,
    as_json: bool,
    exit_zero: bool | None,
    quiet: bool,
    redact: str | None = None,
) -> None:
    """Replay a captured provider stream (SSE or NDJSON) through the adapters and the
    streaming normalizer; print the normalized message and what leaked.

    Exit 1 if the raw stream would have shown reasoning as answer text, 0 if clean,
    2 if the capture cannot be read or no adapter knows it.
    """
    try:
        replay = replay_run.run(capture, provider)
    except CaptureError as exc:
        fail(str(exc))
        return
    message = replay.message
    if message.error is not None:
        click.echo(f"thinkfix replay: the stream ended with an error: {message.error}", err=True)
    mode = Redaction.from_flag(redact)
    if as_json:
        echo_json(replay.document(mode))
    else:
        # The text report is prose around the stream's text: secrets are masked in place.
        text = render_text(capture, replay.capture, replay.resolution, message)
        click.echo(text if mode is Redaction.NONE else mask_secrets(text), nl=False)
    leaked = message.leaked and not exit_zero
    click.get_current_context().exit(ExitCode.FINDINGS if leaked else ExitCode.CLEAN)


commands: list[click.Command] = [replay_command]
