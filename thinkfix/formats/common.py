"""What the format modules share: paths, message walking, and the repair planner.

A format module describes its assistant messages (`messages`) and, per repair,
which edits to make and where the reasoning went (`plan_repair`). Everything
else (sites, message counts, staleness and signature checks, applying edits
safely, inserting records, renumbering, placements) is done once, here.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, BinaryIO

from thinkfix.formats import jsonedit
from thinkfix.formats.base import (
    DEFAULT_OPTIONS,
    ApplyOptions,
    Context,
    Message,
    Path,
    Placement,
    PlacementKind,
    Record,
    Repair,
    SessionFormat,
    Site,
    TextSlot,
    UnsafeEdit,
    wrong_types,
)
from thinkfix.formats.reader import iter_jsonl, read_auto

_SPACE = re.compile(r"\s+")

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
    return not (kind in TEXT_TYPES or kind is None) or not isinstance(text, str) \
        or bool(text.strip())


def placeholder(segments: Sequence[str]) -> str:
    """The visible text an all-reasoning message gets in archive mode: what was moved, where.

    Never empty (the API rejects an empty text block and viewers drop the message), free
    of delimiters (a re-scan finds nothing), and plain enough to read in any viewer.
    """
    chars = sum(len(s) for s in segments)
    return (f"[thinkfix: this message was all reasoning ({chars:,} characters); "
            "it was moved to the thinking block above]")


def fmt_path(path: Path) -> str:
    """`("message", "content", 1, "text")` -> `message.content[1].text`."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(("." if out else "") + part)
    return "".join(out)


def get_path(data: Any, path: Path, default: Any = None) -> Any:
    """The value at `path`, or `default` when any step is missing."""
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return default
    return data


def join_texts(parts: Iterable[Any]) -> str | None:
    """Non-empty strings joined by a blank line; None when there are none."""
    texts = [p for p in parts if isinstance(p, str) and p.strip()]
    return "\n\n".join(texts) if texts else None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def squash(text: str) -> str:
    """Whitespace-normalised text, for duplicate checks."""
    return _SPACE.sub(" ", text).strip()


#: Content-block types that are tool calls: Anthropic and Claude Code (`tool_use`,
#: `server_tool_use`), pi and OpenClaw (`toolCall`), Responses-style lists (`function_call`).
TOOL_CALL_BLOCKS = ("tool_use", "server_tool_use", "toolCall", "tool_call", "function_call")


def block_slots(blocks: Any, base: Path, *, types: Sequence[str] = ("text",),
                signed: Sequence[str] = ()) -> list[TextSlot]:
    """Text slots of a content-block list: `{"type": <types>, "text": str}` blocks.

    A block carrying any of the `signed` keys (non-empty) is marked signed; one with a
    tool-call block after it is marked `tool_after`.
    """
    if not isinstance(blocks, list):
        return []
    slots = []
    last_tool = -1
    for i, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") in TOOL_CALL_BLOCKS:
            last_tool = i
    for i, block in enumerate(blocks):
        if (isinstance(block, dict) and block.get("type") in types
                and isinstance(block.get("text"), str)):
            slots.append(TextSlot(base + (i, "text"), block["text"],
                                  any(block.get(k) for k in signed), tool_after=i < last_tool))
    return slots


def block_reasoning(blocks: Any, *, types: Sequence[str] = ("thinking",),
                    key: str = "thinking") -> str | None:
    """Native reasoning of a content-block list (thinking blocks' text)."""
    if not isinstance(blocks, list):
        return None
    return join_texts(b.get(key) for b in blocks if isinstance(b, dict) and b.get("type") in types)


def content_slots(message: dict[str, Any], base: Path, **kw: Any) -> list[TextSlot]:
    """Slots of `message["content"]`, which is either a string or a block list."""
    content = message.get("content")
    if isinstance(content, str):
        return [TextSlot(base + ("content",), content)]
    return block_slots(content, base + ("content",), **kw)


# --- planning ------------------------------------------------------------------------------


class Draft:
    """The edits one repair makes, and where its reasoning goes, before they are proven safe."""

    def __init__(self, repair: Repair, segments: tuple[str, ...]) -> None:
        self.repair = repair
        self.segments = segments
        self.edits: list[tuple[int, jsonedit.Edit]] = []
        self.inserts: list[tuple[int, Any]] = []
        self.kind: PlacementKind | None = None
        self.where = ""
        self.block: tuple[int, Path, int] | None = None
        self.field: tuple[int, Path] | None = None
        self.mirrors: list[tuple[int, Path]] = []
        self.failure: str | None = None
        self.inserted_at: list[int] = []
        self.value: Any = None  # format data a shared_edit builder reads from each contributor
        self.dropped = False  # the emptied text block is removed (others remain in the message)
        self.placeholder: str | None = None  # written instead of an empty text (archive)

    @property
    def site(self) -> Site:
        return self.repair.site

    def edit(self, record_index: int, change: jsonedit.Edit) -> None:
        self.edits.append((record_index, change))

    def set_text(self) -> None:
        """The visible text goes back where it was (the edit every repair makes)."""
        self.edit(self.site.record_index, jsonedit.SetValue(self.site.path, self.repair.visible))

    def mirror(self, record_index: int, path: Path, value: Any) -> None:
        """Another copy of the visible text (codex agent_message) gets the same fix."""
        self.edit(record_index, jsonedit.SetValue(path, value))
        self.mirrors.append((record_index, path))

    def insert_record(self, before: int, value: Any) -> None:
        """A new record right before record `before`."""
        self.inserts.append((before, value))

    def place(self, kind: PlacementKind, where: str, *, block: tuple[int, Path, int] | None = None,
              field: tuple[int, Path] | None = None) -> None:
        self.kind, self.where, self.block, self.field = kind, where, block, field


class Plan:
    """All repairs of one file: checked, drafted, proven, then applied together."""

    def __init__(self, records: list[Record], options: ApplyOptions) -> None:
        self.records = records
        self.options = options
        self.drafts: list[Draft] = []
        self.facts: dict[Any, Any] = {}
        self._seen: set[tuple[int, Path]] = set()
        self._style: jsonedit.Style | None = None

    @property
    def style(self) -> jsonedit.Style:
        if self._style is None:
            self._style = jsonedit.Style.sniff(r.raw for r in self.records)
        return self._style

    def fact(self, name: str, compute: Any) -> Any:
        """A file-wide fact, computed once per apply (e.g. the wire field pi files use)."""
        if name not in self.facts:
            self.facts[name] = compute()
        return self.facts[name]

    def shared_edit(self, draft: Draft, record_index: int, key: Any,
                    build: Callable[[list[Draft]], jsonedit.Edit]) -> None:
        """One edit that several repairs of the same record contribute to.

        E.g. one `reasoning_content` for two repaired parts of a message: the
        first draft owns the edit, and it is rebuilt from all contributors as
        each one arrives (they share a record, so they succeed or fail together).
        """
        slot = ("shared", record_index, key)
        if slot not in self.facts:
            draft.edits.append((record_index, build([draft])))
            self.facts[slot] = (draft, len(draft.edits) - 1, [draft])
            return
        owner, at, contributors = self.facts[slot]
        contributors.append(draft)
        owner.edits[at] = (record_index, build(contributors))

    def check(self, repair: Repair) -> str | None:
        """Why a repair cannot be applied as given, or None."""
        site = repair.site
        if not 0 <= site.record_index < len(self.records):
            return "stale: no such record"
        record = self.records[site.record_index]
        if record.error is not None:
            return f"record cannot be parsed: {record.error}"
        if get_path(record.data, site.path, object()) != site.text:
            return f"stale: the text at {site.json_path} is not what was scanned"
        if site.signed:
            return "signed: the text carries a provider signature and cannot be changed"
        if (site.record_index, site.path) in self._seen:
            return "duplicate repair of the same site"
        self._seen.add((site.record_index, site.path))
        return None

    def draft(self, repair: Repair) -> Draft | None:
        """A new draft, or None (with a skipped placement) when the repair cannot apply."""
        reason = self.check(repair)
        segments = new_segments(repair)
        if reason is None and repair.visible == repair.site.text and not segments:
            reason = "nothing to change"
        draft = Draft(repair, segments)
        self.drafts.append(draft)
        if reason is not None:
            draft.failure = reason
            return None
        return draft

    def finish(self) -> tuple[list[Record], list[Placement]]:
        """Prove every record edit, drop the repairs whose edits are unsafe, build the output."""
        active = [d for d in self.drafts if d.failure is None]
        results: dict[int, tuple[bytes, Any]] = {}
        while True:
            by_record: dict[int, list[tuple[Draft, jsonedit.Edit]]] = defaultdict(list)
            for d in active:
                for index, change in d.edits:
                    by_record[index].append((d, change))
            results, failed = {}, []
            for index, pairs in sorted(by_record.items()):
                try:
                    results[index] = jsonedit.edit(self.records[index].raw,
                                                   [c for _, c in pairs], self.style)
                except UnsafeEdit as exc:
                    for d, _ in pairs:
                        if d.failure is None:
                            d.failure = f"not safely editable: {exc}"
                            failed.append(d)
            if not failed:
                break
            active = [d for d in active if d.failure is None]
        return self._build(active, results)

    def _build(self, active: list[Draft],
               results: dict[int, tuple[bytes, Any]]) -> tuple[list[Record], list[Placement]]:
        inserts: dict[int, list[tuple[Draft, Any]]] = defaultdict(list)
        for d in active:
            for before, value in d.inserts:
                inserts[before].append((d, value))
        default_eol = next((r.eol for r in self.records if r.eol), b"\n")
        out: list[Record] = []
        new_index: dict[int, int] = {}
        for i, record in enumerate(self.records):
            for d, value in inserts.get(i, ()):
                raw = jsonedit.dump_record(value, self.style, like=record.raw)
                shift = len(out) - i
                d.inserted_at.append(len(out))
                out.append(Record(len(out), record.line + shift, raw, record.eol or default_eol,
                                  ctx=record.ctx, data=value, touched=True, inserted=True))
            shift = len(out) - i
            new_index[i] = len(out)
            if i in results:
                raw, data = results[i]
                out.append(Record(len(out), record.line + shift, raw, record.eol, ctx=record.ctx,
                                  shapes=record._shapes, data=data, touched=True))
            elif shift:
                out.append(record.moved(len(out), record.line + shift))
            else:
                out.append(record)
        shifts = _Shifts(active)
        return out, [self._placement(d, shifts, new_index) for d in self.drafts]

    @staticmethod
    def _placement(d: Draft, shifts: _Shifts, new_index: dict[int, int]) -> Placement:
        site = d.site
        if d.failure is not None and d.failure.startswith(REFUSED):
            return Placement(site, PlacementKind.REFUSED, "not modified", applied=False,
                             reason=d.failure)
        if d.failure is not None or d.kind is None:
            return Placement(site, PlacementKind.SKIPPED, "not modified", applied=False,
                             reason=d.failure or "no placement decided")
        record_index: int | None = None
        json_path: str | None = None
        if d.block is not None:
            index, array, at = d.block
            final = at + shifts.ahead(index, array, at, d)
            record_index, json_path = new_index[index], fmt_path(array + (final,))
        elif d.field is not None:
            record_index, json_path = new_index[d.field[0]], fmt_path(d.field[1])
        elif d.inserted_at:
            record_index, json_path = d.inserted_at[0], ""
        mirrors = tuple(f"record {new_index[ri]}: {fmt_path(p)}" for ri, p in d.mirrors)
        where = d.where + ("; the emptied text block was removed" if d.dropped else "")
        return Placement(site, d.kind, where, record_index=record_index, json_path=json_path,
                         mirrors=mirrors, message_record_index=new_index[site.record_index],
                         text_path=None if d.dropped else
                         fmt_path(shifts.moved(site.record_index, site.path)),
                         placeholder=d.placeholder)


class _Shifts:
    """How far array inserts (and removals) move later elements: prefix sums per (record, array), so
    placements stay O(log n) each even for a document with thousands of repairs."""

    def __init__(self, active: list[Draft]) -> None:
        groups: dict[tuple[int, Path], list[tuple[int, int, int]]] = defaultdict(list)
        self._order = {id(d): n for n, d in enumerate(active)}
        for n, d in enumerate(active):
            for ri, change in d.edits:
                if isinstance(change, jsonedit.InsertItems):
                    groups[(ri, change.path)].append((change.index, n, len(change.values)))
                elif isinstance(change, jsonedit.RemoveItem):
                    groups[(ri, change.path)].append((change.index, n, -1))
        self._keys: dict[tuple[int, Path], list[tuple[int, int]]] = {}
        self._sums: dict[tuple[int, Path], list[int]] = {}
        for key, items in groups.items():
            items.sort()
            self._keys[key] = [(i, n) for i, n, _ in items]
            self._sums[key] = list(accumulate((c for _, _, c in items), initial=0))

    def ahead(self, record_index: int, array: Path, index: int, draft: Draft) -> int:
        """Values inserted before a draft's own insert at original `index`."""
        keys = self._keys.get((record_index, array))
        if not keys:
            return 0
        return self._sums[(record_index, array)][
            bisect_left(keys, (index, self._order[id(draft)]))]

    def moved(self, record_index: int, path: Path) -> Path:
        """Where a path points once the inserts into arrays along it are made."""
        out = list(path)
        for depth, part in enumerate(path):
            keys = self._keys.get((record_index, path[:depth]))
            if isinstance(part, int) and keys:
                out[depth] = part + self._sums[(record_index, path[:depth])][
                    bisect_right(keys, (part, len(self._order)))]
        return tuple(out)


def new_segments(repair: Repair) -> tuple[str, ...]:
    """The repair's reasoning segments minus empty ones and those the message already has."""
    native = squash(repair.site.native_reasoning or "")
    out = []
    for segment in repair.thinking:
        flat = squash(segment)
        if flat and not (native and flat in native):
            out.append(segment.strip())
    return tuple(out)


# --- the base class the format modules extend ---------------------------------------------


class FormatBase(SessionFormat):
    """Shared reading, site listing, counting and applying; subclasses describe messages."""

    #: True for formats that are always JSONL (no pretty-printed document form).
    jsonl_only = False
    doc_shapes: tuple[type, ...] = (dict,)
    #: Bytes every record holding an assistant message contains (the quoted role value).
    assistant_marker = b'"assistant"'

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        hook = self.context_hook
        if self.jsonl_only:
            return iter_jsonl(fp, shapes=self.shapes, hook=hook, markers=self.context_markers)
        return read_auto(fp, shapes=self.shapes, doc_shapes=self.doc_shapes, hook=hook,
                         markers=self.context_markers)

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

    def _messages(self, record: Record, texts: bool = False) -> list[Message]:
        # An unescaped quote never occurs inside a JSON string, so a record whose bytes lack
        # the quoted role word holds no assistant message: no need to parse it.
        if self.assistant_marker not in record.raw or record.error is not None \
                or record.data is None:
            return []
        return self.checked_messages(record, texts=texts)

    def sites(self, record: Record) -> Iterator[Site]:
        return iter([
            Site(record_index=record.index, line=record.line, json_path=fmt_path(slot.path),
                 text=slot.text, native_reasoning=msg.native,
                 session_id=msg.session_id or record.ctx.session_id,
                 message_id=msg.message_id, message_index=msg.index,
                 model=msg.model or record.ctx.model, signed=slot.signed, path=slot.path,
                 followed_by_tool_call=slot.tool_after)
            for msg in self._messages(record, texts=True) for slot in msg.texts])

    def assistant_messages(self, record: Record) -> int:
        return len(self._messages(record))

    def apply(self, records: list[Record], repairs: Iterable[Repair],
              options: ApplyOptions = DEFAULT_OPTIONS) -> tuple[list[Record], list[Placement]]:
        plan = Plan(records, options)
        repairs = list(repairs)
        plan.facts[_EMPTIED] = {(r.site.record_index, r.site.path) for r in repairs
                                if not r.visible.strip()}
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
        return plan.finish()

    def plan_emptied(self, plan: Plan, draft: Draft) -> None:
        """A text the repair would leave empty (it was all reasoning): never write it empty.

        The Anthropic API rejects an empty (or blank) text block, `claude --resume` then
        fails with a 400, and viewers drop such a message with its token usage. So: when
        the message keeps something visible (another text, a tool call), the emptied
        block is removed; where the file is never resumed (`archives`), the text becomes
        a placeholder saying where the reasoning went; otherwise the message is left as
        it is and the repair is refused, with the reason (a scan still reports the leak).
        """
        site = draft.site
        at = site.path[-2] if len(site.path) >= 2 else None
        emptied = plan.facts.get(_EMPTIED, set())
        if isinstance(at, int) and keeps_visible(plan.records[site.record_index].data, site,
                                                 emptied):
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
        site = draft.site
        array, at = site.path[:-2], site.path[-2]
        assert isinstance(at, int)
        if blocks:
            draft.edit(site.record_index, jsonedit.InsertItems(array, at, tuple(blocks)))
            draft.place(PlacementKind.BLOCK, f"{what} before {fmt_path(site.path[:-1])}",
                        block=(site.record_index, array, at))
        else:
            place_nothing(draft)


def keeps_visible(data: Any, site: Site, emptied: Collection[tuple[int, Path]] = ()) -> bool:
    """Would the site's message still show something if the site's text block went?

    True when the text is a block of a content list with another block that shows something
    (a tool call, another text), not counting reasoning blocks or the blocks in `emptied`
    ((record index, path) of texts emptied as well). `data` is the site's record.
    """
    if len(site.path) < 3 or site.path[-1] != "text" or not isinstance(site.path[-2], int):
        return False
    array, at = site.path[:-2], site.path[-2]
    blocks = get_path(data, array)
    if not isinstance(blocks, list):
        return False
    return any(shows_something(b) and (site.record_index, array + (i, "text")) not in emptied
               for i, b in enumerate(blocks) if i != at)


def refusal_note(all_reasoning: bool = True) -> str:
    """The short reason scan gives for a leak `thinkfix repair` refuses."""
    what = "all reasoning" if all_reasoning else "only delimiters"
    return (f"the text is {what} and the message shows nothing else: `thinkfix repair` "
            "leaves it as it is (an empty text would break the session)")


_EMPTIED = "common:emptied"  # plan fact: (record, path) of every text this apply empties
REFUSED = "refused:"  # how a refusal reason starts (the placement is then REFUSED)


def refusal(draft: Draft) -> str:
    """Why an all-reasoning message is left as it is (a scan keeps reporting its leak)."""
    what = "all reasoning" if draft.segments else "only delimiters"
    return (f"{REFUSED} the text is {what} and nothing visible would remain: an empty text "
            "block is rejected when the session is resumed and dropped by viewers, so the "
            "message is left as it is")


def place_nothing(draft: Draft) -> None:
    draft.place(PlacementKind.NONE, "no reasoning to place (only delimiters were removed)")


def place_elsewhere(draft: Draft, kind: PlacementKind, why: str) -> None:
    """Reasoning stays out of the file (manifest or sidecar), for a stated reason."""
    if not draft.segments:
        place_nothing(draft)
    else:
        draft.place(kind, why)
