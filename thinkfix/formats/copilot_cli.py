"""GitHub Copilot CLI: `$COPILOT_HOME/session-state/<id>/events.jsonl`, and the legacy
`history-session-state/session_<id>_<ms>.json`.

The CLI is closed source; the event shapes are the ones its public SDK declares
(github/copilot-sdk nodejs/src/generated/session-events.ts): one event per line,
`{type, data, id, timestamp, parentId}` (sub-agent events add `agentId`). `assistant.message`
carries `data.content` (the visible text), `data.toolRequests`, `data.reasoningText`
("readable reasoning text from the model's extended thinking"), `data.reasoningOpaque`
(Anthropic's signature, "session-bound and stripped on resume") and `data.encryptedContent`
(OpenAI's); `user.message`, `tool.execution_start/complete`, `hook.*`, `session.*` and the
rest hold no assistant text. The legacy file is one pretty-printed object `{sessionId,
startTime, chatMessages: [OpenAI chat messages], timeline: [...]}` whose `copilot` timeline
entries repeat the assistant text for display (jazzyalex/agent-sessions' and the token
trackers' parsers read both shapes the same way).

Placement: the CLI resumes a session from its event log, and `reasoningText` is the field it
keeps the model's reasoning in (with `reasoningWireField` so it round-trips to OpenAI-style
providers), so the reasoning is appended there; where the message carries a
`reasoningOpaque` signature over its reasoning text, that text is left as it is and the
reasoning stays in the repair manifest. The legacy file has no reasoning field: the text is
repaired (with its timeline copy) and the reasoning kept in the manifest.

Files users report as corrupted (a raw newline inside a string, a truncated or doubled
event) are read line by line: each bad line is a bad record with its reason, the rest of
the file is read as usual.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str, place_elsewhere, place_nothing
from thinkfix.formats.detection import base_name, sample, share
from thinkfix.formats.jsonedit import SetKey, SetValue
from thinkfix.formats.locations import env_dir
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import PlacementKind, TextSlot
from thinkfix.formats.turn_shapes import text_parts, tool_call, tool_result
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import UnexpectedShape, fmt_path, get_path, shift_utf16, text_value

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

#: Event types that open or mark a Copilot CLI log (any of them is evidence enough).
_KNOWN = frozenset(
    {
        "session.start",
        "session.resume",
        "user.message",
        "assistant.message",
        "assistant.turn_start",
        "tool.execution_start",
        "tool.execution_complete",
    }
)
_LEGACY_KEYS = ("sessionId", "startTime", "chatMessages")


def _event(o: Any) -> bool:
    return (
        isinstance(o, dict)
        and isinstance(o.get("type"), str)
        and "." in o["type"]
        and isinstance(o.get("data"), dict)
        and "id" in o
        and "parentId" in o
    )


def _legacy(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and all(k in doc for k in _LEGACY_KEYS)
        and isinstance(doc["chatMessages"], list)
    )


def _assistant(o: dict[str, Any]) -> dict[str, Any] | None:
    """An `assistant.message` event's data; an event of that type whose data is no object
    with a `content` (the SDK's `data: {content: string, ...}`) raises `UnexpectedShape`:
    skipped, a leak in it was counted clean."""
    if o.get("type") != "assistant.message":
        return None
    data = o.get("data")
    if not isinstance(data, dict) or "content" not in data:
        raise UnexpectedShape(("data",), data, "an object with the message's content")
    return data


def _reasoning(data: dict[str, Any]) -> str | None:
    text = data.get("reasoningText")
    return text if isinstance(text, str) and text.strip() else None


def _shift_citations(event: dict[str, Any], draft: Draft) -> None:
    """Each citation span (`data.citations.spans[]`, `CitationSpan`: `startIndex` and
    `endIndex` into the content, in UTF-16 code units) moved with the text it cites, which
    the repair shifted: left as they were, they would cite other words."""
    citations = event.get("citations")
    spans = citations.get("spans") if isinstance(citations, dict) else None
    if not isinstance(spans, list):
        return
    old = draft.site.text
    new = draft.placeholder if draft.placeholder is not None else draft.repair.visible
    end = len(new.encode("utf-16-le")) // 2
    shift = shift_utf16(old, new) or (lambda offset: min(offset, end))
    for j, span in enumerate(spans):
        for key in ("startIndex", "endIndex"):
            at = span.get(key) if isinstance(span, dict) else None
            if type(at) is int and shift(at) != at:
                path = ("data", "citations", "spans", j, key)
                draft.edit(draft.site.record_index, SetValue(path, shift(at)))


class CopilotCli(FormatBase):
    id = "copilot-cli"
    description = (
        "GitHub Copilot CLI sessions: ~/.copilot/session-state/<id>/events.jsonl "
        "({type, data, id, timestamp, parentId} events), and the legacy "
        "history-session-state/session_<id>_<ms>.json"
    )
    detection = (
        "JSONL events {type: <area>.<event>, data, id, parentId} with a session, user, "
        "assistant or tool event; or one object with sessionId, startTime and chatMessages"
    )
    placement = (
        "appended to the assistant.message's data.reasoningText (created after content), "
        "the field the CLI keeps and resumes reasoning from; the manifest only when a "
        "reasoningOpaque signature covers that text, and for the legacy file"
    )
    locations_source = (
        "$COPILOT_HOME, else ~/.copilot (docs.github.com Copilot CLI configuration "
        "directory reference: session-state/); builds before 0.0.421 used "
        "$XDG_CONFIG_HOME/.copilot (github/copilot-cli issue 1954); the legacy "
        "history-session-state/ beside it"
    )
    assistant_marker = b"assistant"

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        roots = [env_dir(env, ("COPILOT_HOME",), home, ".copilot")]
        xdg = env.get("XDG_CONFIG_HOME", "").strip()
        if xdg:
            roots.append(env_dir(env, ("XDG_CONFIG_HOME",), home, "") / ".copilot")
        return [
            root / name for root in roots for name in ("session-state", "history-session-state")
        ]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        if _legacy(s.doc):
            return 0.95
        objects = s.objects
        if s.values and objects and share(objects, _event) >= 0.5:
            if any(o["type"] in _KNOWN for o in objects if _event(o)):
                return 0.95
            return 0.8 if base_name(path) == "events.jsonl" else 0.6
        if s.partial and s.pretty and all(f'"{k}"'.encode() in head for k in _LEGACY_KEYS):
            return 0.85
        return 0.0

    def messages(self, record: Record) -> Iterator[Message]:
        o = record.obj
        if o is None:
            return
        data = _assistant(o)
        if data is not None:
            yield Message(
                ("data",),
                record.index,
                partial(_event_slots, data),
                native=partial(_reasoning, data),
                message_id=as_str(data.get("messageId")) or as_str(o.get("id")),
                model=as_str(data.get("model")),
            )
            return
        if not _legacy(o):
            return
        session = as_str(o.get("sessionId"))
        for j, m in enumerate(o["chatMessages"]):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                # an OpenAI chat message always names its role: skipped, a leak in it was
                # counted clean
                raise UnexpectedShape(("chatMessages", j), m, "a chat message with its role")
            if m.get("role") == "assistant":
                base = ("chatMessages", j)
                yield Message(
                    base,
                    j,
                    partial(_legacy_slots, m, base),
                    message_id=as_str(m.get("id")),
                    session_id=session,
                )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        site = draft.site
        data = plan.records[site.record_index].data
        if site.path == ("data", "content"):
            _shift_citations(data["data"], draft)
        if not draft.segments:
            place_nothing(draft)
            return
        if site.path[0] == "chatMessages":
            self._mirror_timeline(data, draft)
            place_elsewhere(
                draft,
                PlacementKind.MANIFEST,
                "repair manifest only (the legacy history file has no reasoning field)",
            )
            return
        event = get_path(data, ("data",))
        if isinstance(event.get("reasoningOpaque"), str) and event["reasoningOpaque"]:
            place_elsewhere(
                draft,
                PlacementKind.MANIFEST,
                "repair manifest only (reasoningOpaque signs the message's reasoningText)",
            )
            return
        new = "\n\n".join(draft.segments)
        existing = _reasoning(event)
        path = ("data", "reasoningText")
        if existing is not None:
            draft.edit(site.record_index, SetValue(path, f"{existing}\n\n{new}"))
            where = f"appended to {fmt_path(path)}"
        else:
            draft.edit(site.record_index, SetKey(("data",), "reasoningText", new, after="content"))
            where = f"new {fmt_path(path)}" if "reasoningText" not in event else f"{fmt_path(path)}"
        draft.place(PlacementKind.FIELD, where, field=(site.record_index, path))

    @staticmethod
    def _mirror_timeline(data: dict[str, Any], draft: Draft) -> None:
        """The legacy timeline's `copilot` entry showing the same text gets the same fix."""
        timeline = data.get("timeline")
        for k, entry in enumerate(timeline if isinstance(timeline, list) else ()):
            if (
                isinstance(entry, dict)
                and entry.get("type") == "copilot"
                and entry.get("text") == draft.site.text
            ):
                draft.mirror(draft.site.record_index, ("timeline", k, "text"), draft.repair.visible)

    def turns(self, record: Record) -> Iterator[Turn]:
        o = record.obj
        if o is None:
            return
        if _legacy(o):
            for j, m in enumerate(o["chatMessages"]):
                if isinstance(m, dict):
                    yield from _legacy_turn(m, ("chatMessages", j))
            return
        kind, data = o.get("type"), o.get("data")
        if not isinstance(data, dict):
            return
        timestamp = as_str(o.get("timestamp"))
        if kind == "user.message" and isinstance(data.get("content"), str):
            yield Turn(Role.USER, (Part(PartKind.TEXT, data["content"]),), timestamp)
        elif kind == "assistant.message":
            parts: list[Part] = []
            if _reasoning(data):
                parts.append(
                    Part(
                        PartKind.THINKING,
                        data["reasoningText"],
                        signed=bool(data.get("reasoningOpaque")),
                    )
                )
            elif data.get("reasoningOpaque") or data.get("encryptedContent"):
                parts.append(Part(PartKind.THINKING, "", signed=True, redacted=True))
            if isinstance(data.get("content"), str) and data["content"]:
                parts.append(Part(PartKind.TEXT, data["content"], path=("data", "content")))
            for call in data.get("toolRequests") or ():
                if isinstance(call, dict):
                    parts.append(
                        tool_call(call.get("arguments"), call.get("name"), call.get("toolCallId"))
                    )
            yield Turn(
                Role.ASSISTANT,
                tuple(parts),
                timestamp,
                as_str(data.get("model")),
                as_str(data.get("messageId")),
            )
        elif kind == "tool.execution_complete":
            result = data.get("result")
            output = result.get("content") if isinstance(result, dict) else None
            if output is None and isinstance(data.get("error"), dict):
                output = data["error"].get("message")
            yield Turn(
                Role.TOOL,
                (
                    tool_result(
                        output, call_id=data.get("toolCallId"), error=data.get("success") is False
                    ),
                ),
                timestamp,
            )
        elif kind in ("session.error", "session.info") and isinstance(data.get("message"), str):
            yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, data["message"]),), timestamp, note=kind)


def _event_slots(data: dict[str, Any]) -> list[TextSlot]:
    """`data.content` is a string (`content: string` of `assistant.message` in the SDK's
    session-events.ts); anything else raises `UnexpectedShape`, never skipped as clean."""
    content = text_value(data.get("content"), ("data", "content"))
    if content is None:
        return []
    return [TextSlot(("data", "content"), content, tool_after=bool(data.get("toolRequests")))]


def _legacy_slots(m: dict[str, Any], base: Path) -> list[TextSlot]:
    """A legacy chat message's string content; a content of another shape (a list of parts
    this reader does not mirror into the timeline) raises `UnexpectedShape`."""
    content = text_value(m.get("content"), base + ("content",))
    if content is None:
        return []
    return [TextSlot(base + ("content",), content, tool_after=bool(m.get("tool_calls")))]


def _legacy_turn(m: dict[str, Any], base: Path) -> Iterator[Turn]:
    role = m.get("role")
    where = fmt_path(base)
    if role == "tool":
        yield Turn(
            Role.TOOL, (tool_result(m.get("content"), call_id=m.get("tool_call_id")),), where=where
        )
        return
    parts = text_parts(m.get("content"), base, ())
    if role == "assistant":
        for call in m.get("tool_calls") or ():
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                parts.append(tool_call(fn.get("arguments"), fn.get("name"), call.get("id")))
        yield Turn(Role.ASSISTANT, tuple(parts), where=where)
    elif role in ("user", "system"):
        yield Turn(Role.USER if role == "user" else Role.SYSTEM, tuple(parts), where=where)
