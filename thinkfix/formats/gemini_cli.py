"""Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-*.json` (pretty-printed),
and the JSONL log of 0.40+ (a header line, message lines, `{"$set": ...}` patches).

Visible text is the `content` of `type: gemini` messages. `thoughts` are display
only (never replayed), so extracted reasoning is appended there. A content part
that carries a `thoughtSignature` is signed: it is reported, never changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str, join_texts
from thinkfix.formats.detection import has_keys, sample, share
from thinkfix.formats.jsonedit import InsertItems, SetKey
from thinkfix.formats.locations import env_dir
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Context, Record
from thinkfix.formats.repairs import PlacementKind, TextSlot
from thinkfix.formats.turn_shapes import output_text, tool_call
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import UnexpectedShape, fmt_path, get_path, text_value

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

_THOUGHT_KEYS = ("subject", "description", "timestamp")


def _gemini_message(m: Any) -> bool:
    return isinstance(m, dict) and m.get("type") == "gemini" and "content" in m


def _header(o: dict[str, Any]) -> bool:
    return "sessionId" in o and "projectHash" in o


def _slots(m: dict[str, Any], base: Path) -> list[TextSlot]:
    """The message's visible texts. `content` is a `PartListUnion` (newer builds'
    `BaseMessageRecord`; a string before): a string, one `Part`, or a list of parts and
    strings. Each is read; a value of another shape raises `UnexpectedShape`, because one
    skipped was a leak counted clean."""
    content = m.get("content")
    tools = bool(m.get("toolCalls"))  # the message's tool calls follow its text: rule 4's evidence
    if isinstance(content, str):
        return [TextSlot(base + ("content",), content, tool_after=tools)]
    if isinstance(content, dict):
        parts: list[tuple[Path, Any]] = [(base + ("content",), content)]
    elif isinstance(content, list):
        parts = [(base + ("content", i), part) for i, part in enumerate(content)]
    elif content is None:
        return []
    else:
        raise UnexpectedShape(base + ("content",), content, "a string, a part or a list of parts")
    last_call = max(
        (
            n
            for n, (_, part) in enumerate(parts)
            if isinstance(part, dict) and part.get("functionCall")
        ),
        default=-1,
    )
    slots = []
    for n, (path, part) in enumerate(parts):
        after = tools or n < last_call
        if isinstance(part, str):
            slots.append(TextSlot(path, part, tool_after=after))
            continue
        if not isinstance(part, dict):
            raise UnexpectedShape(path, part, "a part object or a string")
        text = text_value(part.get("text"), (*path, "text"))
        if text is not None and not part.get("thought"):
            signed = bool(part.get("thoughtSignature") or part.get("thought_signature"))
            slots.append(TextSlot((*path, "text"), text, signed, tool_after=after))
    return slots


def _native(m: dict[str, Any]) -> str | None:
    thoughts = m.get("thoughts")
    if not isinstance(thoughts, list):
        return None
    return join_texts(t.get("description") for t in thoughts if isinstance(t, dict))


class GeminiCli(FormatBase):
    id = "gemini-cli"
    description = (
        "Gemini CLI chats (~/.gemini/tmp/<project>/chats/session-*.json, and the "
        "JSONL log of 0.40+)"
    )
    detection = (
        "{sessionId, projectHash, messages: [{id, type: user|gemini, content, "
        "thoughts}]} documents, or JSONL with that header and such message lines"
    )
    assistant_marker = b'"gemini"'
    placement = (
        "appended to the message's thoughts list as {subject: thinkfix, description, "
        "timestamp} (display only, never replayed); signed parts are left alone"
    )

    locations_source = (
        "$GEMINI_CLI_HOME/.gemini/tmp, else ~/.gemini/tmp (chats under <projectHash>/chats): "
        "google-gemini/gemini-cli packages/core/src/utils/paths.ts homedir() (GEMINI_CLI_HOME "
        "replaces the home folder) and config/storage.ts getGlobalGeminiDir; docs/formats.md"
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [env_dir(env, ("GEMINI_CLI_HOME",), home, "") / ".gemini" / "tmp"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        objects = s.objects
        if (
            isinstance(s.doc, dict)
            and isinstance(s.doc.get("messages"), list)
            and (_header(s.doc) or any(_gemini_message(m) for m in s.doc["messages"]))
        ):
            return 0.95
        if s.values and any(_header(o) for o in objects[:1]):
            return 0.95
        if (
            objects
            and any(_gemini_message(o) for o in objects)
            and share(
                objects,
                lambda o: (
                    "$set" in o or o.get("type") in ("user", "gemini", "info", "error", "warning")
                ),
            )
            >= 0.5
        ):
            return 0.85
        if s.partial and has_keys(head, "sessionId", "projectHash", "messages"):
            return 0.85
        return 0.0

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        o = record.obj
        if o is not None and _header(o):
            new = Context(session_id=as_str(o.get("sessionId")))
            return new, new
        return ctx, ctx

    def messages(self, record: Record) -> Iterator[Message]:
        o = record.obj
        if o is None:
            return
        candidates: list[tuple[Path, Any, int]]
        if isinstance(o.get("messages"), list):
            session = as_str(o.get("sessionId"))
            candidates = [(("messages", j), m, j) for j, m in enumerate(o["messages"])]
        else:
            session = None
            candidates = [((), o, record.index)]
        for base, m, index in candidates:
            if _gemini_message(m):
                yield Message(
                    base,
                    index,
                    partial(_slots, m, base),
                    native=partial(_native, m),
                    message_id=as_str(m.get("id")),
                    model=as_str(m.get("model")),
                    session_id=session,
                )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        site = draft.site
        if not draft.segments:
            draft.place(PlacementKind.NONE, "no reasoning to place (only delimiters were removed)")
            return
        record = plan.records[site.record_index]
        # the message holds `content`, whatever part of it (a part, a string item) the text is
        msg_path = site.path[: len(site.path) - 1 - site.path[::-1].index("content")]
        msg = get_path(record.data, msg_path)
        order = plan.fact("gemini-cli:thought-keys", lambda: self._thought_keys(plan))
        fields = {"subject": plan.options.gemini_subject, "timestamp": msg.get("timestamp")}
        new = tuple(
            {
                k: (seg if k == "description" else fields[k])
                for k in order
                if k == "description" or fields[k] is not None
            }
            for seg in draft.segments
        )
        thoughts_path = msg_path + ("thoughts",)
        existing = msg.get("thoughts")
        if isinstance(existing, list):
            draft.edit(site.record_index, InsertItems(thoughts_path, len(existing), new))
            draft.place(
                PlacementKind.THOUGHTS,
                f"appended to {fmt_path(thoughts_path)}",
                block=(site.record_index, thoughts_path, len(existing)),
            )
            return

        def build(drafts: list[Draft]) -> SetKey:
            return SetKey(
                msg_path, "thoughts", [t for d in drafts for t in d.value], after="content"
            )

        draft.value = list(new)
        plan.shared_edit(draft, site.record_index, thoughts_path, build)
        draft.place(
            PlacementKind.THOUGHTS,
            f"new {fmt_path(thoughts_path)} list",
            field=(site.record_index, thoughts_path),
        )

    @staticmethod
    def _thought_keys(plan: Plan) -> tuple[str, ...]:
        """Key order of the file's own thoughts (Gemini CLI writes subject first)."""
        for record in plan.records_with(b'"description"'):
            if record.error is not None:
                continue
            for value in _iter_thoughts(record.data):
                keys = tuple(k for k in value if k in _THOUGHT_KEYS)
                if "description" in keys:
                    return keys + tuple(k for k in _THOUGHT_KEYS if k not in keys)
        return _THOUGHT_KEYS

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


def _iter_thoughts(data: Any) -> Iterator[dict[str, Any]]:
    messages = data.get("messages") if isinstance(data, dict) else None
    for m in messages if isinstance(messages, list) else [data]:
        thoughts = m.get("thoughts") if isinstance(m, dict) else None
        if isinstance(thoughts, list):
            yield from (t for t in thoughts if isinstance(t, dict))


# --- turns: the session as `show` reads it --------------------------------------------------
# Gemini CLI messages as turns: prompts, model replies with their thoughts and tool calls.
#
# Gemini CLI stores a tool call's result inside the call, on the model's message; it is
# shown as a tool turn right after that message, as in the other formats.


_NOTICES = {"info", "error", "warning"}


def _thoughts(m: dict[str, Any]) -> list[Part]:
    parts = []
    for t in m.get("thoughts") or ():
        if not isinstance(t, dict):
            continue
        subject, description = as_str(t.get("subject")), as_str(t.get("description")) or ""
        text = f"{subject}\n{description}" if subject else description
        if text.strip():
            parts.append(Part(PartKind.THINKING, text))
    return parts


def _content(m: dict[str, Any], base: Path) -> list[Part]:
    content = m.get("content")
    if isinstance(content, str):
        return [Part(PartKind.TEXT, content, path=base + ("content",))] if content else []
    parts = []
    for i, c in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(c, dict) or not isinstance(c.get("text"), str):
            continue
        signed = bool(c.get("thoughtSignature") or c.get("thought_signature"))
        if c.get("thought"):
            parts.append(Part(PartKind.THINKING, c["text"], signed=signed))
        else:
            parts.append(Part(PartKind.TEXT, c["text"], path=base + ("content", i, "text")))
    return parts


def _result(call: dict[str, Any]) -> Part:
    outputs = []
    for r in call.get("result") or ():
        response = r.get("functionResponse", {}).get("response") if isinstance(r, dict) else None
        if isinstance(response, dict):
            outputs.append(output_text(response.get("output") or response.get("error")))
    text = "\n".join(o for o in outputs if o) or output_text(call.get("resultDisplay"))
    return Part(
        PartKind.TOOL_RESULT,
        text,
        name=as_str(call.get("name")) or "",
        call_id=as_str(call.get("id")),
        error=call.get("status") in ("error", "cancelled"),
    )


def _message(m: dict[str, Any], base: Path, where: str) -> Iterator[Turn]:
    kind = m.get("type")
    timestamp = as_str(m.get("timestamp"))
    if kind == "user":
        yield Turn(Role.USER, tuple(_content(m, base)), timestamp, where=where)
    elif kind in _NOTICES:
        yield Turn(Role.SYSTEM, tuple(_content(m, base)), timestamp, note=kind, where=where)
    elif kind == "gemini":
        calls = [c for c in m.get("toolCalls") or () if isinstance(c, dict)]
        parts = (
            _thoughts(m)
            + _content(m, base)
            + [tool_call(c.get("args"), c.get("name"), c.get("id")) for c in calls]
        )
        yield Turn(
            Role.ASSISTANT,
            tuple(parts),
            timestamp,
            as_str(m.get("model")),
            as_str(m.get("id")),
            where=where,
        )
        results = [_result(c) for c in calls if c.get("result") or c.get("resultDisplay")]
        if results:
            yield Turn(Role.TOOL, tuple(results), timestamp, where=where)


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    if isinstance(o.get("messages"), list):
        for j, m in enumerate(o["messages"]):
            if isinstance(m, dict):
                yield from _message(m, ("messages", j), fmt_path(("messages", j)))
    elif "type" in o and "$set" not in o:
        yield from _message(o, (), "")
