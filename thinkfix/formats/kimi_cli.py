"""Kimi CLI (MoonshotAI/kimi-cli): `$KIMI_SHARE_DIR/sessions/<md5 of the work dir>/<id>/context.jsonl`.

One line per entry (src/kimi_cli/soul/context.py, `Context`): a `kosong` `Message` dumped
with `model_dump_json(exclude_none=True)`: `{role: user|assistant|tool|system, content,
tool_calls, tool_call_id}`, plus the runtime's own entries `{"role": "_system_prompt",
"content"}`, `{"role": "_checkpoint", "id"}` and `{"role": "_usage", "token_count"}`. A
message whose content is a single text part is written as a plain string; otherwise the
content is a list of parts (packages/kosong/src/kosong/message.py): `{type: "text", text}`,
`{type: "think", think, encrypted}` (reasoning; `encrypted` holds a provider signature),
images, audio. `revert_to` and `clear` rotate the file to `context_<n>.jsonl`; sub-agents
keep their own `subagents/<id>/context.jsonl`. `wire.jsonl` beside it is what the UI showed,
replayed on every resume but never sent to the model: its own format (`kimi_wire`).

Placement: `Context.restore` replays these messages to the model on `--continue`, and the
Kimi provider (`kosong/chat_provider/kimi.py`, `_convert_message`) sends the `think` parts of
an assistant message as its `reasoning_content`, the field Kimi K2 expects back. So the
reasoning goes into a `{type: "think", think, encrypted: null}` part before the text part; a
string content becomes the part list Kimi writes for a thinking answer. (The Anthropic
provider drops a think part without `encrypted`, so replay there is unaffected.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, block_reasoning, place_nothing
from thinkfix.formats.detection import sample, share
from thinkfix.formats.jsonedit import SetValue
from thinkfix.formats.locations import env_dir
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.qwen_code import drop_emptied_part, place_part
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import (
    DEFAULT_OPTIONS,
    ApplyOptions,
    Edits,
    Placement,
    PlacementKind,
    Repair,
    TextSlot,
)
from thinkfix.formats.turn_shapes import tool_call, tool_result
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import fmt_path, text_or_parts, typed_parts

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

#: The runtime's own entries, never messages.
_INTERNAL = frozenset({"_system_prompt", "_checkpoint", "_usage"})
_ROLES = frozenset({"user", "assistant", "tool", "system"})


def _entry(o: Any) -> bool:
    if not isinstance(o, dict):
        return False
    role = o.get("role")
    if role in _INTERNAL:
        return True
    return role in _ROLES and ("content" in o or "tool_calls" in o)


def _kimi_evidence(o: dict[str, Any]) -> bool:
    """What only Kimi writes: its internal entries, or `think` parts."""
    if o.get("role") in _INTERNAL:
        return True
    content = o.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "think" and "think" in p for p in content
    )


def _slots(m: dict[str, Any]) -> list[TextSlot]:
    """The text parts; a content kosong never writes (`Message` validates a string or a list
    of parts with a string `type`, `ContentPart`'s validator) raises `UnexpectedShape`."""
    content = text_or_parts(m.get("content"), ("content",))
    tools = bool(m.get("tool_calls"))  # calls follow the text: rule 4's evidence
    if isinstance(content, str):
        return [TextSlot(("content",), content, tool_after=tools)]
    if content is None:
        return []
    typed_parts(content, ("content",), texts=_TEXT_FIELDS)
    return [
        TextSlot(("content", i, "text"), p["text"], tool_after=tools)
        for i, p in enumerate(content)
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    ]


#: The text field of kosong's text and think parts (`TextPart.text`, `ThinkPart.think`).
_TEXT_FIELDS = {"text": "text", "think": "think"}

#: Where a string content's text is once it became a part list (after its think part).
_STRING_TEXT = ("content", 1, "text")


def _is_think(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "think"


def _unsigned_think(part: Any) -> bool:
    return _is_think(part) and isinstance(part.get("think"), str) and not part.get("encrypted")


def _think(text: str) -> dict[str, Any]:
    """A think part as kosong dumps one (`ThinkPart.model_dump()` keeps `encrypted: None`)."""
    return {"type": "think", "think": text, "encrypted": None}


class KimiCli(FormatBase):
    id = "kimi-cli"
    description = (
        "Kimi CLI contexts: ~/.kimi/sessions/<md5 of work dir>/<session>/context.jsonl "
        "(kosong messages with think/text parts, _checkpoint and _usage entries)"
    )
    detection = (
        "JSONL of {role, content} messages with Kimi's own entries (_system_prompt, "
        "_checkpoint, _usage) or think parts, or such messages under a .kimi/sessions path"
    )
    placement = (
        "a {type: think, think, encrypted: null} part before the text part (appended to an "
        "unsigned one right before it; a string content becomes a part list): replayed by "
        "the Kimi provider as reasoning_content"
    )
    locations_source = (
        "$KIMI_SHARE_DIR, else ~/.kimi (MoonshotAI/kimi-cli src/kimi_cli/share.py "
        "get_share_dir); sessions/<md5 of the work dir>/<id>/context.jsonl "
        "(src/kimi_cli/metadata.py WorkDirMeta.sessions_dir, src/kimi_cli/session.py)"
    )
    jsonl_only = True

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [env_dir(env, ("KIMI_SHARE_DIR",), home, ".kimi") / "sessions"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        objects = s.objects
        if not s.values or not objects or share(objects, _entry) < 0.8:
            return 0.0
        if any(_kimi_evidence(o) for o in objects):
            return 0.95
        where = path.replace("\\", "/")
        return 0.9 if "/.kimi/sessions/" in where or "/.kimi/" in where else 0.0

    def messages(self, record: Record) -> Iterator[Message]:
        m = record.obj
        if m is None or m.get("role") != "assistant":
            return
        yield Message(
            (),
            record.index,
            partial(_slots, m),
            native=partial(block_reasoning, m.get("content"), types=("think",), key="think"),
        )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        if not draft.segments:
            place_nothing(draft)
            return
        site = draft.site
        think = _think("\n\n".join(draft.segments))
        if site.path == ("content",):
            # a single text part is dumped as a string: write the parts Kimi writes for an
            # answer with thinking, in place of the text edit set_text made
            draft.edits = [
                (
                    site.record_index,
                    SetValue(("content",), [think, {"type": "text", "text": draft.repair.visible}]),
                )
            ]
            draft.place(
                PlacementKind.BLOCK,
                "think part content[0] (the string content became a part list)",
                block=(site.record_index, ("content",), 0),
            )
            return
        place_part(
            self,
            plan,
            draft,
            think,
            "think",
            _unsigned_think,
            "think part (replayed as reasoning_content)",
        )

    def edits(
        self,
        records: Sequence[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[Edits, list[Placement]]:
        """As planned, with the text of a string content found where the list put it."""
        edits, placements = super().edits(records, repairs, options)
        moved = fmt_path(_STRING_TEXT)
        return edits, [
            p._replace(text_path=moved)
            if p.applied
            and p.kind is PlacementKind.BLOCK
            and p.site.path == ("content",)
            and p.text_path is not None
            else p
            for p in placements
        ]

    def plan_emptied(self, plan: Plan, draft: Draft) -> None:
        """An all-reasoning text. Beside tool calls a message needs no text: a string content
        becomes the lone think part Kimi writes when the model thought and then called a
        tool; a text part goes. Otherwise it is refused, as everywhere."""
        site = draft.site
        calls = bool(plan.records[site.record_index].data.get("tool_calls"))
        if site.path == ("content",) and calls and draft.segments:
            think = _think("\n\n".join(draft.segments))
            draft.edits = [(site.record_index, SetValue(("content",), [think]))]
            draft.dropped = True
            draft.place(
                PlacementKind.BLOCK,
                "think part content[0] (the string content became a part list)",
                block=(site.record_index, ("content",), 0),
            )
            return
        drop_emptied_part(self, plan, draft, _is_think, calls=calls)

    def turns(self, record: Record) -> Iterator[Turn]:
        m = record.obj
        if m is None:
            return
        role = m.get("role")
        content = m.get("content")
        if role == "tool":
            yield Turn(
                Role.TOOL,
                (tool_result(content_text(content), call_id=m.get("tool_call_id")),),
            )
            return
        if role not in ("user", "assistant", "system", "_system_prompt"):
            return
        parts = _parts(content)
        for call in m.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                fn = call["function"]
                parts.append(tool_call(fn.get("arguments"), fn.get("name"), call.get("id")))
        if parts:
            kind = {"user": Role.USER, "assistant": Role.ASSISTANT}.get(role, Role.SYSTEM)
            yield Turn(kind, tuple(parts))


def content_text(content: Any) -> str:
    """A kosong content's text: the string, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [Part(PartKind.TEXT, content, path=("content",))] if content else []
    parts = []
    for i, p in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(p, dict):
            continue
        think = think_part(p)
        if think is not None:
            parts.append(think)
        elif p.get("type") == "text" and isinstance(p.get("text"), str):
            parts.append(Part(PartKind.TEXT, p["text"], path=("content", i, "text")))
    return parts


def think_part(p: dict[str, Any]) -> Part | None:
    """A kosong think part as `show` prints it (None for another part, or an empty unsigned
    one); `encrypted` holds a provider signature."""
    if p.get("type") != "think" or not isinstance(p.get("think"), str):
        return None
    signed = bool(p.get("encrypted"))
    if not (p["think"].strip() or signed):
        return None
    return Part(PartKind.THINKING, p["think"], signed=signed, redacted=not p["think"])
