"""`thinkfix normalize`: text on stdin, the visible text (or JSON) on stdout."""

from __future__ import annotations

import sys
from typing import Any

import click

from thinkfix.cli.options import echo_json, json_option, policy_options, pop_policy, quiet_option
from thinkfix.engine.report import SCHEMA_VERSION
from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.stream import normalize_in_chunks


@click.command("normalize")
@json_option("{schema_version, visible, thinking, findings}")
@click.option(
    "--native",
    "native_text",
    default=None,
    metavar="TEXT",
    help="Native reasoning already stored with the message (for dedupe).",
)
@click.option(
    "--stream-chunk",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Feed the text through StreamNormalizer in N-character chunks.",
)
@click.option(
    "--start-in-reasoning",
    is_flag=True,
    help="The chat template opened the reasoning block before the text began.",
)
@click.option(
    "--followed-by-tool-call",
    is_flag=True,
    help="A tool call follows the text in its message: evidence for an orphan close.",
)
@click.option(
    "--model",
    default=None,
    metavar="NAME",
    help="The model that wrote the text: a gpt-oss model's may be detokenised Harmony.",
)
@click.option(
    "--holdback",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="With --stream-chunk: withhold visible text for at most N characters.",
)
@quiet_option
@policy_options
def normalize_command(
    as_json: bool,
    native_text: str | None,
    stream_chunk: int | None,
    start_in_reasoning: bool,
    followed_by_tool_call: bool,
    model: str | None,
    holdback: int | None,
    quiet: bool,
    **kwargs: Any,
) -> None:
    """Split text on stdin into visible answer and leaked reasoning."""
    policy = pop_policy(kwargs)
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(f"stdin is not UTF-8: {exc}") from exc
    given: dict[str, Any] = {
        "policy": policy,
        "native_reasoning": native_text,
        "start_in_reasoning": start_in_reasoning,
        "followed_by_tool_call": followed_by_tool_call,
        "model": model,
    }
    if stream_chunk is None:
        result = normalize(text, **given)
        visible, thinking, findings = result.visible, result.thinking, result.findings
    else:
        visible, thinking, findings = normalize_in_chunks(
            text, stream_chunk, holdback=holdback, **given
        )
    if as_json:
        echo_json(
            {
                "schema_version": SCHEMA_VERSION,
                "visible": visible,
                "thinking": thinking,
                "findings": [f.to_dict() for f in findings],
            }
        )
    else:
        sys.stdout.write(visible)
        if visible and not visible.endswith("\n") and sys.stdout.isatty():
            sys.stdout.write("\n")


commands: list[click.Command] = [normalize_command]
