"""Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl`.

One line per stored entry; assistant lines hold one API message's blocks (often
one block per line, several lines sharing `message.id`). Claude Code replays
the file to the API on resume, and an unsigned thinking block there is a hard
400 that bricks the session, so by default the reasoning leaves the text and
lives only in the repair manifest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats import linestructs
from thinkfix.formats.base import Message
from thinkfix.formats.common import (
    TOOL_CALL_BLOCKS,
    FormatBase,
    as_str,
    block_reasoning,
    content_slots,
    has_tool_call,
    place_elsewhere,
    place_nothing,
)
from thinkfix.formats.detection import extension, sample, share
from thinkfix.formats.locations import env_dir
from thinkfix.formats.quick import (
    KEY,
    PLAIN,
    Canonical,
    iso_stamp,
    model_name,
    nested_message_model,
    one_object,
    tail,
)
from thinkfix.formats.records import Context, Record
from thinkfix.formats.repairs import ClaudeCodeMode, PlacementKind

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

    # annotations only: a scan loads no repair planner, JSON edit or turn model (#26 item 3)
    from thinkfix.formats.jsonedit import SetKey
    from thinkfix.formats.planner import Draft, Plan
    from thinkfix.formats.turns import Turn

_ENTRY_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "attachment",
    "custom-title",
    "ai-title",
    "last-prompt",
    "permission-mode",
    "worktree-state",
    "pr-link",
    "mode",
    "agent-name",
    "tool_use",
    "tool_result",
}
_LINK_KEYS = ("uuid", "parentUuid", "sessionId", "leafUuid", "isSidechain")
# Every entry test needs one of those keys. A head whose bytes spell none of them, and hold no
# escape that decodes to a letter (`\u0041`..`\u007a`, the only way to spell a key's letter
# otherwise), has no entry: a pi or Codex head is answered without parsing its 200 lines.
_LINK_BYTES = tuple(f'"{k}"'.encode() for k in _LINK_KEYS)
_LETTER_ESCAPE = re.compile(rb"\\u00[4-7]")
# A first line too long to read whole: Claude Code writes the links and the entry's
# type before its `message`, so they sit at the start of even a 100 MB line.
_PARTIAL_WINDOW = 16384
_PARTIAL_ENTRY = re.compile(
    rb'^\s*\{(?=[^\n]*?"(?:parentUuid|isSidechain|sessionId)"\s*:)'
    rb'(?=[^\n]*?"type"\s*:\s*"(?:user|assistant|system)")[^\n]*?"message"\s*:\s*\{'
)


def _looks_like_entry(o: dict[str, Any]) -> bool:
    return as_str(o.get("type")) in _ENTRY_TYPES and any(k in o for k in _LINK_KEYS)


def _may_hold_entries(head: bytes) -> bool:
    """Could a record of this head carry a link key (`_LINK_BYTES`, `_LETTER_ESCAPE`)?"""
    return any(k in head for k in _LINK_BYTES) or _LETTER_ESCAPE.search(head) is not None


def _conversation(o: dict[str, Any]) -> bool:
    """A conversation entry: its API message, never a Gemini `Content` (`parts`), which is
    what Qwen Code writes inside the same envelope."""
    return (
        o.get("type") in ("user", "assistant")
        and isinstance(o.get("message"), dict)
        and "parts" not in o["message"]
        and ("uuid" in o or "sessionId" in o)
    )


def _assistant(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    """The API message of an assistant entry, else None."""
    if entry is None or entry.get("type") != "assistant":
        return None
    msg = entry.get("message")
    if not isinstance(msg, dict) or msg.get("role", "assistant") != "assistant":
        return None
    return msg


def _native(msg: dict[str, Any], earlier: str | None) -> str | None:
    return block_reasoning(msg.get("content")) or earlier


def _head(name: bytes) -> bytes:
    """The message object's head as Claude Code writes it: `id` and `type` members, its role
    (assistant) and its model, in either order; the model in group `model_<name>…`."""
    other = rb'(?:"(?:id|type)":' + PLAIN + b",)*"
    return (
        rb"\{"
        + other
        + rb'(?:"role":"assistant",'
        + other
        + rb'"model":'
        + model_name(b"model_" + name + b"1")
        + rb'|"model":'
        + model_name(b"model_" + name + b"2")
        + b","
        + other
        + rb'"role":"assistant")'
    )


class ClaudeCode(FormatBase):
    id = "claude-code"
    description = "Claude Code transcripts (~/.claude/projects/<project>/<session>.jsonl)"
    detection = (
        "JSONL entries with type user/assistant/system/summary/... carrying uuid, "
        "parentUuid or sessionId, and a message object on conversation lines"
    )
    placement = (
        "resumable (default): the text is cleaned and the reasoning kept in the repair "
        "manifest only, since an unsigned thinking block breaks resume; archive: an "
        "unsigned thinking block before the text block; annotate: a top-level "
        "`thinkfix` key on the same line (--claude-code-mode)"
    )
    jsonl_only = True
    # One API message is written as several lines sharing `message.id` (#21 item 3).
    spread = True
    # ... so its tool_use may follow its text on the next line: rule 4's evidence
    calls_later = True
    call_markers = tuple(f'"{t}"'.encode() for t in TOOL_CALL_BLOCKS)
    # Older builds write each block on its own line: a thinking block's text is the native
    # reasoning of the text blocks that follow with the same message.id.
    context_markers = (b'"thinking"',)
    # An assistant line as Claude Code writes it (the scan's block counter): the entry's plain
    # members, then its type, uuid and timestamp before the message (model first), or the
    # message first and the entry's type, uuid and timestamp last (ccviewer's samples).
    canonical = Canonical(
        rb'\n\{"parentUuid":' + PLAIN + rb"(?:," + KEY + b":" + PLAIN + rb")*,(?:"
        rb'"type":"assistant","uuid":'
        + PLAIN
        + b","
        + iso_stamp(b"date_a")
        + rb',"message":'
        + _head(b"a")
        + b","
        + tail(b"tail_a", rb"\}")
        + rb'|"message":'
        + _head(b"b")
        + b","
        + tail(b"tail_b", b",")
        + rb'"type":"assistant","uuid":'
        + PLAIN
        + b","
        + iso_stamp(b"date_b")
        + rb"\})(?=\n)",
        ("message", True),
        linestructs.CLAUDE_CODE,
    )

    locations_source = (
        "$CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects: Claude Code docs, "
        'code.claude.com/docs/en/claude-directory ("If you set CLAUDE_CONFIG_DIR, every '
        '~/.claude path on this page lives under that directory instead"); docs/formats.md'
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [env_dir(env, ("CLAUDE_CONFIG_DIR",), home, ".claude") / "projects"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        if s.partial and not s.pretty:
            return 0.7 if _PARTIAL_ENTRY.match(head[:_PARTIAL_WINDOW]) else 0.0
        if s.pretty or not _may_hold_entries(head):
            return 0.0
        objects = s.objects
        if not objects:
            return 0.0
        if any(_conversation(o) for o in objects):
            return 0.95
        if any(isinstance(o.get("message"), dict) and "parts" in o["message"] for o in objects):
            return 0.0  # Gemini `Content`s in Claude Code's envelope: Qwen Code's records
        entries = share(objects, _looks_like_entry)
        if entries >= 0.5:
            return 0.8 if extension(path) in ("", ".jsonl") else 0.7
        return 0.0

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        msg = _assistant(record.obj)
        thinking = block_reasoning(msg.get("content")) if msg is not None else None
        if msg is None or thinking is None:
            return ctx, ctx
        new = ctx._replace(extra={"message_id": msg.get("id"), "thinking": thinking})
        return new, new

    def quick_messages(self, raw: bytes, ctx: Context) -> tuple[str | None, ...] | None:
        """An assistant entry as Claude Code writes it: its one `"message":{...}` (a progress
        entry nests a second: parsed), the word "assistant" only as the entry's type and the
        message's role; the model is the message's `model`, the line's only one."""
        if (
            not one_object(raw)
            or raw.count(b'"assistant"') != 2
            or b'"role":"assistant"' not in raw
            or b'"type":"assistant"' not in raw
        ):
            return None
        return nested_message_model(raw)

    def messages(self, record: Record) -> Iterator[Message]:
        entry = record.obj
        msg = _assistant(entry)
        if entry is None or msg is None:
            return
        earlier = record.ctx.extra
        same = earlier.get("message_id") is not None and earlier.get("message_id") == msg.get("id")
        yield Message(
            path=("message",),
            index=record.index,
            texts=partial(content_slots, msg, ("message",)),
            native=partial(_native, msg, earlier.get("thinking") if same else None),
            message_id=as_str(msg.get("id")) or as_str(entry.get("uuid")),
            model=as_str(msg.get("model")),
            session_id=as_str(entry.get("sessionId")),
            calls=partial(has_tool_call, msg.get("content")),
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        if not draft.segments:
            place_nothing(draft)
            return
        mode = plan.options.claude_code_mode
        site = draft.site
        in_block = len(site.path) >= 2 and isinstance(site.path[-2], int)
        if mode is ClaudeCodeMode.ARCHIVE and in_block:
            self.place_blocks(
                draft,
                [{"type": "thinking", "thinking": s} for s in draft.segments],
                "unsigned thinking block (archive mode: the session can no longer be resumed)",
            )
        elif mode is ClaudeCodeMode.ANNOTATE:
            self._annotate(plan, draft)
        else:
            why = (
                "repair manifest only (resumable mode: Claude Code would replay an unsigned "
                "thinking block and fail)"
            )
            if mode is ClaudeCodeMode.ARCHIVE:
                why = "repair manifest only (string content has no block list to insert into)"
            place_elsewhere(draft, PlacementKind.MANIFEST, why)

    def archives(self, plan: Plan, draft: Draft) -> bool:
        """Archive mode puts a thinking block in the message (the session is never resumed)."""
        return (
            plan.options.claude_code_mode is ClaudeCodeMode.ARCHIVE
            and len(draft.site.path) >= 2
            and isinstance(draft.site.path[-2], int)
        )

    @staticmethod
    def _annotate(plan: Plan, draft: Draft) -> None:
        """All repairs of one line share one top-level `thinkfix` key."""
        from thinkfix.formats.jsonedit import SetKey

        site = draft.site
        current = plan.records[site.record_index].data.get("thinkfix")
        earlier = current.get("repairs") if isinstance(current, dict) else None
        kept = list(earlier) if isinstance(earlier, list) else []

        def build(drafts: list[Draft]) -> SetKey:
            entries = [
                {
                    "jsonPath": d.site.json_path,
                    "extractedReasoning": "\n\n".join(d.segments),
                    "originalText": d.site.text,
                }
                for d in drafts
            ]
            return SetKey((), "thinkfix", {"version": 1, "repairs": kept + entries})

        plan.shared_edit(draft, site.record_index, "thinkfix", build)
        draft.place(
            PlacementKind.ANNOTATION,
            "top-level `thinkfix` key of the same line",
            field=(site.record_index, ("thinkfix",)),
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- turns: the session as `show` reads it --------------------------------------------------
# Claude Code lines as turns: prompts, responses (one block per line), tool results, notices.


#: Stop reasons that end a response normally; any other one is worth a note in the header.
_NORMAL_STOPS = {None, "end_turn", "tool_use", "stop_sequence", "pause_turn"}


def turns(record: Record) -> Iterator[Turn]:
    from thinkfix.formats.turn_shapes import block_parts, split_results, tool_call, tool_result
    from thinkfix.formats.turns import Part, PartKind, Role, Turn

    entry = record.obj
    if entry is None:
        return
    kind = entry.get("type")
    timestamp = as_str(entry.get("timestamp"))
    if kind == "summary" and as_str(entry.get("summary")):
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, entry["summary"]),), note="summary")
    elif kind == "system" and (as_str(entry.get("content")) or "").strip():
        yield Turn(
            Role.SYSTEM,
            (Part(PartKind.TEXT, entry["content"]),),
            timestamp,
            note=as_str(entry.get("subtype")),
        )
    elif kind == "tool_use":  # early builds wrote calls and results as lines of their own
        yield Turn(Role.ASSISTANT, (tool_call(entry.get("input"), entry.get("name")),), timestamp)
    elif kind == "tool_result":
        yield Turn(Role.TOOL, (tool_result(entry.get("output"), entry.get("name")),), timestamp)
    elif kind in ("user", "assistant") and isinstance(entry.get("message"), dict):
        msg = entry["message"]
        parts = block_parts(msg.get("content"), ("message", "content"))
        stop = msg.get("stop_reason") if kind == "assistant" else None
        note = _note(entry, None if stop in _NORMAL_STOPS else f"stop: {stop}")
        if kind == "user":
            yield from split_results(Role.USER, parts, timestamp=timestamp, note=note)
            return
        yield Turn(
            Role.ASSISTANT,
            tuple(parts),
            timestamp,
            as_str(msg.get("model")),
            as_str(msg.get("id")) or as_str(entry.get("uuid")),
            note=note,
        )


def _note(entry: dict[str, Any], stop: str | None) -> str | None:
    """Sub-agent lines (older builds interleave them) and injected meta prompts, marked."""
    notes = [
        n
        for n, on in (
            ("sidechain", entry.get("isSidechain")),
            ("meta", entry.get("isMeta")),
            (stop, stop),
        )
        if on
    ]
    return ", ".join(n for n in notes if n) or None
