"""Aider's chat history: `<repo>/.aider.chat.history.md`, Markdown appended as the chat goes.

Aider writes it through `InputOutput.append_chat_history` (Aider-AI/aider `aider/io.py`):
each run opens with `\\n# aider chat started at YYYY-MM-DD HH:MM:SS\\n\\n` (local time, no
zone: `InputOutput.__init__`); a user prompt is `\\n#### ` + each line (`user_input`); tool
output, announcements (`> Model: <name> with <fmt> edit format`) and questions are `> `
lines (`tool_output`, `_tool_message`, `confirm_ask`); a model reply is
`"\\n" + content.strip() + "\\n\\n"` (`ai_output`). Aider reads the file back only with
`--restore-chat-history`, through `utils.split_chat_history_markdown`: `# ` lines are
skipped, `> ` lines are tool messages, `#### ` lines the user's, every other line the
assistant's, and the replies are sent to the model again as they stand.

A streamed reply with native reasoning is written as `<thinking-content-7bbeb8e1...>`
reasoning `</thinking-content-7bbeb8e1...>` (or `</{reasoning_tag}>` when the model's
settings name a tag) followed by the answer (`base_coder.show_send_output_stream`, the tag
is `reasoning_tags.REASONING_TAG`): that section is Aider's own markup, read here as the
message's native reasoning. The `► **THINKING**` / `► **ANSWER**` banners only ever go to
the terminal (`replace_reasoning_tags`). A leak is a reasoning delimiter in the answer.
Aider has no field a repair could move reasoning into that its reader treats as reasoning,
so the span leaves the answer and the repair manifest keeps it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from thinkfix.formats.base import Message, SessionFormat
from thinkfix.formats.locations import env_dir, working_dir
from thinkfix.formats.planner import REFUSED, new_segments
from thinkfix.formats.records import Context, Record, Site, record_limit, too_large
from thinkfix.formats.repairs import (
    DEFAULT_OPTIONS,
    ApplyOptions,
    Placement,
    PlacementKind,
    Repair,
    TextSlot,
)
from thinkfix.formats.turns import Part, PartKind, Role, Turn

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

#: `reasoning_tags.REASONING_TAG`: the tag Aider wraps streamed native reasoning in.
REASONING_TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"
_HEADER = b"# aider chat started at "
_HEADER_LINE = re.compile(rb"(?m)^# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\r?$")
_USER = b"#### "
_TOOL = b"> "
_OPENER = f"<{REASONING_TAG}>".encode()
#: Aider's section: its opener first, closed by its own tag or by the model's
#: `reasoning_tag` (`</think>` and the like), whichever comes first.
_SECTION = re.compile(
    rf"<{REASONING_TAG}>(.*?)(?:</{REASONING_TAG}>|</(?:think|thinking|thought|reasoning|"
    rf"reason|reflection)>|\Z)",
    re.DOTALL,
)
_MODEL = re.compile(r"^> (?:Main model|Model): (\S+) with ", re.MULTILINE)
_CONTENT = ("content",)


def _kind(line: bytes) -> str:
    """Which writer of `aider/io.py` a line comes from, as Aider's own reader tells them."""
    if line.startswith(_HEADER):
        return "header"
    if line.startswith(_USER):
        return "user"
    if line.startswith(_TOOL):
        return "tool"
    return "text"


def _runs(content: bytes) -> Iterator[tuple[str, int, bytes]]:
    """(kind, first line, bytes) of each run of lines one writer wrote: a header alone, a
    reply cut where Aider's thinking section opens a new one (replies written back to back
    with nothing between them are separate replies)."""
    lines = content.splitlines(keepends=True)
    chunk: list[bytes]
    kind, start, chunk, said = "", 1, [], False
    for n, line in enumerate(lines, 1):
        k = _kind(line)
        new_reply = said and k == "text" and kind == "text" and line.startswith(_OPENER)
        if chunk and (k != kind or k == "header" or new_reply):
            yield kind, start, b"".join(chunk)
            chunk, start, said = [], n, False
        kind = k
        chunk.append(line)
        said = said or bool(line.strip())
    if chunk:
        yield kind, start, b"".join(chunk)


def _split_eol(chunk: bytes) -> tuple[bytes, bytes]:
    """A run's bytes as (raw, eol): its last line's terminator apart, as the line formats keep
    it (so a run of one line reads as that line)."""
    for eol in (b"\r\n", b"\n", b"\r"):
        if chunk.endswith(eol):
            return chunk[: -len(eol)], eol
    return chunk, b""


def split_reply(text: str) -> tuple[str, str | None, str, str]:
    """A reply as (prefix, Aider's reasoning or None, answer, suffix): prefix + answer + suffix
    is the text, the prefix holding the leading blank lines and Aider's thinking section."""
    body = text.lstrip()
    lead = text[: len(text) - len(body)]
    native = None
    if body.startswith(f"<{REASONING_TAG}>"):
        m = _SECTION.match(body)
        assert m is not None  # the pattern matches any text after its opener
        native = m.group(1).strip()
        rest = body[m.end() :]
        answer = rest.lstrip()
        lead += body[: len(body) - len(answer)]
        body = answer
    answer = body.rstrip()
    return lead, native, answer, body[len(answer) :]


class Aider(SessionFormat):
    id = "aider"
    appends_lines = True  # io.py InputOutput.append_chat_history opens the history with "a"
    description = (
        "Aider chat history: <repo>/.aider.chat.history.md (Markdown: '# aider chat started "
        "at' per run, '#### ' prompts, '> ' tool output, replies as plain text)"
    )
    detection = (
        "a '# aider chat started at YYYY-MM-DD HH:MM:SS' line in the head (the line Aider "
        "writes first in every run); the file name is not used"
    )
    placement = (
        "the repair manifest only: the span leaves the answer; Aider keeps no reasoning field "
        "it reads back (restoring the chat history replays every reply line to the model)"
    )
    shapes = ()
    locations_source = (
        "aider/args.py get_parser: the chat history file (AIDER_CHAT_HISTORY_FILE) defaults to "
        "<git root>/.aider.chat.history.md, else ./.aider.chat.history.md; the git root is "
        "found from the working folder (main.get_git_root)"
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        name = ".aider.chat.history.md"
        cwd = working_dir(env)
        out = []
        if env.get("AIDER_CHAT_HISTORY_FILE", "").strip():
            chosen = env_dir(env, ("AIDER_CHAT_HISTORY_FILE",), home, name)
            out.append(chosen if chosen.is_absolute() else cwd / chosen)
        for folder in (cwd, *cwd.parents):
            if (folder / ".git").exists():
                out.append(folder / name)
                break
        out.append(cwd / name)
        return out

    def detect(self, head: bytes, path: str = "") -> float:
        m = _HEADER_LINE.search(head)
        if m is None:
            return 0.0
        return 0.95 if not head[: m.start()].strip() else 0.9

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        content = fp.read()
        limit = record_limit()
        when: str | None = None
        model: str | None = None
        for index, (kind, line, chunk) in enumerate(_runs(content)):
            raw, eol = _split_eol(chunk)
            if limit and len(chunk) > limit:
                error = too_large(len(chunk), limit)
                yield Record(index, line, b"", b"", shapes=(), data=None, error=error)
                continue
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                error = f"not UTF-8: invalid byte at offset {exc.start}"
                yield Record(index, line, raw, eol, shapes=(), data=None, error=error)
                continue
            if kind == "header":
                when = text[len(_HEADER) :].strip() or None
                model = None
            elif kind == "tool":
                found = _MODEL.search(text)
                model = found.group(1) if found else model
            data: dict[str, Any] = {"kind": kind, "text": text}
            if kind == "text" and text.strip():
                lead, native, answer, _ = split_reply(text)
                data = {"role": "assistant", "content": answer, "lead": lead}
                if native is not None:
                    data["thinking"] = native
                if when is not None:
                    data["timestamp"] = when
            ctx = Context(model=model)
            yield Record(index, line, raw, eol, ctx=ctx, shapes=(), data=data)

    def messages(self, record: Record) -> Iterator[Message]:
        data = record.data
        if not isinstance(data, dict) or data.get("role") != "assistant":
            return
        yield Message(
            (),
            record.index,
            [TextSlot(_CONTENT, data["content"])],
            data.get("thinking"),
            model=record.ctx.model,
        )

    def sites(self, record: Record) -> Iterator[Site]:
        lead = record.data.get("lead", "") if isinstance(record.data, dict) else ""
        line = record.line + lead.count("\n")
        for msg in self.checked_messages(record, texts=True):
            for slot in msg.texts:
                yield Site(
                    record_index=record.index,
                    line=line,
                    json_path="content",
                    text=slot.text,
                    native_reasoning=msg.native,
                    message_index=msg.index,
                    model=msg.model,
                    path=slot.path,
                )

    def assistant_messages(self, record: Record) -> int:
        return len(self.checked_messages(record))

    def apply(
        self,
        records: list[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[list[Record], list[Placement]]:
        out = list(records)
        placements = []
        for repair in repairs:
            placements.append(self._apply_one(out, repair))
        return out, placements

    def _apply_one(self, out: list[Record], repair: Repair) -> Placement:
        site = repair.site
        skipped = PlacementKind.SKIPPED
        record = out[site.record_index] if 0 <= site.record_index < len(out) else None
        data = record.data if record is not None and record.error is None else None
        if record is None or not isinstance(data, dict) or record.touched:
            return Placement(site, skipped, "not modified", applied=False, reason="stale")
        if data.get("content") != site.text:
            reason = "stale: the text at content is not what was scanned"
            return Placement(site, skipped, "not modified", applied=False, reason=reason)
        if not repair.visible.strip():
            reason = (
                f"{REFUSED} the answer is all reasoning: an empty reply is dropped by Aider's "
                "reader (split_chat_history_markdown), so the message is left as it is"
            )
            return Placement(
                site, PlacementKind.REFUSED, "not modified", applied=False, reason=reason
            )
        lead, _, _, suffix = split_reply((record.raw + record.eol).decode("utf-8"))
        chunk = (lead + repair.visible + suffix).encode("utf-8")
        runs = list(_runs(chunk))
        if len(runs) != 1 or runs[0][0] != "text":
            reason = "not safely editable: the repaired reply would read back as other turns"
            return Placement(site, skipped, "not modified", applied=False, reason=reason)
        new = next(self.read(io.BytesIO(chunk)))
        out[site.record_index] = Record(
            record.index,
            record.line,
            new.raw,
            new.eol,
            ctx=record.ctx,
            shapes=(),
            data=new.data,
            touched=True,
        )
        if not new_segments(repair):
            kind, where = PlacementKind.NONE, "no reasoning to place (only delimiters removed)"
        else:
            kind, where = (
                PlacementKind.MANIFEST,
                "the repair manifest: Aider's history has no reasoning field it reads back",
            )
        return Placement(
            site,
            kind,
            where,
            message_record_index=record.index,
            text_path="content",
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        data = record.data
        if not isinstance(data, dict):
            return
        lines = (record.line, record.line + record.raw.count(b"\n"))
        if data.get("role") == "assistant":
            parts = []
            if data.get("thinking"):
                parts.append(Part(PartKind.THINKING, data["thinking"]))
            parts.append(Part(PartKind.TEXT, data["content"], path=_CONTENT))
            yield Turn(
                Role.ASSISTANT,
                tuple(parts),
                timestamp=data.get("timestamp"),
                model=record.ctx.model,
                lines=lines,
            )
            return
        kind, text = data.get("kind"), data.get("text", "")
        if kind == "user":
            prompt = "\n".join(ln[len("#### ") :].rstrip() for ln in text.splitlines())
            yield Turn(Role.USER, (Part(PartKind.TEXT, prompt),), lines=lines)
        elif kind == "tool":
            output = "\n".join(ln[2:].rstrip() for ln in text.splitlines())
            yield Turn(Role.TOOL, (Part(PartKind.TOOL_RESULT, output),), lines=lines)
        elif kind == "header":
            yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, text.strip()),), lines=lines)
