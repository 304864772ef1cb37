"""Shapes several formats share: content-block lists, tool arguments and outputs, times.

Anthropic-style block lists appear in Claude Code, Anthropic logs, claw-code and pi
(with different key names for the same ideas), so they are read once, here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

import orjson

from thinkfix.formats.common import as_str
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.io import jsontext

IMAGE = "[image]"


def iso(value: Any) -> str | None:
    """A timestamp as ISO 8601: strings as stored, epoch milliseconds converted (UTC)."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        try:
            moment = datetime.fromtimestamp(value / 1000, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return None


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _value(value: Any) -> str:
    try:
        return jsontext.dumps(value).decode()
    except TypeError:
        return repr(value)


def args_text(value: Any) -> str:
    """Tool-call arguments for one line: `key=value, ...` for an object, else as stored.

    Several formats keep arguments as a JSON string (Codex, OpenAI chat, claw-code); it
    is shown as its object when it parses, and verbatim when it does not (claw-code's
    `{}{...}` bug), since a viewer must not hide what was stored.
    """
    if isinstance(value, str):
        parsed = _loads(value) if value.lstrip().startswith("{") else None
        return args_text(parsed) if isinstance(parsed, dict) else value
    if isinstance(value, dict):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items())
    if value is None:
        return ""
    return _value(value)


def output_text(value: Any) -> str:
    """A tool result's output as text, from a string, a block list or an object.

    Codex wraps shell output as a JSON string `{"output": ..., "metadata": ...}`; only the
    output is worth reading.
    """
    if isinstance(value, str):
        if value.startswith('{"output"'):
            parsed = _loads(value)
            if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
                return str(parsed["output"])
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (output_text(v) for v in value) if t)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "data"):
            if key in value and value[key] is not None:
                if key == "data" and value.get("type") in ("image", "input_image"):
                    break
                return output_text(value[key])
        if value.get("type") in ("image", "input_image") or "image_url" in value:
            return IMAGE
        return ""
    return "" if value is None else _value(value)


def text_parts(content: Any, base: Path, images: Collection[str]) -> list[Part]:
    """An OpenAI-style message `content` as text parts: a string whole, else each item's
    `text` (with its path, so `--normalized` finds the site) and each image item (of the
    types `images`) as a marker."""
    if isinstance(content, str):
        return [Part(PartKind.TEXT, content, path=base + ("content",))]
    parts = []
    for i, c in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("text"), str):
            parts.append(Part(PartKind.TEXT, c["text"], path=base + ("content", i, "text")))
        elif c.get("type") in images:
            parts.append(Part(PartKind.TEXT, IMAGE))
    return parts


def tool_call(args: Any, name: Any, call_id: Any = None) -> Part:
    """A tool call as `show` prints it: the arguments as stored, the tool's name ("" when the
    record has none), and the id that joins it to its result."""
    return Part(
        PartKind.TOOL_CALL, args_text(args), name=as_str(name) or "", call_id=as_str(call_id)
    )


def tool_result(output: Any, name: Any = None, call_id: Any = None, *, error: bool = False) -> Part:
    """A tool result as `show` prints it: the output as text, the tool's name ("" when the
    record has none), the id of its call, and whether it reports a failure."""
    return Part(
        PartKind.TOOL_RESULT,
        output_text(output),
        name=as_str(name) or "",
        call_id=as_str(call_id),
        error=error,
    )


def exit_failed(output: Any) -> bool:
    """Codex shell output whose metadata reports a non-zero exit code."""
    if not (isinstance(output, str) and output.startswith('{"output"')):
        return False
    parsed = _loads(output)
    meta = parsed.get("metadata") if isinstance(parsed, dict) else None
    code = meta.get("exit_code") if isinstance(meta, dict) else None
    return isinstance(code, int) and code != 0


#: Decides whether a thinking block carries a real signature (pi: depends on the api).
Signed = Callable[[dict[str, Any]], bool]


def _signature(block: dict[str, Any]) -> bool:
    return bool(block.get("signature"))


def block_parts(blocks: Any, base: Path, *, signed: Signed = _signature) -> list[Part]:
    """Parts of an Anthropic-style block list (and its pi / claw-code spellings).

    Unknown block types are skipped: new runtime versions add them all the time.
    """
    if isinstance(blocks, str):
        return [Part(PartKind.TEXT, blocks, path=base)]
    if not isinstance(blocks, list):
        return []
    parts: list[Part] = []
    for i, block in enumerate(blocks):
        if isinstance(block, dict):
            part = _block_part(block, base + (i,), signed)
            if part is not None:
                parts.append(part)
    return parts


def _block_part(block: dict[str, Any], path: Path, signed: Signed) -> Part | None:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return Part(PartKind.TEXT, block["text"], path=path + ("text",))
    if kind == "thinking":
        text = as_str(block.get("thinking"))
        if text is None:
            text = as_str(block.get("text")) or ""  # claw-code's first thinking blocks
        return Part(
            PartKind.THINKING, text, signed=signed(block), redacted=bool(block.get("redacted"))
        )
    if kind == "redacted_thinking":
        return Part(PartKind.THINKING, "", signed=True, redacted=True)
    if kind in ("tool_use", "server_tool_use", "toolCall"):
        args = block["input"] if "input" in block else block.get("arguments")
        return tool_call(args, block.get("name"), block.get("id"))
    if kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_tool_result")):
        output = block["content"] if "content" in block else block.get("output")
        return tool_result(
            output,
            block.get("tool_name"),
            block.get("tool_use_id"),
            error=bool(block.get("is_error")),
        )
    if kind == "image":
        return Part(PartKind.TEXT, IMAGE)
    return None


def split_results(role: Role, parts: Iterable[Part], **fields: Any) -> Iterator[Turn]:
    """A message's own turn, then a TOOL turn for the tool results it carries.

    Claude Code and Anthropic put results on user messages, claw-code on tool
    messages; either way a reader wants them under the call, not as the user speaking.
    """
    results = [p for p in parts if p.kind is PartKind.TOOL_RESULT]
    others = [p for p in parts if p.kind is not PartKind.TOOL_RESULT]
    if others or not results:
        yield Turn(role, tuple(others), **fields)
    if results:
        yield Turn(
            Role.TOOL,
            tuple(results),
            timestamp=fields.get("timestamp"),
            where=fields.get("where", ""),
        )
