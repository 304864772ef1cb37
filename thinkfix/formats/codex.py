"""OpenAI Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.

Lines are `{"timestamp", "type", "payload"}` envelopes. The visible text lives
twice: in the `response_item` message that is replayed to the model, and in the
`event_msg` copies the UI shows (`agent_message`, `task_complete`,
`item_completed`); both are fixed together. The reasoning becomes a new
`response_item` of type `reasoning` right before the message, without `id` or
`encrypted_content` (there is nothing to sign), followed by the `agent_reasoning` event
Codex writes beside reasoning it displays (viewers read that, never `content`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats import linestructs
from thinkfix.formats.base import Message
from thinkfix.formats.common import (
    FormatBase,
    as_str,
    join_texts,
    keeps_visible,
    place_elsewhere,
    place_nothing,
)
from thinkfix.formats.detection import sample
from thinkfix.formats.locations import env_dir
from thinkfix.formats.quick import STRING, Canonical, iso_stamp, one_model, one_object, tail
from thinkfix.formats.records import Context, Record, Site
from thinkfix.formats.repairs import CodexMode, PlacementKind
from thinkfix.formats.turn_shapes import args_text, exit_failed, text_parts, tool_result
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.formats.values import fmt_path, get_path

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

    # annotations only: a scan loads no repair planner or JSON edit (#26 item 3)
    from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.codex_items import (
    ASSISTANT_ITEM,
    BARE_ITEMS,
    CALL_ITEMS,
    CALLS,
    OUTPUTS,
    PARTIAL_ENVELOPE,
    QUIET_MARKERS,
    TURN_CONTEXT,
    boundary,
    copies_of,
    envelope_of,
    is_assistant,
    item_of,
    legacy_of,
    reasoning_events,
    reasoning_item,
    reasoning_text,
    slots,
)


# A first line too long to read whole (a session_meta with huge instructions): Codex
# writes `timestamp` and `type` before the `payload` object.
class Codex(FormatBase):
    id = "codex"
    description = "OpenAI Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)"
    detection = (
        "JSONL envelopes {timestamp, type, payload} with type session_meta, "
        "response_item, event_msg, turn_context or compacted (also bare response "
        "items of early rollouts)"
    )
    placement = (
        "a response_item of type reasoning (content reasoning_text, no id, no "
        "encrypted_content) and its agent_reasoning event inserted before the message; "
        "the agent_message event copy is fixed too; sessions on OpenAI-hosted models "
        "(model_provider openai) get a sidecar instead (--codex-mode auto, the "
        "default; insert always inserts; sidecar never does)"
    )
    jsonl_only = True
    # An assistant message item as Codex writes it (the scan's block counter): the envelope's
    # timestamp first; the model is the turn's (the context's).
    canonical = Canonical(
        rb"\n\{"
        + iso_stamp()
        + rb',"type":"response_item","payload":\{"type":"message",'
        + rb'(?:"id":'
        + STRING
        + rb',)?"role":"assistant",'
        + tail(b"tail", rb"\}")
        + rb"(?=\n)",
        ("payload", False),
        linestructs.CODEX,
    )
    # Supersets of the lines the context follows; update_context checks the parsed line.
    context_markers = (
        b"session_meta",
        b"turn_context",
        b"user_message",
        b'"reasoning"',
        b'"assistant"',
        b'"user"',
    )

    locations_source = (
        "$CODEX_HOME/sessions (and archived_sessions), else ~/.codex/sessions: openai/codex "
        "codex-rs/core find_codex_home (CODEX_HOME, default ~/.codex) and rollout "
        "SESSIONS_SUBDIR/ARCHIVED_SESSIONS_SUBDIR; docs/formats.md"
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        root = env_dir(env, ("CODEX_HOME",), home, ".codex")
        return [root / "sessions", root / "archived_sessions"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        objects = s.objects
        if s.partial and not s.pretty:
            return 0.7 if PARTIAL_ENVELOPE.match(head) else 0.0
        if not objects or s.pretty:
            return 0.0
        if any(
            o.get("type") in ("session_meta", "response_item", "turn_context") and envelope_of(o)
            for o in objects
        ):
            return 0.95
        if any(envelope_of(o) for o in objects):
            return 0.85
        return legacy_of(objects)

    def context_markers_for(self, ctx: Context) -> tuple[bytes, ...]:
        return self.context_markers if "reasoning" in ctx.extra else QUIET_MARKERS

    def keeps_context(self, raw: bytes, ctx: Context) -> bool:
        """A turn_context that names the model already in use (or none) changes nothing."""
        if TURN_CONTEXT.match(raw) is None or not one_object(raw):
            return False
        model = one_model(raw)
        return model is not None and (not model[0] or model[0] == ctx.model)

    def quick_messages(self, raw: bytes, ctx: Context) -> tuple[str | None, ...] | None:
        """A response_item holding one assistant message (its model is the turn's)."""
        if (
            not one_object(raw)
            or raw.count(b'"assistant"') != 1
            or ASSISTANT_ITEM.match(raw) is None
        ):
            return None
        return (None,)

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        o = record.obj
        if o is None:
            return ctx, ctx
        raw_payload = o.get("payload")
        payload: dict[str, Any] = raw_payload if isinstance(raw_payload, dict) else {}
        kind = o.get("type")
        if kind == "session_meta":
            extra = {**ctx.extra, "model_provider": payload.get("model_provider")}
            extra.pop("reasoning", None)
            new = Context(
                as_str(payload.get("id")) or as_str(payload.get("session_id")), ctx.model, extra
            )
            return new, new
        if kind == "turn_context":
            model = as_str(payload.get("model")) or ctx.model
            if model == ctx.model:  # most turns keep the model: no new context to build
                return ctx, ctx
            new = ctx._replace(model=model)
            return new, new
        if kind == "event_msg" and payload.get("type") == "user_message":
            return self._cleared(ctx), self._cleared(ctx)
        item, _ = item_of(o)
        if item is None:
            return ctx, ctx
        if item.get("type") == "reasoning":
            text = join_texts((ctx.extra.get("reasoning"), reasoning_text(item)))
            new = ctx._replace(extra={**ctx.extra, "reasoning": text})
            return new, new
        if item.get("role") in ("assistant", "user"):
            return ctx, self._cleared(ctx)
        return ctx, ctx

    @staticmethod
    def _cleared(ctx: Context) -> Context:
        if "reasoning" not in ctx.extra:
            return ctx
        extra = dict(ctx.extra)
        del extra["reasoning"]
        return ctx._replace(extra=extra)

    def messages(self, record: Record) -> Iterator[Message]:
        o = record.obj
        if o is None:
            return
        item, base = item_of(o)
        if item is not None:
            if is_assistant(item):
                yield Message(
                    base,
                    record.index,
                    partial(slots, item, base),
                    native=as_str(record.ctx.extra.get("reasoning")),
                    message_id=as_str(item.get("id")),
                )
            return
        history = get_path(o, ("payload", "replacement_history"))
        if o.get("type") == "compacted" and isinstance(history, list):
            pending: list[Any] = []
            for j, h in enumerate(history):
                if not isinstance(h, dict):
                    continue
                if h.get("type") == "reasoning":
                    pending.append(reasoning_text(h))
                elif is_assistant(h):
                    hpath = ("payload", "replacement_history", j)
                    yield Message(
                        hpath,
                        record.index,
                        partial(slots, h, hpath),
                        native=join_texts(pending),
                        message_id=as_str(h.get("id")),
                    )
                    pending = []
                elif h.get("role") == "user":
                    pending = []

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        from thinkfix.formats.jsonedit import InsertItems

        site = draft.site
        record = plan.records[site.record_index]
        in_history = site.path[:2] == ("payload", "replacement_history")
        if not in_history:
            self._fix_copies(plan, draft)
        if not draft.segments:
            place_nothing(draft)
            return
        mode = plan.options.codex_mode
        if mode is CodexMode.SIDECAR or (mode is CodexMode.AUTO and self._hosted(plan)):
            place_elsewhere(
                draft,
                PlacementKind.SIDECAR,
                "sidecar (the session runs on OpenAI-hosted models, which replay "
                "reasoning items by encrypted_content)",
            )
            return
        item = reasoning_item(draft.segments)
        if in_history:
            j = site.path[2]
            assert isinstance(j, int)
            draft.edit(site.record_index, InsertItems(site.path[:2], j, (item,)))
            draft.place(
                PlacementKind.BLOCK,
                f"reasoning item before {fmt_path(site.path[:3])} in the compacted history",
                block=(site.record_index, site.path[:2], j),
            )
            return
        o = record.data
        if site.path[:1] == ("payload",):
            stamp = o.get("timestamp")
            draft.insert_record(
                site.record_index, {"timestamp": stamp, "type": "response_item", "payload": item}
            )
            for event in reasoning_events(draft.segments):
                draft.insert_record(
                    site.record_index, {"timestamp": stamp, "type": "event_msg", "payload": event}
                )
        elif o.get("type") == "message":
            draft.insert_record(site.record_index, item)
        else:
            place_elsewhere(
                draft,
                PlacementKind.MANIFEST,
                "repair manifest only (a line shape with no reasoning item)",
            )
            return
        draft.place(
            PlacementKind.RECORD,
            "reasoning response_item line before the message"
            + (" (and its agent_reasoning event)" if site.path[:1] == ("payload",) else ""),
        )

    # A response's text and its tool calls are separate items: `calls_after` pairs them.
    calls_later = True

    def calls_after(self, records: Iterable[Record], indices: Collection[int]) -> frozenset[int]:
        """The assistant messages (records at `indices`) followed by a tool call item
        (`function_call`, `custom_tool_call`, `local_shell_call`, ...: codex-rs
        protocol/src/models.rs `ResponseItem`) before the next message or turn: Codex writes
        a response's output items in order, the text's message item before its calls. The
        look-ahead ends at the first record past the last of `indices` with none waiting."""
        found: set[int] = set()
        waiting: list[int] = []
        last = max(indices, default=-1)
        for r in records:
            i = r.index
            if i > last and not waiting:
                break
            if (i not in indices and not waiting) or r.obj is None:
                continue
            o = r.obj
            item, _ = _turn_item(o)
            if item is not None and item.get("type") in CALL_ITEMS:
                found.update(waiting)
                waiting = []
            elif boundary(o) or o.get("type") == "compacted":
                waiting = []
            if i in indices:
                waiting.append(i)
        return frozenset(found)

    def plan_emptied(self, plan: Plan, draft: Draft) -> None:
        """As for every format; and an output_text dropped beside other parts must not leave
        an `agent_message` copy empty (the copy equal to it alone): that is refused too."""
        from thinkfix.formats.planner import REFUSED

        if self._becomes_reasoning(plan, draft):
            return
        super().plan_emptied(plan, draft)
        if draft.failure is None and draft.dropped and draft.mirrors:
            draft.failure = (
                f"{REFUSED} its event copy ({fmt_path(draft.mirrors[0][1])}) "
                "holds only this text and would be left empty"
            )

    def shown_by_later_call(self, site: Site) -> bool:
        """An enveloped message's `output_text` (the line can become a reasoning item); a
        bare item of a legacy rollout is still refused."""
        return (
            super().shown_by_later_call(site)
            and site.path[:2] == ("payload", "content")
            and site.path[-1:] == ("text",)
            and len(site.path) == 4
        )

    def _becomes_reasoning(self, plan: Plan, draft: Draft) -> bool:
        """A message that was only reasoning before its tool call (rule 4's evidence from the
        call item after it) becomes the reasoning item Codex itself writes when a response
        has no text: its line holds the reasoning item, and its `agent_message` event copy
        becomes the `agent_reasoning` event. Only where reasoning items are inserted."""
        from thinkfix.formats.jsonedit import SetValue

        site = draft.site
        base = site.path[:-3]
        mode = plan.options.codex_mode
        if (
            not self.shown_by_later_call(site)
            or not draft.segments
            or mode is CodexMode.SIDECAR
            or (mode is CodexMode.AUTO and self._hosted(plan))
            or keeps_visible(plan.records[site.record_index].data, site)
        ):
            return False
        draft.edit(site.record_index, SetValue(base, reasoning_item(draft.segments)))
        events = iter(reasoning_events(("\n\n".join(draft.segments),)))
        for j, path in copies_of(plan, site):
            event = next(events, None) if path == ("payload", "message") else None
            if event is not None:
                draft.edit(j, SetValue(("payload",), event))
            else:
                draft.mirror(j, path, draft.repair.visible)
        draft.dropped = True
        draft.place(
            PlacementKind.RECORD,
            "the message's line became its reasoning item (the message held only reasoning "
            "before its tool call)",
        )
        return True

    @staticmethod
    def _hosted(plan: Plan) -> bool:
        def provider() -> Any:
            found = None
            for r in plan.records_with(b"session_meta"):
                if r.obj is not None and r.obj.get("type") == "session_meta":
                    found = get_path(r.obj, ("payload", "model_provider"), found)
            return found

        return bool(plan.fact("codex:model_provider", provider) == "openai")

    @staticmethod
    def _fix_copies(plan: Plan, draft: Draft) -> None:
        """Fix the event copies of the message text (agent_message, task_complete, ...)."""
        for j, path in copies_of(plan, draft.site):
            draft.mirror(j, path, draft.repair.visible)

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- turns: the session as `show` reads it --------------------------------------------------
# Codex rollout lines as turns, from the `response_item`s (what the model saw).
#
# The `event_msg` lines are the UI's copies of the same messages and reasoning, so they
# are left out rather than shown twice.


_ROLES = {
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "developer": Role.SYSTEM,
    "system": Role.SYSTEM,
}


def _turn_item(o: dict[str, Any]) -> tuple[dict[str, Any] | None, Path]:
    if o.get("type") == "response_item":
        payload = o.get("payload")
        return (payload, ("payload",)) if isinstance(payload, dict) else (None, ())
    if "payload" not in o and o.get("type") in BARE_ITEMS:  # early rollouts: bare items
        return o, ()
    return None, ()


def _group(item: dict[str, Any]) -> str:
    """What makes consecutive items one message on screen: a response's reasoning,
    text and calls are separate items, sharing a turn id only in newer rollouts."""
    for key in ("metadata", "internal_chat_message_metadata_passthrough"):
        meta = item.get(key)
        if isinstance(meta, dict) and as_str(meta.get("turn_id")):
            return str(meta["turn_id"])
    return "turn"


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    timestamp = as_str(o.get("timestamp"))
    if o.get("type") == "compacted" and isinstance(o.get("payload"), dict):
        message = as_str(o["payload"].get("message")) or "(earlier history replaced)"
        yield Turn(Role.SYSTEM, (Part(PartKind.TEXT, message),), timestamp, note="compacted")
        return
    item, base = _turn_item(o)
    if item is None:
        return
    kind = item.get("type", "message")
    model = record.ctx.model
    if kind == "message" and item.get("role") in _ROLES:
        role = _ROLES[item["role"]]
        yield Turn(
            role,
            tuple(text_parts(item.get("content"), base, ("input_image",))),
            timestamp,
            model if role is Role.ASSISTANT else None,
            _group(item),
        )
    elif kind == "reasoning":
        text = reasoning_text(item) or ""
        sealed = bool(item.get("encrypted_content"))
        yield Turn(
            Role.ASSISTANT,
            (Part(PartKind.THINKING, text, signed=sealed, redacted=sealed and not text),),
            timestamp,
            model,
            _group(item),
        )
    elif kind == "function_call" or kind in CALLS:
        name, key = CALLS.get(kind, (None, "arguments"))
        call = Part(
            PartKind.TOOL_CALL,
            args_text(item.get(key)),
            name=as_str(item.get("name")) or name or kind,
            call_id=as_str(item.get("call_id")),
        )
        yield Turn(Role.ASSISTANT, (call,), timestamp, model, _group(item))
    elif kind in OUTPUTS:
        output = item.get("output")
        yield Turn(
            Role.TOOL,
            (tool_result(output, call_id=item.get("call_id"), error=exit_failed(output)),),
            timestamp,
        )
