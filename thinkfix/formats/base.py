"""The contract every session-file format implements, and the values it trades in.

A format module knows one on-disk format: how to recognise it (`detect`), how to
stream it into `Record`s that keep their original bytes (`read`), where the
assistant-visible text is (`sites`), how to put a repaired text back and where
the extracted reasoning goes (`apply`), and how to write records out (`write`).
Untouched records are always written from their original bytes, which is what
makes a read/write round trip byte-identical.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import accumulate
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from thinkfix.formats.strangers import names_turn, stranger_turn, unread_turn
from thinkfix.formats.turns import Path as Path  # noqa: PLC0414 (re-exported: the contract names it)
from thinkfix.formats.turns import Turn

if TYPE_CHECKING:
    import pathlib  # annotations only: pathlib costs start-up

_MISSING: Any = object()

#: Records longer than this are never parsed: reported as too large and copied through
#: untouched, so one huge line cannot cost many times its size in parsed objects. The
#: engine sets it per file from `--max-record-size` (`set_record_limit`).
DEFAULT_RECORD_LIMIT = 64 << 20
_limit = [DEFAULT_RECORD_LIMIT]
TOO_LARGE = "too large"  # how a too-large record's error begins


def set_record_limit(limit: int) -> None:
    """The largest record (in bytes) parsed from now on in this process (0: no limit)."""
    _limit[0] = limit


def record_limit() -> int:
    return _limit[0]


def too_large(size: int, limit: int) -> str:
    """The error of a record past the limit: what happened, and the knob that moves it."""
    return (
        f"{TOO_LARGE}: a record of {size:,} bytes is over the {limit:,}-byte limit "
        "(--max-record-size); not parsed, copied through untouched"
    )


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def parse_json(raw: bytes, *, last: bool = False) -> tuple[Any, str | None]:
    """Parse one record: (value, None) or (None, why it is not JSON).

    orjson first (the hot path); the stdlib parser is the fallback for valid
    JSON orjson refuses (lone surrogate escapes, a leading BOM, NaN written by
    Python). `last` says the bytes had no line terminator, which is how a
    truncated final line is told apart from plain garbage.
    """
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8: invalid byte at offset {exc.start}"
    body = text.removeprefix("\ufeff")
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        at_end = exc.pos >= len(body.rstrip()) or exc.msg.startswith("Unterminated string")
        if at_end and body.strip():
            return None, f"truncated: {exc.msg} at offset {exc.pos}" + (
                "" if last else " (line ends early)"
            )
        return None, f"not JSON: {exc.msg} at offset {exc.pos}"
    except RecursionError:
        return None, "not JSON: nested too deeply"


@dataclass(frozen=True)
class Context:
    """What a record needs from earlier records of its file (header, turn settings).

    Readers attach a snapshot to every record, so `sites(record)` stays a
    function of one record even for formats whose session id or model lives in
    a header line. `extra` holds format-specific facts.
    """

    session_id: str | None = None
    model: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


EMPTY_CONTEXT = Context()


class Record:
    """One unit of a file: a JSONL line, or the whole document of a `.json` file.

    `raw` is the original bytes without the line terminator (`eol`), so an
    untouched record is written back as `raw + eol`. `data` is parsed lazily on
    first access, so a caller can skip parsing records whose bytes cannot
    matter. `error` says why the record could not be parsed (not UTF-8, not
    JSON, truncated, or a JSON value of a shape the format does not know); such
    a record is passed through untouched.
    """

    __slots__ = (
        "_data",
        "_error",
        "_shapes",
        "ctx",
        "eol",
        "index",
        "inserted",
        "line",
        "raw",
        "touched",
    )

    def __init__(
        self,
        index: int,
        line: int,
        raw: bytes,
        eol: bytes = b"",
        ctx: Context = EMPTY_CONTEXT,
        shapes: tuple[type, ...] = (dict,),
        data: Any = _MISSING,
        error: str | None = None,
        touched: bool = False,
        inserted: bool = False,
    ) -> None:
        self.index = index
        self.line = line
        self.raw = raw
        self.eol = eol
        self.ctx = ctx
        self.touched = touched  # its bytes differ from what was read
        self.inserted = inserted  # added by apply (codex reasoning lines); implies touched
        self._shapes = shapes
        self._data = data
        self._error = error

    def _parse(self) -> None:
        limit = _limit[0]
        if limit and len(self.raw) > limit:
            self._data, self._error = None, too_large(len(self.raw), limit)
            return
        if not self.raw.strip():
            self._data, self._error = None, None
            return
        data, error = parse_json(self.raw, last=not self.eol)
        if error is None and self._shapes and not isinstance(data, self._shapes):
            error = f"unknown shape: a JSON {type(data).__name__} where this format has objects"
        self._data, self._error = data, error

    @property
    def data(self) -> Any:
        """The parsed JSON value (None for a blank or unparseable record)."""
        if self._data is _MISSING:
            self._parse()
        return self._data

    @property
    def error(self) -> str | None:
        """Why this record cannot be used, or None."""
        if self._data is _MISSING:
            self._parse()
        return self._error

    def moved(self, index: int, line: int) -> Record:
        """The same record at another position (records were inserted before it)."""
        return Record(
            index,
            line,
            self.raw,
            self.eol,
            ctx=self.ctx,
            shapes=self._shapes,
            data=self._data,
            error=self._error,
            touched=self.touched,
            inserted=self.inserted,
        )

    def reject(self, reason: str) -> None:
        """Mark a record unusable because a field holds a value of a type its format does not
        expect: the format's code raised on it. Like a JSON value of an unknown shape, it is
        reported and copied through untouched, never an exception that ends a run."""
        if self._data is _MISSING:
            self._parse()
        if self._error is None:
            self._error = f"unknown shape: {reason}"

    @property
    def blank(self) -> bool:
        """A whitespace-only line: neither data nor an error (a record too large to keep has
        no bytes either, but it has its error)."""
        return not self.raw.strip() and self._error is None

    @property
    def obj(self) -> dict[str, Any] | None:
        """`data` when it is a JSON object and the record is sound, else None."""
        data = self.data
        return data if self._error is None and isinstance(data, dict) else None

    def __repr__(self) -> str:
        return f"Record(index={self.index}, line={self.line}, raw={self.raw[:60]!r}...)"


@dataclass(frozen=True)
class Site:
    """One assistant-visible text, located well enough to find it again.

    `path` is the machine form of `json_path` (keys and list indices from the
    record's root). `signed` marks text that carries a provider signature
    (a Gemini part with `thoughtSignature`): report it, never modify it.
    `message_index` is the message's position: the record index for JSONL
    formats, the index in the messages array for whole-document formats.
    `followed_by_tool_call` marks text with a tool call after it in the same message.
    """

    record_index: int
    line: int
    json_path: str
    text: str
    native_reasoning: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    message_index: int = 0
    model: str | None = None
    signed: bool = False
    path: Path = ()
    # a tool call follows the text in its message: rule 4's evidence, passed to `normalize`
    followed_by_tool_call: bool = False


@dataclass(frozen=True)
class Repair:
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


@dataclass(frozen=True)
class ApplyOptions:
    """Placement choices a user can make; the defaults follow DESIGN.md's table."""

    claude_code_mode: ClaudeCodeMode = ClaudeCodeMode.RESUMABLE
    # codex: "auto" inserts a reasoning item unless the session runs on OpenAI-hosted
    # models (model_provider "openai"), where the extracted text goes to a sidecar;
    # "insert" always inserts; "sidecar" never does.
    codex_mode: CodexMode = CodexMode.AUTO
    # anthropic: "auto" puts an unsigned thinking block in response logs and keeps
    # request histories (replayed) clean; "manifest" never inserts a block.
    anthropic_mode: AnthropicMode = AnthropicMode.AUTO
    # pi / OpenClaw, api openai-completions: the wire field to name in
    # `thinkingSignature` when the file names none.
    pi_default_signature_field: str = "reasoning_content"
    # openai-chat: the field to create when the file uses none.
    openai_reasoning_field: str = "reasoning_content"
    # gemini-cli: the `subject` of an appended thought.
    gemini_subject: str = "thinkfix"

    def __post_init__(self) -> None:
        # a mode given by its name ("archive"), as a config file or a library caller says it
        for name, mode in (
            ("claude_code_mode", ClaudeCodeMode),
            ("codex_mode", CodexMode),
            ("anthropic_mode", AnthropicMode),
        ):
            value = getattr(self, name)
            if not isinstance(value, mode):
                object.__setattr__(self, name, mode(value))


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


@dataclass(frozen=True)
class Placement:
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


@dataclass(frozen=True)
class TextSlot:
    """One assistant-visible string inside a message, by its path from the record root."""

    path: Path
    text: str
    signed: bool = False
    tool_after: bool = False  # a tool call follows it in its message (rule 4's evidence)


class Message:
    """An assistant message located inside a record.

    `texts` and `native` may be given as zero-argument callables: they are only
    computed when sites are asked for, so counting messages stays cheap.
    """

    __slots__ = (
        "_calls",
        "_native",
        "_texts",
        "index",
        "message_id",
        "model",
        "path",
        "session_id",
    )

    def __init__(
        self,
        path: Path,
        index: int,
        texts: list[TextSlot] | Callable[[], list[TextSlot]],
        native: str | None | Callable[[], str | None] = None,
        *,
        message_id: str | None = None,
        model: str | None = None,
        session_id: str | None = None,
        calls: bool | Callable[[], bool] = False,
    ) -> None:
        self.path = path  # of the message object, from the record root
        self.index = index  # message_index of its sites
        self._texts = texts
        self._native = native
        self._calls = calls
        self.message_id = message_id
        self.model = model
        self.session_id = session_id

    @property
    def texts(self) -> list[TextSlot]:
        if callable(self._texts):
            self._texts = self._texts()
        return self._texts

    @property
    def native(self) -> str | None:
        if callable(self._native):
            self._native = self._native()
        return self._native

    @property
    def calls(self) -> bool:
        """This record's part of the message holds a tool call. A runtime that writes one
        message as several records sharing `message_id` (Claude Code: a text block on one
        line, its tool_use on the next) is judged by all of them (`FormatBase.spread`)."""
        if callable(self._calls):
            self._calls = self._calls()
        return self._calls


def wrong_types(exc: Exception) -> str:
    """Why a record was rejected when a format's code raised on its data."""
    return f"a field holds a value of an unexpected type ({type(exc).__name__}: {exc})"


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

    @classmethod
    def between(cls, originals: Sequence[Record], after: Iterable[Record]) -> Edits:
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


class SessionFormat(ABC):
    """One on-disk session format. Instances are stateless and shared."""

    id: str = ""
    description: str = ""
    detection: str = ""
    placement: str = ""
    #: JSON types a record may have; anything else is reported as an unknown shape.
    shapes: tuple[type, ...] = (dict,)
    #: Where `default_locations` comes from (the runtime's docs or source), for `formats`.
    locations_source: str = ""
    #: Bytes every record holding an assistant message contains (the quoted role value);
    #: empty when the format promises none, and then no reader may skip a record unparsed.
    assistant_marker: bytes = b""
    #: Literal bytes that mark a record `context_hook` must see (besides the first).
    context_markers: tuple[bytes, ...] = ()
    #: The runtime writes one message as several records sharing `message_id` (Claude Code):
    #: a text is judged by the message's other records too (`called`).
    spread: bool = False

    def called(self, records: Iterable[Record]) -> frozenset[str]:
        """The ids of the messages that hold a tool call (`Message.calls`) in one of `records`:
        for a format that `spread`s a message over records, an all-reasoning text whose
        message calls a tool on another record is removed, never refused. One pass."""
        if not self.spread:
            return frozenset()
        return frozenset(
            m.message_id
            for r in records
            if r.error is None and r.data is not None
            for m in self.checked_messages(r)
            if m.message_id is not None and m.calls
        )

    #: A message's tool call may sit on a record after its text's (Claude Code's sibling
    #: records, Codex's `function_call` items): rule 4's evidence comes from `calls_after`.
    calls_later: bool = False
    #: Literal bytes one of which a record holding a tool call has (`calls_after` parses no
    #: other record while a text waits; empty: every record may hold one).
    call_markers: tuple[bytes, ...] = ()

    def shown_by_later_call(self, site: Site) -> bool:
        """Does an all-reasoning text's message still show once the text goes, by the tool
        call on a later record that gave it rule 4's evidence? Then the repair removes the
        text (`plan_emptied`) and scan's refusal note says so."""
        return self.calls_later and site.followed_by_tool_call

    def calls_after(self, records: Iterable[Record], indices: Collection[int]) -> frozenset[int]:
        """Of the records at `indices` (each holds a text with no tool call after it in its
        own record), those whose message calls a tool on a later record: rule 4's evidence
        (`Site.followed_by_tool_call`) where a runtime writes a message's tool calls on
        records of their own. Here, for a format that `spread`s a message over records
        sharing `message_id`: a later record of that message holding a call
        (`Message.calls`, as `called` reads it). One pass over `records` in order, holding
        only the texts still waiting; it ends once none waits past the last of `indices`."""
        if not self.spread or not indices:
            return frozenset()
        waiting: dict[str, list[int]] = {}
        found: set[int] = set()
        last, markers = max(indices), self.call_markers
        for r in records:
            i = r.index
            if i > last and not waiting:
                break
            if i not in indices and not (
                waiting and (not markers or any(m in r.raw for m in markers))
            ):
                continue
            if r.error is not None or r.data is None:
                continue
            for m in self.checked_messages(r):
                if m.message_id is None:
                    continue
                if m.calls:
                    found.update(waiting.pop(m.message_id, ()))
                if i in indices:
                    waiting.setdefault(m.message_id, []).append(i)
        return frozenset(found)

    def context_markers_for(self, ctx: Context) -> tuple[bytes, ...]:
        """The markers that matter while the carried context is `ctx`: a record holding none of
        them leaves it as it is (`context_hook` gives `(ctx, ctx)`), so a reader may skip the
        record unparsed. A subset of `context_markers`; all of them unless the format knows
        better (tests/formats/test_fast_paths.py proves each override sound)."""
        return self.context_markers

    def keeps_context(self, raw: bytes, ctx: Context) -> bool:
        """True proves, from the bytes alone, that a record with a context marker leaves `ctx`
        as it is, so a reader need not parse it for the context (a Codex turn that keeps the
        model). False means "parse to know"."""
        return False

    def quick_messages(self, raw: bytes, ctx: Context) -> tuple[str | None, ...] | None:
        """The `model` of each assistant message of a record, read from its bytes alone (no
        parse), or None when the bytes do not prove the answer (then the record is parsed).

        The scan hot path calls it only for a complete line that holds no possible delimiter
        (so no finding) and no context marker, to count messages without parsing or walking
        the record; on every sound record it must agree with `checked_messages`
        (tests/formats/test_fast_paths.py). Like any line a scan does not parse, a line counted
        this way is not validated as JSON (`--parse-all` validates every line)."""
        return None

    def default_locations(self, env: Mapping[str, str], home: pathlib.Path) -> list[pathlib.Path]:
        """The folders this format's runtime writes sessions to on a machine whose environment
        is `env` and home folder `home`, honouring the runtime's own override variables.

        Candidates, existing or not (discovery keeps the existing ones); none for formats
        that are logs of an API rather than files a runtime keeps in a known place.
        """
        return []

    @abstractmethod
    def detect(self, head: bytes, path: str = "") -> float:
        """Confidence 0..1 that a file starting with `head` is in this format."""

    @abstractmethod
    def read(self, fp: BinaryIO) -> Iterator[Record]:
        """Stream the file's records; memory is bounded by the largest record."""

    def read_bare(self, fp: BinaryIO) -> Iterator[Record]:
        """`read` without the carried context (no record is parsed to follow it): for a pass
        that reads only fields of the records themselves (`calls_after`)."""
        return self.read(fp)

    @property
    def line_records(self) -> bool:
        """True when `read` is the shared line reader (`formats.reader`): then a record is one
        JSONL line, and a reader may count a line without the assistant marker unparsed."""
        return False

    @property
    def context_hook(self) -> Callable[[Record, Context], tuple[Context, Context]] | None:
        """What the readers call on the first and every marked record to carry session context
        (ids, model, cwd) forward; None when the format tracks nothing."""
        return None

    @abstractmethod
    def messages(self, record: Record) -> Iterator[Message]:
        """The assistant messages inside a sound record."""

    def checked_messages(self, record: Record, *, texts: bool = False) -> list[Message]:
        """`messages(record)` as a list (with their texts computed, if asked), or none at all
        and the record rejected when the format's code raises on its data, or when it reads
        no message from a record that names itself an assistant turn (`strangers`)."""
        try:
            found = list(self.messages(record))
            if texts:
                for m in found:
                    m.texts  # noqa: B018 - computed here, under the guard
                    m.native  # noqa: B018
        except Exception as exc:  # noqa: BLE001 - see above
            record.reject(wrong_types(exc))
            return []
        if not found and names_turn(record.raw) and record.error is None:
            where = stranger_turn(record.data)
            if where is not None:
                record.reject(unread_turn(self.id, where))
        return found

    @abstractmethod
    def sites(self, record: Record) -> Iterator[Site]:
        """Every assistant-visible text of the record (never user text, tool calls or results)."""

    @abstractmethod
    def assistant_messages(self, record: Record) -> int:
        """How many assistant messages the record holds (with or without text)."""

    def may_contain_assistant(self, raw: bytes) -> bool:
        """False proves a record's bytes hold no assistant message (so no sites): no parse needed.

        True means "parse to know". A byte-level prefilter for the scan hot path.
        """
        return True

    @abstractmethod
    def apply(
        self,
        records: list[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[list[Record], list[Placement]]:
        """Put repaired texts back and place the reasoning; records may be added, never removed."""

    def edits(
        self,
        records: Sequence[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[Edits, list[Placement]]:
        """`apply`, as the records that change only. `records` may be read lazily from disk
        (index access and single passes); this default builds `apply`'s full list, so a
        format that plans sparsely (`FormatBase`) overrides it to keep memory bounded."""
        originals = list(records)
        after, placements = self.apply(originals, repairs, options)
        return Edits.between(originals, after), placements

    def is_database(self, path: str) -> bool:
        """True when the file at `path` is a database this format changes row by row, in a
        transaction (`apply_database`), rather than a file rewritten from its records."""
        return False

    def apply_database(self, db: Any, repairs: list[Repair]) -> list[Placement]:
        """Apply repairs inside the caller's open transaction on `db` (a DB-API connection)."""
        raise NotImplementedError(f"{self.id} is not a database format")

    def database_digest(self, db: Any) -> str:
        """A digest of the session rows `apply_database` may change (for undo's checks)."""
        raise NotImplementedError(f"{self.id} is not a database format")

    @abstractmethod
    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as the turns `show` prints: prompts, answers, thinking, tool calls."""

    def write(self, records: Iterable[Record], fp: BinaryIO) -> None:
        """Write records out: each one as its bytes plus its original line terminator."""
        chunk: list[bytes] = []
        size = 0
        for record in records:
            chunk.append(record.raw)
            chunk.append(record.eol)
            size += len(record.raw)
            if size >= 1 << 20:
                fp.write(b"".join(chunk))
                chunk, size = [], 0
        if chunk:
            fp.write(b"".join(chunk))

    def __repr__(self) -> str:
        return f"<format {self.id}>"
