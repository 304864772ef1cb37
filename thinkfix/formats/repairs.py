"""What a repair asks of a format and what it gets back: the repaired text (`Repair`), the options that choose where reasoning goes (`ApplyOptions` and each runtime's mode), where it went (`Placement`), and the record edits a format proposes (`Edits`, proven or refused with `UnsafeEdit`)."""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import Enum
from itertools import accumulate
from typing import TYPE_CHECKING

from thinkfix.formats.records import Record, Site

if TYPE_CHECKING:  # annotations only: a scan loads no transcript model
    from typing import NamedTuple

    from thinkfix.formats.turns import Path
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple


# Repair, Placement, TextSlot and ApplyOptions are NamedTuples, not frozen dataclasses: every
# scan loads this module (the placement modes are settings), and a dataclass costs ~1 ms of
# every start-up to define (#26 item 3).


class Repair(NamedTuple):
    """What a site's text becomes: the new visible text and the extracted reasoning.

    `thinking` holds only newly extracted segments, in order; segments equal to
    the site's native reasoning are dropped again by `apply` as a safeguard.
    """

    site: Site
    visible: str
    thinking: tuple[str, ...] = ()

    @property
    def thinking_text(self) -> str:
        return "\n\n".join(self.thinking)


class ClaudeCodeMode(str, Enum):
    """Where Claude Code reasoning goes (the file is replayed to the API on resume)."""

    RESUMABLE = "resumable"  # manifest only: an unsigned thinking block would break resume
    ARCHIVE = "archive"  # an unsigned thinking block; the session can no longer be resumed
    ANNOTATE = "annotate"  # a top-level `thinkfix` key on the same line, never sent to the API


class CodexMode(str, Enum):
    """Where Codex reasoning goes."""

    AUTO = "auto"  # a reasoning item, except on OpenAI-hosted models: a sidecar
    INSERT = "insert"  # always a reasoning item
    SIDECAR = "sidecar"  # never in the session file


class AnthropicMode(str, Enum):
    """Where reasoning from Anthropic Messages logs goes."""

    AUTO = "auto"  # responses get an unsigned thinking block; request histories the manifest
    MANIFEST = "manifest"  # the repair manifest only


class _Placements(NamedTuple):
    """`ApplyOptions`' fields (a NamedTuple class cannot define its own `__new__`)."""

    claude_code_mode: ClaudeCodeMode
    codex_mode: CodexMode
    anthropic_mode: AnthropicMode
    pi_default_signature_field: str
    openai_reasoning_field: str
    gemini_subject: str


class ApplyOptions(_Placements):
    """Placement choices a user can make; the defaults follow DESIGN.md's table.

    A mode may be given by its name ("archive"), as a config file or a library caller says
    it. A NamedTuple, not a frozen dataclass: every scan loads this module, and a dataclass
    costs ~1 ms of every start-up to define (#26 item 3)."""

    __slots__ = ()

    def __new__(  # noqa: PYI034 - typing.Self is Python 3.11's
        cls,
        claude_code_mode: ClaudeCodeMode | str = ClaudeCodeMode.RESUMABLE,
        # codex: "auto" inserts a reasoning item unless the session runs on OpenAI-hosted
        # models (model_provider "openai"), where the extracted text goes to a sidecar;
        # "insert" always inserts; "sidecar" never does.
        codex_mode: CodexMode | str = CodexMode.AUTO,
        # anthropic: "auto" puts an unsigned thinking block in response logs and keeps
        # request histories (replayed) clean; "manifest" never inserts a block.
        anthropic_mode: AnthropicMode | str = AnthropicMode.AUTO,
        # pi / OpenClaw, api openai-completions: the wire field to name in
        # `thinkingSignature` when the file names none.
        pi_default_signature_field: str = "reasoning_content",
        # openai-chat: the field to create when the file uses none.
        openai_reasoning_field: str = "reasoning_content",
        # gemini-cli: the `subject` of an appended thought.
        gemini_subject: str = "thinkfix",
    ) -> "ApplyOptions":
        return super().__new__(
            cls,
            ClaudeCodeMode(claude_code_mode),
            CodexMode(codex_mode),
            AnthropicMode(anthropic_mode),
            pi_default_signature_field,
            openai_reasoning_field,
            gemini_subject,
        )


DEFAULT_OPTIONS = ApplyOptions()


class PlacementKind(str, Enum):
    """Where a repair's reasoning ended up."""

    BLOCK = "block"  # a thinking/reasoning block in the same message, before the text
    FIELD = "field"  # a reasoning field on the message (reasoning_content, ...)
    RECORD = "record"  # a new record before the message (codex reasoning response_item)
    THOUGHTS = "thoughts"  # appended to a display-only thoughts list (gemini-cli)
    ANNOTATION = "annotation"  # a `thinkfix` key on the same record (never replayed)
    MANIFEST = "manifest"  # nowhere in the file: the repair manifest keeps it
    SIDECAR = "sidecar"  # nowhere in the file: the engine writes `<file>.thinkfix.json`
    NONE = "none"  # nothing to place (only delimiters were removed)
    SKIPPED = "skipped"  # the site was not modified (signed, stale, or unsafe)
    REFUSED = "refused"  # not modified: the repair would leave a message nothing visible


class Placement(NamedTuple):
    """The outcome of one repair, for the repair manifest.

    `record_index` and `json_path` point at the reasoning in the *returned*
    records when it went into the file. `mirrors` lists other copies of the
    visible text that were fixed too (codex `agent_message`).
    """

    site: Site
    kind: PlacementKind
    where: str
    applied: bool = True
    record_index: int | None = None
    json_path: str | None = None
    reason: str | None = None
    mirrors: tuple[str, ...] = ()
    message_record_index: int | None = None  # the record holding the repaired text, after apply
    text_path: str | None = None  # the repaired text's JSON path there (None: block dropped)
    # The visible text written instead of an empty one (archive mode: says what was moved).
    placeholder: str | None = None


class TextSlot(NamedTuple):
    """One assistant-visible string inside a message, by its path from the record root."""

    path: "Path"
    text: str
    signed: bool = False
    tool_after: bool = False  # a tool call follows it in its message (rule 4's evidence)


class Edits:
    """What a repair does to a file's records, without the records it leaves alone.

    `replaced` maps an original record's index to its new record; `inserted` maps
    an original index to the new records written just before that record. These
    new records carry their final index and line (after the inserts). Every other
    record is its original bytes, so the engine can stream the original file and
    write the repaired one without holding either (`after`).
    """

    def __init__(
        self, count: int, replaced: dict[int, Record], inserted: Mapping[int, int | list[Record]]
    ) -> None:
        self.count = count
        self.replaced = replaced
        self.inserted: dict[int, list[Record]] = {
            k: v for k, v in inserted.items() if isinstance(v, list)
        }
        sizes = sorted((k, v if isinstance(v, int) else len(v)) for k, v in inserted.items())
        self._keys = [k for k, _ in sizes]
        self._sums = list(accumulate(n for _, n in sizes))

    def new_index(self, index: int) -> int:
        """Where original record `index` is once the inserts are made."""
        at = bisect_right(self._keys, index)
        return index + (self._sums[at - 1] if at else 0)

    @property
    def changed(self) -> bool:
        return bool(self.replaced or any(self.inserted.values()))

    @property
    def after_count(self) -> int:
        return self.count + (self._sums[-1] if self._sums else 0)

    def after(self, originals: Iterable[Record]) -> Iterator[Record]:
        """The repaired file's records, given the original ones in order."""
        for i, record in enumerate(originals):
            yield from self.inserted.get(i, ())
            new = self.replaced.get(i)
            if new is not None:
                yield new
                continue
            at = self.new_index(i)
            yield record if at == i else record.moved(at, record.line + at - i)
        yield from self.inserted.get(self.count, ())  # records added at the end

    @classmethod
    def between(cls, originals: Sequence[Record], after: Iterable[Record]) -> "Edits":
        """The edits that turn `originals` into `after` (a full list from `apply`)."""
        replaced: dict[int, Record] = {}
        inserted: dict[int, list[Record]] = {}
        pending: list[Record] = []
        i = 0
        for record in after:
            if record.inserted:
                pending.append(record)
                continue
            if pending:
                inserted[i], pending = pending, []
            if record.touched:
                replaced[i] = record
            i += 1
        if pending:  # records added after the last one: written at the end
            inserted[len(originals)] = pending
        return cls(len(originals), replaced, inserted)


class UnsafeEdit(Exception):
    """A record edit could not be proven to change only what it meant to."""
