"""The contract every session-file format implements, and the values it trades in.

A format module knows one on-disk format: how to recognise it (`detect`), how to
stream it into `Record`s that keep their original bytes (`read`), where the
assistant-visible text is (`sites`), how to put a repaired text back and where
the extracted reasoning goes (`apply`), and how to write records out (`write`).
Untouched records are always written from their original bytes, which is what
makes a read/write round trip byte-identical.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from thinkfix.formats.strangers import names_turn, stranger_turn, unread_turn

if TYPE_CHECKING:
    import pathlib  # annotations only: pathlib costs start-up

    # annotations only: a scan loads no transcript model (#26 item 3)
    from thinkfix.formats.turns import Path, Turn
from thinkfix.formats.quick import Canonical
from thinkfix.formats.records import Context, Record, Site
from thinkfix.formats.repairs import (
    DEFAULT_OPTIONS,
    ApplyOptions,
    Edits,
    Placement,
    Repair,
    TextSlot,
)


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
    #: A clean assistant line as the runtime writes it, counted from one regex pass over a
    #: block (`formats.quick.Canonical`); None: every such line is read one by one.
    canonical: Canonical | None = None
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
    def appends_lines(self) -> bool:
        """A session is whole lines, each record one or more of them standing alone (nothing
        around or between records that a kept one depends on), and its runtime grows it by
        appending: so a file's first lines followed by the lines written since are a session
        of this format, whatever reader reads it. Undo then keeps the lines a runtime appended
        since a repair and puts a repair's records back among lines written since
        (`engine.ledger.restore`); else it refuses a changed file. True for the shared line
        reader (`line_records`: one record a line; a document it reads whole is one record,
        whose bytes undo finds only as the repair wrote them); a format that reads lines its
        own way says so (Kimi's wire.jsonl, read by runs of lines)."""
        return self.line_records

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
