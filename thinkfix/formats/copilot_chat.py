"""GitHub Copilot Chat in VS Code: the chat sessions VS Code itself keeps.

VS Code's chat service (microsoft/vscode `src/vs/workbench/contrib/chat/common/model/
chatSessionStore.ts`, `ChatSessionStore`) writes each session to `<user data>/User/
workspaceStorage/<workspace id>/chatSessions/<session id>.jsonl` (`globalStorage/
{emptyWindow,transferred}ChatSessions/` for windows without a folder or handed between
them); before 1.109, and where `chat.useLogSessionStorage` is off, a flat `<id>.json`:
`JSON.stringify` of `chatModel.ts`'s `ISerializableChatData` (`{version: 3, requests,
sessionId, ...}`). The log (`objectMutationLog.ts`, `ObjectMutationLog`; its schema in
`chatSessionOperationLog.ts`) is one entry a line: `{kind: 0, v: <the session>}`, then
`{kind: 1, k: path, v}` (set), `{kind: 2, k, v: [...], i?}` (push, truncated at `i`
first), `{kind: 3, k}` (delete).

A request is `{requestId, message: {text, parts}, response: [...], result, modelId, ...}`.
Its `response` is the list of parts VS Code shows: a markdown part is stored as the bare
`IMarkdownString` (`{value, supportThemeIcons, supportHtml, baseUri}`, no `kind`), the
others by `kind` (`thinking`, `toolInvocationSerialized`, `inlineReference`, ...).
Copilot Chat (microsoft/vscode-copilot-chat) also keeps, in `result.metadata.
toolCallRounds[]`, each round's `response` text and `thinking`; for earlier turns its
prompt replays those round texts (`src/extension/prompt/common/conversation.ts`,
`Turn.rounds`), and their `thinking` only for the current turn
(`src/extension/prompts/node/panel/toolCalling.tsx`, `!isHistorical`). So a leak is fixed
in the markdown part and in the round text that repeats it; the reasoning goes into a
`thinking` part before the text, which VS Code shows folded and nothing replays. A round
no markdown part holds is read on its own (`copilot_rounds`), its reasoning put into its
own `thinking`.

An assistant message is a response's parts as a record holds them (a request's, or a log
entry's push or set): a response written in pieces as it streamed is read in each."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, as_str, join_texts, place_elsewhere, place_nothing
from thinkfix.formats.copilot_rounds import (
    COUNT,
    MARKER,
    MODELS,
    ROUNDS,
    SEEN,
    is_request,
    mark,
    mirror_rounds,
    own_rounds,
    place_in_round,
    requests_of,
    round_messages,
    seen_after,
)
from thinkfix.formats.detection import has_keys, sample
from thinkfix.formats.jsonedit import InsertItems
from thinkfix.formats.locations import VSCODE_EDITORS, editor_users
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import EMPTY_CONTEXT, Context, Record
from thinkfix.formats.repairs import PlacementKind, TextSlot
from thinkfix.formats.turn_shapes import args_text
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import UnexpectedShape, fmt_path, get_path, text_value

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

#: Response part kinds that are tool calls (a text before one is rule 4's evidence).
_TOOL_KINDS = frozenset({"toolInvocationSerialized", "toolInvocation", "prepareToolInvocation"})
_SESSION_KEYS = ("requests", "sessionId")
_LOG_OPENER = re.compile(rb'^\s*\{\s*"kind"\s*:\s*0\s*,\s*"v"\s*:\s*\{')
_FLAT_OPENER = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,')
#: Folders of a profile's globalStorage that hold sessions of windows without a workspace.
_GLOBAL_FOLDERS = ("emptyWindowChatSessions", "transferredChatSessions")


def _session(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("requests"), list)
        and "sessionId" in value
        and ("version" in value or "responderUsername" in value or "creationDate" in value)
        and all(is_request(r) for r in value["requests"][:200])
    )


def _entry(value: Any) -> bool:
    """A line of the mutation log other than the first."""
    return (
        isinstance(value, dict)
        and value.get("kind") in (1, 2, 3)
        and isinstance(value.get("k"), list)
        and set(value) <= {"kind", "k", "v", "i"}
    )


def _initial(value: Any) -> bool:
    """The log's first entry: the whole session."""
    return isinstance(value, dict) and value.get("kind") == 0 and _session(value.get("v"))


def _markdown(part: Any) -> bool:
    """A markdown part as persisted: a bare IMarkdownString (no `kind`)."""
    return isinstance(part, dict) and "kind" not in part and isinstance(part.get("value"), str)


def _vuln(part: Any) -> bool:
    """Model text with code-vulnerability notes: `{kind: "markdownVuln", content:
    IMarkdownString, vulnerabilities}` (`IChatAgentMarkdownContentWithVulnerability`), stored
    as is (`responsePartSchema` in chatSessionOperationLog.ts turns only `markdownContent`
    into its bare content)."""
    content = part.get("content") if isinstance(part, dict) else None
    return (
        part.get("kind") == "markdownVuln"
        and isinstance(content, dict)
        and isinstance(content.get("value"), str)
    )


def _may_hold_text(part: Any) -> bool:
    """A markdown or markdownVuln part, or one of no shape VS Code writes (`_slots` checks it)."""
    return not isinstance(part, dict) or "kind" not in part or part["kind"] == "markdownVuln"


#: Where a text part's text is, from the part: a bare markdown string's, a markdownVuln's.
_MARKDOWN_TEXT: Path = ("value",)
_VULN_TEXT: Path = ("content", "value")


def _text_path(part: Any, where: Path) -> Path | None:
    """Where a response part (at `where`) holds model text VS Code shows, or None. A part VS
    Code never writes (no object; no `kind` and a `value` that is no string; a `markdownVuln`
    whose content is no markdown string) raises `UnexpectedShape`: skipped, its leak was
    counted clean."""
    if not isinstance(part, dict):
        raise UnexpectedShape(where, part, "a response part object")
    if "kind" not in part:
        text_value(part.get("value"), (*where, "value"))
        return _MARKDOWN_TEXT if "value" in part else None
    if part.get("kind") == "markdownVuln":
        if not _vuln(part):
            raise UnexpectedShape((*where, "content"), part.get("content"), "a markdown string")
        return _VULN_TEXT
    return None


def _thinking(parts: list[Any]) -> str | None:
    return join_texts(
        _thinking_value(p.get("value"))
        for p in parts
        if isinstance(p, dict) and p.get("kind") == "thinking"
    )


def _thinking_value(value: Any) -> Any:
    """A thinking part's value: a string, or the list of strings it streamed as."""
    return "".join(v for v in value if isinstance(v, str)) if isinstance(value, list) else value


def _slots(parts: list[Any], base: Path) -> list[TextSlot]:
    last_tool = max(
        (i for i, p in enumerate(parts) if isinstance(p, dict) and p.get("kind") in _TOOL_KINDS),
        default=-1,
    )
    slots = []
    for i, p in enumerate(parts):
        at = _text_path(p, (*base, i))
        if at is not None and isinstance(get_path(p, at), str):
            slots.append(TextSlot((*base, i, *at), get_path(p, at), tool_after=i < last_tool))
    return slots


def _responses(
    record: Record,
) -> Iterator[tuple[Path, list[Any], int | None, dict[str, Any] | None]]:
    """(path of a response-part list, the parts, the request's index or None, the request)
    for each response a record holds."""
    if record.obj is not None:
        yield from _responses_of(record.obj, record.ctx.extra.get(COUNT, 0))


def _responses_of(
    o: dict[str, Any], count: int
) -> Iterator[tuple[Path, list[Any], int | None, dict[str, Any] | None]]:
    for path, request, index in requests_of(o, count):
        if isinstance(request.get("response"), list):
            yield (*path, "response"), request["response"], index, request
    kind, k, v = o.get("kind"), o.get("k"), o.get("v")
    key = k if isinstance(k, list) and len(k) == 3 else [None, None, None]
    if kind in (1, 2) and key[0] == "requests" and key[2] == "response" and isinstance(v, list):
        yield ("v",), v, key[1] if isinstance(key[1], int) else None, None


def _marks(record: Record) -> dict[int, list[str | int]]:
    """Request index -> the `mark`s of its markdown texts in the record (what a round of that
    request is checked against)."""
    return _marks_in(_responses(record))


def _marks_in(
    responses: Iterable[tuple[Path, list[Any], int | None, dict[str, Any] | None]],
) -> dict[int, list[str | int]]:
    marks: dict[int, list[str | int]] = {}
    for _, parts, index, _ in responses:
        for p in parts:
            text = get_path(p, _VULN_TEXT) if _vuln(p) else p.get("value") if _markdown(p) else None
            if index is not None and isinstance(text, str) and text.strip():
                marks.setdefault(index, []).append(mark(text))
    return marks


def _check_entry(o: dict[str, Any]) -> None:
    """Raise `UnexpectedShape` for a log entry no VS Code writes where a response may hide
    (`_responses` passed it over, its leak counted clean): `ObjectMutationLog.read` switches
    on a number kind; `storageSchema` pushes or sets whole response lists (their parts are
    values, never set alone) and requests (`requestSchema`), each with its message and a
    list of response parts."""
    kind, k, v = o.get("kind", 0), o.get("k"), o.get("v")  # no kind: the flat file
    if type(kind) is not int or not 0 <= kind <= 3:
        raise UnexpectedShape(("kind",), kind, "an entry kind of 0, 1, 2 or 3")
    requests: Any = ()
    at: Path = ("requests",)
    if kind == 0:
        session = v if "kind" in o else o
        requests = session.get("requests") if isinstance(session, dict) else None
        at = ("v", *at) if "kind" in o else at
    elif kind in (1, 2) and isinstance(k, list) and k[:1] == ["requests"]:
        if (len(k) == 1 or k[2:] == ["response"]) and v is not None and not isinstance(v, list):
            raise UnexpectedShape(("v",), v, f"a list at {fmt_path(tuple(k))}")
        if len(k) > 3 and k[2] == "response" and kind == 1:
            raise UnexpectedShape(("k",), k, "a whole response list, never one part")
        requests = v if len(k) == 1 else [v] if len(k) == 2 and kind == 1 and v else ()
        at = ("v",) if len(k) == 1 else ()
    for j, r in enumerate(requests if isinstance(requests, list) else ()):
        if not is_request(r) or not isinstance(r.get("response", []), list):
            raise UnexpectedShape((*at, j) if at else ("v",), r, "a request as VS Code writes it")


def _count_after(record: Record, ctx: Context) -> int:
    o = record.obj
    count: int = ctx.extra.get(COUNT, 0)
    if o is None:
        return count
    kind, k, v = o.get("kind"), o.get("k"), o.get("v")
    if kind == 0 and isinstance(v, dict) and isinstance(v.get("requests"), list):
        return len(v["requests"])
    if k == ["requests"] and isinstance(v, list):
        if kind == 1:
            return len(v)
        if kind == 2:
            at = o.get("i")
            return (at if isinstance(at, int) else count) + len(v)
    return count


class CopilotChat(FormatBase):
    id = "copilot-chat"
    description = (
        "GitHub Copilot Chat sessions kept by VS Code: workspaceStorage/<id>/chatSessions/"
        "<session>.jsonl (a mutation log) or .json (before 1.109), emptyWindowChatSessions"
    )
    detection = (
        "a session object {version, requests: [{requestId, message, response}], sessionId}, "
        "or a log whose first line is {kind: 0, v: <that object>} and whose others are "
        "{kind: 1|2|3, k: path, v, i}"
    )
    placement = (
        "a `thinking` response part before the text (VS Code shows it folded; nothing "
        "replays it), and the leak fixed in the result.metadata.toolCallRounds text Copilot "
        "replays; in a log whose later lines index into that response, the manifest only; "
        "a round's own `thinking` for a round no markdown part holds"
    )
    locations_source = (
        "VS Code user data (VSCODE_PORTABLE, $XDG_CONFIG_HOME, ~/Library/Application Support, "
        "%APPDATA%): User/workspaceStorage/<id>/chatSessions, User/globalStorage/"
        "{emptyWindowChatSessions,transferredChatSessions} (microsoft/vscode chat/common/"
        "model/chatSessionStore.ts, ChatSessionStore)"
    )
    assistant_marker = b'"response"'
    context_markers = (b'"requests"',)  # every line that adds requests names them

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        """Each workspace's `chatSessions` folder that exists (never all of workspaceStorage:
        it holds every extension's storage and `state.vscdb`, gigabytes that are no session),
        and the global folders of windows without a workspace."""
        out = []
        for user in editor_users(env, home, VSCODE_EDITORS, server=True):
            workspaces = user / "workspaceStorage"
            if workspaces.is_dir():
                out += sorted(d / "chatSessions" for d in workspaces.iterdir() if d.is_dir())
            out += [user / "globalStorage" / d for d in _GLOBAL_FOLDERS]
        return out

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        if s.doc is not None and not s.values:
            return 0.95 if _session(s.doc) else 0.0
        values = s.values
        if values:
            first = values[0]
            if _initial(first):
                # a log rewritten whole starts again with its first entry (copies concatenate)
                return 0.95 if all(_entry(v) or _initial(v) for v in values[1:]) else 0.0
            if _session(first) and len(values) == 1:
                return 0.95
            return 0.0
        if s.partial:
            # a first line longer than the head: the log's first entry names the session
            # before its requests; the flat file's session id comes after them
            if _LOG_OPENER.match(head) and has_keys(head, "sessionId", "requests"):
                return 0.9
            if _FLAT_OPENER.match(head) and has_keys(
                head, "responderUsername", "requests", "message"
            ):
                return 0.9
        return 0.0

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        o = record.obj
        if o is None:
            return ctx, ctx
        session = o.get("v") if o.get("kind") == 0 else o if "kind" not in o else None
        if isinstance(session, dict) and "sessionId" in session:
            ctx = Context(session_id=as_str(session.get("sessionId")), extra=ctx.extra)
        models = ctx.extra.get(MODELS, {})
        responses = list(_responses_of(o, ctx.extra.get(COUNT, 0)))
        named = {
            index: request["modelId"]
            for _, _, index, request in responses
            if request is not None and index is not None and as_str(request.get("modelId"))
        }
        if named:  # copied only when it changes: a log has a line per streamed piece
            models = {**models, **named}
        seen = seen_after(record, ctx.extra, _marks_in(responses))
        extra = {**ctx.extra, COUNT: _count_after(record, ctx), MODELS: models, SEEN: seen}
        return ctx, Context(ctx.session_id, ctx.model, extra)

    def messages(self, record: Record) -> Iterator[Message]:
        _check_entry(record.obj or {})
        for path, parts, index, request in _responses(record):
            if not any(_may_hold_text(p) for p in parts):
                continue  # a pending request, or a tool call's progress: no text of the model
            yield Message(
                path,
                index if index is not None else record.index,
                partial(_slots, parts, path),
                native=partial(_thinking, parts),
                message_id=as_str(request.get("responseId") or request.get("requestId"))
                if request
                else None,
                model=as_str(request.get("modelId"))
                if request
                else record.ctx.extra.get(MODELS, {}).get(index),
            )
        if MARKER in record.raw:
            yield from round_messages(record, _marks)

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        site = draft.site
        if not draft.segments:
            if ROUNDS[-1] not in site.path:
                mirror_rounds(plan, draft, self._own_rounds(plan))
            place_nothing(draft)
            return
        if ROUNDS[-1] in site.path:  # a round read on its own: its own `thinking`
            placed = place_in_round(plan.records[site.record_index].data, draft)
            if placed is None:
                why = "the repair manifest: `encrypted` signs the round's thinking"
                place_elsewhere(draft, PlacementKind.MANIFEST, why)
            else:
                draft.place(PlacementKind.FIELD, placed[0], field=(site.record_index, placed[1]))
            return
        mirror_rounds(plan, draft, self._own_rounds(plan))
        if not self._last_touch(plan, site):
            place_elsewhere(
                draft,
                PlacementKind.MANIFEST,
                "the repair manifest: a later line of the log indexes into this response, "
                "so a part inserted here would shift what it points at",
            )
            return
        part = {"kind": "thinking", "value": "\n\n".join(draft.segments)}
        # the response part the text is in: a markdown string's `value`, a markdownVuln's
        # `content.value`
        inside = _VULN_TEXT if site.path[-2:] == _VULN_TEXT else _MARKDOWN_TEXT
        array, index = site.path[: -len(inside) - 1], site.path[-len(inside) - 1]
        assert isinstance(index, int)
        draft.edit(site.record_index, InsertItems(array, index, (part,)))
        draft.place(
            PlacementKind.BLOCK,
            f"a thinking response part before {fmt_path(site.path[: len(array) + 1])}",
            block=(site.record_index, array, index),
        )

    def _own_rounds(self, plan: Plan) -> set[tuple[int, Path]]:
        """(record, path) of each round the scan reads on its own (so no mirror of a markdown
        repair), from the contexts a read of the file builds: the planner's records carry
        none."""

        def compute() -> set[tuple[int, Path]]:
            own, ctx = set(), EMPTY_CONTEXT
            for record in plan.records_with(b'"requests"'):  # every line the context reads
                if record.error is not None or record.obj is None:
                    continue
                before, ctx = self.update_context(record, ctx)
                if MARKER in record.raw:
                    count = before.extra.get(COUNT, 0)
                    marks = _marks_in(_responses_of(record.obj, count))
                    with suppress(UnexpectedShape):  # never read: no mirror goes there
                        found = own_rounds(record.obj, count, before.extra.get(SEEN), marks)
                        own |= {(record.index, at) for at, _, _ in found}
            return own

        found: set[tuple[int, Path]] = plan.fact("copilot-chat:own", compute)
        return found

    def _last_touch(self, plan: Plan, site: Any) -> bool:
        """Does no later line of the log index into the site's response (so a part inserted
        into it keeps every later position right)?"""
        record = plan.records[site.record_index]
        o = record.obj
        if o is None or "kind" not in o:
            return True  # the flat file: one document
        mine = {index for path, _, index, _ in _responses(record) if site.path[: len(path)] == path}
        last: dict[int, int] = plan.fact("copilot-chat:last", lambda: _last_writes(plan))
        return all(last.get(i, -1) <= site.record_index for i in mine if i is not None)

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


def _last_writes(plan: Plan) -> dict[int, int]:
    """Request index -> the last record of the log that indexes into that request's parts: a
    push that truncates them first (`i`), or a set or delete of one part."""
    last: dict[int, int] = {}
    for record in plan.records_with(b'"response"'):
        o = record.obj if record.error is None else None
        k = o.get("k") if o is not None else None
        if not (isinstance(k, list) and len(k) >= 3 and k[0] == "requests" and k[2] == "response"):
            continue
        indexing = len(k) > 3 or (o is not None and o.get("kind") == 2 and "i" in o)
        if indexing and isinstance(k[1], int):
            last[k[1]] = record.index
    return last


# --- turns: the session as `show` reads it --------------------------------------------------


def _request_turns(request: dict[str, Any], parts_path: Path, where: str) -> Iterator[Turn]:
    message = request.get("message")
    text = as_str(message.get("text")) if isinstance(message, dict) else None
    if text is not None:
        yield Turn(Role.USER, (Part(PartKind.TEXT, text),), where=where)
    parts = request.get("response")
    if isinstance(parts, list) and parts:
        yield _response_turn(parts, parts_path, as_str(request.get("modelId")), where)


def _response_turn(parts: list[Any], base: Path, model: str | None, where: str) -> Turn:
    out: list[Part] = []
    for i, p in enumerate(parts):
        if _markdown(p) or _vuln(p):
            at = _MARKDOWN_TEXT if _markdown(p) else _VULN_TEXT
            out.append(Part(PartKind.TEXT, get_path(p, at), path=(*base, i, *at)))
        elif isinstance(p, dict) and p.get("kind") == "thinking":
            text = as_str(_thinking_value(p.get("value")))
            if text:
                out.append(Part(PartKind.THINKING, text))
        elif isinstance(p, dict) and p.get("kind") in _TOOL_KINDS:
            message = p.get("invocationMessage")
            label = message.get("value") if isinstance(message, dict) else message
            out.append(
                Part(
                    PartKind.TOOL_CALL,
                    args_text(label),
                    name=as_str(p.get("toolId")) or "",
                    call_id=as_str(p.get("toolCallId")),
                )
            )
    return Turn(Role.ASSISTANT, tuple(out), model=model, where=where)


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    for path, parts, _, request in _responses(record):
        where = fmt_path(path[:-1]) if request is not None else fmt_path(path)
        if request is not None:
            yield from _request_turns(request, path, where)
        elif parts:
            yield _response_turn(parts, path, None, where)
