"""pi-coding-agent sessions (v1-v3) and OpenClaw, which embeds pi and writes the same files.

`~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl` and
`~/.openclaw/agents/<agent>/sessions/<uuid>.jsonl` (plus OpenClaw's
`.jsonl.deleted.<ts>` / `.jsonl.reset.<ts>` copies); also a single pretty-printed
AssistantMessage `.json`. The reasoning becomes a `thinking` block before the
text block. `thinkingSignature` is only a wire-field name for
`api: openai-completions` (pi replays thinking only when it names one), so it is
set there, to the field the file already uses; anywhere else it would be a real
signature, so it is left out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats import linestructs
from thinkfix.formats.base import Message
from thinkfix.formats.common import (
    FormatBase,
    as_str,
    block_reasoning,
    content_slots,
    place_elsewhere,
)
from thinkfix.formats.detection import has_keys, sample, share
from thinkfix.formats.locations import env_dir
from thinkfix.formats.quick import (
    FREE,
    KEY,
    MS_STAMP,
    PLAIN,
    Canonical,
    iso_stamp,
    model_name,
    nested_message_model,
    once,
    one_object,
    tail,
)
from thinkfix.formats.records import Context, Record
from thinkfix.formats.repairs import PlacementKind
from thinkfix.formats.turn_shapes import (
    Signed,
    block_parts,
    iso,
    output_text,
    split_results,
    tool_result,
)
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import get_path

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

    from thinkfix.formats.planner import Draft, Plan  # annotations only: a scan loads no planner

WIRE_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
# On these APIs `textSignature` is a message id, not a signature; anywhere else it is one.
_UNSIGNED_TEXT_APIS = {"openai-responses", "openai-codex-responses", "azure-openai-responses"}
_ROLES = {
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
}
_ENTRY_TYPES = {
    "session",
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
}


def entry_message(o: dict[str, Any]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """The AgentMessage a record holds: a `message` entry, or a bare message document."""
    if o.get("type") == "message":
        msg = o.get("message")
        return (msg, ("message",)) if isinstance(msg, dict) else (None, ())
    if "role" in o and "content" in o and "type" not in o:
        return o, ()
    return None, ()


def _assistant_like(o: dict[str, Any]) -> bool:
    return (
        o.get("role") == "assistant"
        and isinstance(o.get("content"), list)
        and any(k in o for k in ("api", "provider", "stopReason"))
    )


class Pi(FormatBase):
    id = "pi"
    description = (
        "pi-coding-agent sessions v1-v3 and OpenClaw (including .jsonl.deleted.<ts> "
        "and .jsonl.reset.<ts> copies), or one AssistantMessage .json"
    )
    detection = (
        "a session header {type: session, id, cwd, ...} and entries {type: message, "
        "message: {role, content[], api, provider, stopReason}}"
    )
    placement = (
        "a thinking block before the text block, in the same content list; for api "
        "openai-completions thinkingSignature names the wire field the file already uses "
        "(reasoning_content by default), otherwise no signature"
    )
    context_markers = ()
    # An assistant line as pi writes it (the scan's block counter): `type` first, the entry's
    # ISO timestamp, then the message (role first, model after the content, its own
    # millisecond timestamp last).
    canonical = Canonical(
        # the message's own stamp ends the line, exactly as the rest of the pattern reads it: a
        # line that ends otherwise fails at once (without it, a long line of many `"model":`
        # members backtracks between the two free parts: seconds for 100 KB)
        rb'\n\{"type":"message"(?='
        + FREE
        + rb',"timestamp":[1-9][0-9]{11,12}\}\}\n)(?:,'
        + KEY
        + b":"
        + PLAIN
        + rb")*,"
        + iso_stamp()
        + rb',"message":\{"role":"assistant",'
        + tail(b"tail_a", b",")
        + rb'"model":'
        + model_name()
        + b","
        + tail(b"tail_b", b",")
        + MS_STAMP
        + rb"\}\}(?=\n)",
        ("message", True),
        linestructs.PI,
    )

    locations_source = (
        "pi: $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions (badlogic/pi-mono "
        "packages/coding-agent/src/config.ts getAgentDir); OpenClaw: "
        "$OPENCLAW_STATE_DIR (legacy $CLAWDBOT_STATE_DIR), else ~/.openclaw, then "
        "agents/<agentId>/sessions (openclaw/openclaw src/config/paths.ts resolveStateDir, "
        "docs/formats.md); legacy ~/.clawdbot"
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        out = [env_dir(env, ("PI_CODING_AGENT_DIR",), home, ".pi/agent") / "sessions"]
        states = [env_dir(env, ("OPENCLAW_STATE_DIR", "CLAWDBOT_STATE_DIR"), home, ".openclaw")]
        if states[0] == home / ".openclaw":
            states.append(home / ".clawdbot")
        for state in states:
            agents = state / "agents"
            found = sorted(agents.glob("*/sessions")) if agents.is_dir() else []
            out.extend(found or [agents / "main" / "sessions"])
        return out

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        objects = s.objects
        if any(
            o.get("type") == "session" and "id" in o and ("cwd" in o or "version" in o)
            for o in objects
        ):
            return 0.95
        messages = [m for m in (entry_message(o)[0] for o in objects) if m is not None]
        if (
            objects
            and share(objects, lambda o: as_str(o.get("type")) in _ENTRY_TYPES) >= 0.5
            and any(as_str(m.get("role")) in _ROLES for m in messages)
            # pi's messages keep their text in `content`; claw-code's `message` entries
            # (`blocks`) share the envelope but not the body (#21 item 1: claim only what
            # this reader can read)
            and all("content" in m for m in messages)
        ):
            return 0.9 if any(_assistant_like(m) for m in messages) else 0.75
        if isinstance(s.doc, dict) and _assistant_like(s.doc):
            return 0.85
        if s.partial and has_keys(head, "role", "content", "api", "stopReason"):
            return 0.7
        return 0.0

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        o = record.obj
        if o is not None and o.get("type") == "session":
            new = Context(session_id=as_str(o.get("id")))
            return new, new
        return ctx, ctx

    def quick_messages(self, raw: bytes, ctx: Context) -> tuple[str | None, ...] | None:
        """A `message` entry as pi writes it (`type` first): its one `"message":{...}` has role
        assistant, the word nowhere else; the model is the message's `model`, its only one."""
        if (
            not raw.startswith(b'{"type":"message",')
            or not one_object(raw)
            or once(raw, b'"assistant"') < 0
            or b'"role":"assistant"' not in raw
        ):
            return None
        return nested_message_model(raw)

    def messages(self, record: Record) -> Iterator[Message]:
        o = record.obj
        if o is None:
            return
        msg, base = entry_message(o)
        if msg is None or msg.get("role") != "assistant":
            return
        signed = () if as_str(msg.get("api")) in _UNSIGNED_TEXT_APIS else ("textSignature",)
        yield Message(
            base,
            record.index,
            partial(content_slots, msg, base, signed=signed),
            native=partial(block_reasoning, msg.get("content")),
            message_id=as_str(o.get("id")) if base else None,
            model=as_str(msg.get("model")),
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        site = draft.site
        if len(site.path) < 3 or not isinstance(site.path[-2], int):
            place_elsewhere(
                draft,
                PlacementKind.MANIFEST,
                "repair manifest only (string content has no block list)",
            )
            return
        msg = get_path(plan.records[site.record_index].data, site.path[:-3])
        api = msg.get("api")
        blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": s} for s in draft.segments]
        what = "thinking block"
        if api == "openai-completions":
            provider = msg.get("provider")
            field = (
                plan.fact(f"pi:wire-field:{provider}", lambda: self._wire_field(plan, provider))
                or plan.options.pi_default_signature_field
            )
            for block in blocks:
                block["thinkingSignature"] = field
            what = f"thinking block (thinkingSignature {field!r}: the wire field, not a signature)"
        elif api == "anthropic-messages":
            what = "unsigned thinking block (pi replays it to Anthropic as plain text)"
        self.place_blocks(draft, blocks, what)

    def _wire_field(self, plan: Plan, provider: Any) -> str | None:
        """The wire field the file's openai-completions thinking blocks name (same provider first)."""
        any_provider = None
        for record in plan.records_with(b"thinkingSignature"):
            for message in self._messages(record):
                msg = get_path(record.data, message.path)
                if not isinstance(msg, dict) or msg.get("api") != "openai-completions":
                    continue
                for block in msg.get("content") or ():
                    field = block.get("thinkingSignature") if isinstance(block, dict) else None
                    if field in WIRE_FIELDS:
                        if msg.get("provider") == provider:
                            return str(field)
                        any_provider = any_provider or str(field)
        return any_provider

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints (module-level `turns`)."""
        return turns(record)


# --- turns: the session as `show` reads it --------------------------------------------------
# pi / OpenClaw entries as turns: messages by role, plus compaction and branch summaries.


_NORMAL_STOPS = {None, "stop", "toolUse"}
_SUMMARIES = {"compaction": "compaction", "branch_summary": "branch summary"}


def _signed(api: Any) -> Signed:
    # For openai-completions `thinkingSignature` names a wire field; elsewhere it signs.
    if api == "openai-completions":
        return lambda block: False
    return lambda block: bool(block.get("thinkingSignature"))


def turns(record: Record) -> Iterator[Turn]:
    o = record.obj
    if o is None:
        return
    if o.get("type") in _SUMMARIES and as_str(o.get("summary")):
        yield Turn(
            Role.SYSTEM,
            (Part(PartKind.TEXT, o["summary"]),),
            iso(o.get("timestamp")),
            note=_SUMMARIES[o["type"]],
        )
        return
    if o.get("type") == "custom_message" and o.get("display"):
        text = output_text(o.get("content"))
        if text:
            yield Turn(
                Role.SYSTEM,
                (Part(PartKind.TEXT, text),),
                iso(o.get("timestamp")),
                note=as_str(o.get("customType")),
            )
        return
    msg, base = entry_message(o)
    if msg is None:
        return
    role = msg.get("role")
    timestamp = iso(o.get("timestamp")) or iso(msg.get("timestamp"))
    content = base + ("content",)
    if role == "assistant":
        stop = msg.get("stopReason")
        note = None if stop in _NORMAL_STOPS else f"stop: {stop}"
        if as_str(msg.get("errorMessage")):
            note = f"{note or 'error'}: {msg['errorMessage']}"
        yield Turn(
            Role.ASSISTANT,
            tuple(block_parts(msg.get("content"), content, signed=_signed(msg.get("api")))),
            timestamp,
            as_str(msg.get("model")),
            as_str(o.get("id")),
            note=note,
        )
    elif role == "user":
        yield from split_results(
            Role.USER, block_parts(msg.get("content"), content), timestamp=timestamp
        )
    elif role == "toolResult":
        yield Turn(
            Role.TOOL,
            (
                tool_result(
                    msg.get("content"),
                    msg.get("toolName"),
                    msg.get("toolCallId"),
                    error=bool(msg.get("isError")),
                ),
            ),
            timestamp,
        )
    elif role == "bashExecution":
        command = as_str(msg.get("command")) or ""
        output = output_text(msg.get("output"))
        failed = msg.get("exitCode") not in (None, 0) or bool(msg.get("cancelled"))
        yield Turn(
            Role.TOOL,
            (
                Part(
                    PartKind.TOOL_RESULT,
                    f"$ {command}\n{output}".rstrip(),
                    name="bash",
                    error=failed,
                ),
            ),
            timestamp,
        )
    elif role in ("branchSummary", "compactionSummary") and as_str(msg.get("summary")):
        yield Turn(
            Role.SYSTEM,
            (Part(PartKind.TEXT, msg["summary"]),),
            timestamp,
            note="compaction" if role == "compactionSummary" else "branch summary",
        )
