"""What the format modules share: paths, message walking, and the repair planner.

A format module describes its assistant messages (`messages`) and, per repair,
which edits to make and where the reasoning went (`plan_repair`). Everything
else (sites, message counts, staleness and signature checks, applying edits
safely, inserting records, renumbering, placements) is done once, here.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from thinkfix.formats.base import Message, SessionFormat, wrong_types
from thinkfix.formats.reader import bounded_lines, iter_jsonl, read_auto
from thinkfix.formats.records import Context, Record, Site
from thinkfix.formats.repairs import (
    DEFAULT_OPTIONS,
    ApplyOptions,
    Edits,
    Placement,
    PlacementKind,
    Repair,
    TextSlot,
)
from thinkfix.formats.strangers import names_turn, unread_beside, unread_turn
from thinkfix.formats.values import fmt_path, get_path, parts_list, text_or_parts, typed_parts

if TYPE_CHECKING:
    # The editing side (plans, JSON edits) loads when a repair plans one: a scan reads
    # messages and never pays for it (#26 item 3).
    from thinkfix.formats.planner import Draft, Plan
    from thinkfix.formats.turns import Path

#: Block types that hold reasoning: what remains beside them is still "nothing visible".
REASONING_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning", "reasoning_text"})
#: Block types whose `text` is visible text (an empty one shows nothing).
TEXT_TYPES = frozenset({"text", "output_text", "input_text"})


def shows_something(block: Any) -> bool:
    """Does a content block give the reader something besides reasoning (text, a tool call)?"""
    if not isinstance(block, dict):
        return True
    kind = block.get("type")
    if kind in REASONING_TYPES:
        return False
    text = block.get("text")
    return (
        not (kind in TEXT_TYPES or kind is None) or not isinstance(text, str) or bool(text.strip())
    )


def placeholder(segments: Sequence[str]) -> str:
    """The visible text an all-reasoning message gets in archive mode: what was moved, where.

    Never empty (the API rejects an empty text block and viewers drop the message), free
    of delimiters (a re-scan finds nothing), and plain enough to read in any viewer.
    """
    chars = sum(len(s) for s in segments)
    return (
        f"[thinkfix: this message was all reasoning ({chars:,} characters); "
        "it was moved to the thinking block above]"
    )


def join_texts(parts: Iterable[Any]) -> str | None:
    """Non-empty strings joined by a blank line; None when there are none."""
    texts = [p for p in parts if isinstance(p, str) and p.strip()]
    return "\n\n".join(texts) if texts else None


def as_str(value: Any) -> str | None:
    """A stored field's string, or None when it is absent or of another type."""
    return value if isinstance(value, str) else None


#: Content-block types that are tool calls: Anthropic and Claude Code (`tool_use`,
#: `server_tool_use`), pi and OpenClaw (`toolCall`), Responses-style lists (`function_call`).
TOOL_CALL_BLOCKS = ("tool_use", "server_tool_use", "toolCall", "tool_call", "function_call")


def has_tool_call(blocks: Any) -> bool:
    """Does a content-block list hold a tool call block?"""
    return isinstance(blocks, list) and any(
        isinstance(b, dict) and b.get("type") in TOOL_CALL_BLOCKS for b in blocks
    )


def block_slots(
    blocks: Any, base: Path, *, types: Sequence[str] = ("text",), signed: Sequence[str] = ()
) -> list[TextSlot]:
    """Text slots of a content-block list: `{"type": <types>, "text": str}` blocks.

    A block carrying any of the `signed` keys (non-empty) is marked signed; one with a
    tool-call block after it is marked `tool_after`. Content that no runtime writes (a block
    that is no object or has no string `type`, a text block whose text is no string, an
    object for the list) raises `UnexpectedShape`: skipped, its leak was counted clean.
    """
    blocks = parts_list(blocks, base)
    if blocks is None:
        return []
    typed_parts(blocks, base, texts=dict.fromkeys(types, "text"))
    slots = []
    last_tool = -1
    for i, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") in TOOL_CALL_BLOCKS:
            last_tool = i
    for i, block in enumerate(blocks):
        if (
            isinstance(block, dict)
            and block.get("type") in types
            and isinstance(block.get("text"), str)
        ):
            slots.append(
                TextSlot(
                    base + (i, "text"),
                    block["text"],
                    any(block.get(k) for k in signed),
                    tool_after=i < last_tool,
                )
            )
    return slots


def block_reasoning(
    blocks: Any, *, types: Sequence[str] = ("thinking",), key: str = "thinking"
) -> str | None:
    """Native reasoning of a content-block list (thinking blocks' text)."""
    if not isinstance(blocks, list):
        return None
    return join_texts(b.get(key) for b in blocks if isinstance(b, dict) and b.get("type") in types)


def content_slots(message: dict[str, Any], base: Path, **kw: Any) -> list[TextSlot]:
    """Slots of `message["content"]`, which is either a string or a block list (or nothing)."""
    content = text_or_parts(message.get("content"), base + ("content",))
    if isinstance(content, str):
        return [TextSlot(base + ("content",), content)]
    return block_slots(content, base + ("content",), **kw)


# --- the base class the format modules extend ---------------------------------------------


class FormatBase(SessionFormat):
    """Shared reading, site listing, counting and applying; subclasses describe messages."""

    #: True for formats that are always JSONL (no pretty-printed document form).
    jsonl_only = False
    doc_shapes: tuple[type, ...] = (dict,)
    #: Bytes every record holding an assistant message contains (the quoted role value).
    assistant_marker = b'"assistant"'
    #: The string `content` a message with tool calls and no text has, as the runtime writes
    #: it: what an all-reasoning content beside tool calls becomes (`plan_emptied`).
    no_content: str | None = ""

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        hook = self.context_hook
        if self.jsonl_only:
            return iter_jsonl(
                bounded_lines(fp), shapes=self.shapes, hook=hook, markers=self.context_markers
            )
        return read_auto(
            fp,
            shapes=self.shapes,
            doc_shapes=self.doc_shapes,
            hook=hook,
            markers=self.context_markers,
        )

    def read_bare(self, fp: BinaryIO) -> Iterator[Record]:
        if self.jsonl_only:
            return iter_jsonl(bounded_lines(fp), shapes=self.shapes)
        return self.read(fp)

    @property
    def line_records(self) -> bool:
        # a subclass that reads its own way (a database, one document) makes no line promise
        return type(self).read is FormatBase.read

    def update_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        """Context for this record and for the ones after it (override to track headers)."""
        return ctx, ctx

    @property
    def context_hook(self) -> Callable[[Record, Context], tuple[Context, Context]] | None:
        """`update_context`, guarded; None when the format does not override it."""
        if type(self).update_context is FormatBase.update_context:
            return None
        return self._guarded_context

    def _guarded_context(self, record: Record, ctx: Context) -> tuple[Context, Context]:
        try:
            return self.update_context(record, ctx)
        except Exception as exc:  # noqa: BLE001 - wrong field types: a bad record, not a crash
            record.reject(wrong_types(exc))
            return ctx, ctx

    # Every per-record entry point below runs the format's code under one guard: whatever
    # a record's fields hold (a list where a string belongs, a number for an object), the
    # format's code may raise, and that makes the record a bad one, never a failed run.

    def may_contain_assistant(self, raw: bytes) -> bool:
        return self.assistant_marker in raw

    def checked_messages(self, record: Record, *, texts: bool = False) -> list[Message]:
        """`SessionFormat.checked_messages`, walked once per record and format: the scan
        counts a suspected record's messages and then lists its sites, and walking its
        messages twice was ~15% of what a suspected leak costs (#26 item 2)."""
        walked = record.walked
        if walked is not None and walked[0] is self and (walked[1] or not texts):
            return walked[2]
        found = super().checked_messages(record, texts=texts)
        if found and _document(record, found) and record.error is None and names_turn(record.raw):
            where = unread_beside(record.data, [fmt_path(m.path) for m in found])
            if where is not None:
                record.reject(unread_turn(self.id, where))
                found = []
        record.walked = (self, texts, found)
        return found

    def _messages(self, record: Record, texts: bool = False) -> list[Message]:
        # An unescaped quote never occurs inside a JSON string, so a record whose bytes lack
        # the quoted role word holds no assistant message: no need to parse it (unless its
        # bytes may name a turn of another shape, which `checked_messages` must see).
        raw = record.raw
        if (
            (self.assistant_marker not in raw and not names_turn(raw))
            or record.error is not None
            or record.data is None
        ):
            return []
        return self.checked_messages(record, texts=texts)

    def sites(self, record: Record) -> Iterator[Site]:
        return iter(
            [
                Site(
                    record_index=record.index,
                    line=record.line,
                    json_path=fmt_path(slot.path),
                    text=slot.text,
                    native_reasoning=msg.native,
                    session_id=msg.session_id or record.ctx.session_id,
                    message_id=msg.message_id,
                    message_index=msg.index,
                    model=msg.model or record.ctx.model,
                    signed=slot.signed,
                    path=slot.path,
                    followed_by_tool_call=slot.tool_after,
                )
                for msg in self._messages(record, texts=True)
                for slot in msg.texts
            ]
        )

    def assistant_messages(self, record: Record) -> int:
        return len(self._messages(record))

    def apply(
        self,
        records: list[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[list[Record], list[Placement]]:
        edits, placements = self.edits(records, repairs, options)
        return list(edits.after(records)), placements

    def edits(
        self,
        records: Sequence[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[Edits, list[Placement]]:
        return self._plan(records, repairs, options).finish_edits()

    def _plan(
        self, records: Sequence[Record], repairs: Iterable[Repair], options: ApplyOptions
    ) -> Plan:
        """Every repair drafted: its edits and placement decided, not yet proven."""
        from thinkfix.formats.planner import Plan

        plan = Plan(records, options)
        repairs = list(repairs)
        plan.facts[_EMPTIED] = {
            (r.site.record_index, r.site.path) for r in repairs if not r.visible.strip()
        }
        for repair in repairs:
            draft = plan.draft(repair)
            if draft is None:
                continue
            try:
                if repair.visible.strip():
                    draft.set_text()
                    self.plan_repair(plan, draft)
                else:
                    self.plan_emptied(plan, draft)
            except Exception as exc:  # noqa: BLE001 - the site is left as it is
                draft.failure = f"not repaired: {wrong_types(exc)}"
        return plan

    def plan_emptied(self, plan: Plan, draft: Draft) -> None:
        """A text the repair would leave empty (it was all reasoning): never write it empty.

        The Anthropic API rejects an empty (or blank) text block, `claude --resume` then
        fails with a 400, and viewers drop such a message with its token usage. So: when
        the message keeps something visible (another text, a tool call), the emptied
        block is removed; where the file is never resumed (`archives`), the text becomes
        a placeholder saying where the reasoning went; otherwise the message is left as
        it is and the repair is refused, with the reason (a scan still reports the leak).
        """
        from thinkfix.formats import jsonedit

        site = draft.site
        at = site.path[-2] if len(site.path) >= 2 else None
        emptied = plan.facts.get(_EMPTIED, set())
        data = plan.records[site.record_index].data
        if (
            site.path[-1] == "text"
            and isinstance(at, int)
            and not keeps_visible(data, site, emptied)
            and site.message_id
            in plan.fact(_CALLED, lambda: self.called(plan.records_with(self.assistant_marker)))
        ):
            # the message's tool call is on another of its records: it shows without the text
            # (a record's only block leaves its content list empty: the record stays; unless
            # the reasoning goes into the list as a block of its own)
            blocks = get_path(data, site.path[:-2])
            only = isinstance(blocks, list) and len(blocks) == 1
            only = only and not (draft.segments and self.archives(plan, draft))
            edit = jsonedit.SetValue(site.path[:-2], []) if only else None
            draft.edit(site.record_index, edit or jsonedit.RemoveItem(site.path[:-2], at))
            draft.dropped = True
            self.plan_repair(plan, draft)
        elif site.path[-1:] == ("content",) and keeps_visible(data, site, emptied):
            # beside tool calls a message needs no text: the runtime's own empty content
            draft.edit(site.record_index, jsonedit.SetValue(site.path, self.no_content))
            self.plan_repair(plan, draft)
        elif site.path[-1] == "text" and isinstance(at, int) and keeps_visible(data, site, emptied):
            draft.edit(site.record_index, jsonedit.RemoveItem(site.path[:-2], at))
            draft.dropped = True
            self.plan_repair(plan, draft)
        elif draft.segments and self.archives(plan, draft):
            draft.placeholder = placeholder(draft.segments)
            draft.edit(site.record_index, jsonedit.SetValue(site.path, draft.placeholder))
            self.plan_repair(plan, draft)
        else:
            draft.failure = refusal(draft)

    def archives(self, plan: Plan, draft: Draft) -> bool:
        """Will the reasoning of an all-reasoning message go into a file never resumed?

        Only then may the message keep a placeholder text beside it (archive modes).
        """
        return False

    @abstractmethod
    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        """Add the format's reasoning placement to a draft whose text edit is already set."""

    # Helpers for plan_repair -------------------------------------------------------------

    @staticmethod
    def place_blocks(draft: Draft, blocks: list[dict[str, Any]], what: str) -> None:
        """Insert reasoning blocks right before the site's block, in the same content list."""
        from thinkfix.formats import jsonedit

        site = draft.site
        array, at = part_at(site.path)
        assert isinstance(at, int)
        if blocks:
            draft.edit(site.record_index, jsonedit.InsertItems(array, at, tuple(blocks)))
            draft.place(
                PlacementKind.BLOCK,
                f"{what} before {fmt_path(site.path[:-1])}",
                block=(site.record_index, array, at),
            )
        else:
            place_nothing(draft)


def _document(record: Record, found: list[Message]) -> bool:
    """Does the record hold its messages as a document (a list, several messages, or one
    nested in a list), where one of an unexpected shape can hide beside those read? A line
    of one message (Claude Code's `message`, Kimi's whole line) has the record-level guard
    alone; checking it again cost --parse-all ~4% of its instructions."""
    return isinstance(record.data, list) or len(found) > 1 or len(found[0].path) > 1


def part_at(path: Path) -> tuple[Path, str | int]:
    """The list a text's part sits in and its index there: the text is the part's `text`
    (`(..., i, "text")`), or the part itself where a runtime keeps a bare string in the list
    (`(..., i)`: a Gemini `PartUnion`)."""
    if path and isinstance(path[-1], int):
        return path[:-1], path[-1]
    return path[:-2], path[-2]


def keeps_visible(data: Any, site: Site, emptied: Collection[tuple[int, Path]] = ()) -> bool:
    """Would the site's message still show something if the site's text block went?

    True when the text is a block of a content list with another block that shows something
    (a tool call, another text), not counting reasoning blocks or the blocks in `emptied`
    ((record index, path) of texts emptied as well). `data` is the site's record.
    """
    if site.path[-1:] == ("content",):
        # a chat message's string content: the message shows its tool calls without it
        message = get_path(data, site.path[:-1])
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        return isinstance(calls, list) and bool(calls)
    if len(site.path) < 3 or site.path[-1] != "text" or not isinstance(site.path[-2], int):
        return False
    array, at = site.path[:-2], site.path[-2]
    blocks = get_path(data, array)
    if not isinstance(blocks, list):
        return False
    return any(
        shows_something(b) and (site.record_index, array + (i, "text")) not in emptied
        for i, b in enumerate(blocks)
        if i != at
    )


def refusal_note(all_reasoning: bool = True) -> str:
    """The short reason scan gives for a leak `thinkfix repair` refuses."""
    what = "all reasoning" if all_reasoning else "only delimiters"
    return (
        f"the text is {what} and the message shows nothing else: `thinkfix repair` "
        "leaves it as it is (an empty text would break the session)"
    )


_EMPTIED = "common:emptied"  # plan fact: (record, path) of every text this apply empties
_CALLED = "common:called"  # plan fact: ids of messages with a tool call on one of their records


def refusal(draft: Draft) -> str:
    """Why an all-reasoning message is left as it is (a scan keeps reporting its leak)."""
    from thinkfix.formats.planner import REFUSED

    what = "all reasoning" if draft.segments else "only delimiters"
    return (
        f"{REFUSED} the text is {what} and nothing visible would remain: an empty text "
        "block is rejected when the session is resumed and dropped by viewers, so the "
        "message is left as it is"
    )


def place_nothing(draft: Draft) -> None:
    draft.place(PlacementKind.NONE, "no reasoning to place (only delimiters were removed)")


def place_elsewhere(draft: Draft, kind: PlacementKind, why: str) -> None:
    """Reasoning stays out of the file (manifest or sidecar), for a stated reason."""
    if not draft.segments:
        place_nothing(draft)
    else:
        draft.place(kind, why)
