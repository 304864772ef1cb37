"""The per-file scan: one file's records -> a mergeable `ScannedFile`.

Records stream through block by block (memory is bounded by a block plus the largest record). A
line without the format's assistant marker is counted and never parsed (`sparse`); an assistant
record is parsed for the counts, and its texts are normalized only when the byte prefilter says
it may hold a delimiter (`prefilter`). `ScanOptions(prefilter=False)` (`--parse-all`) parses
every line. The engine needs only the `SessionFormat` contract: no format is special-cased here.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from thinkfix.engine.inputs.files import InputFile
from thinkfix.engine.report import InputError, LeakFinding
from thinkfix.engine.scan import native, sparse, structsurvey, trend
from thinkfix.engine.scan.evidence import awaits_call, called, calls_after_from
from thinkfix.engine.scan.findings import CappedFindings, capped_findings, fingerprint_of, text_hash
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import delimiter_candidates
from thinkfix.engine.scan.result import UNKNOWN_MODEL, ScannedFile, bad_kind
from thinkfix.engine.scan.sparse import skippable
from thinkfix.engine.scan.survey import OUTSIDE, Dater, Key
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.common import keeps_visible, refusal_note
from thinkfix.formats.detection import base_name
from thinkfix.formats.reader import in_batches
from thinkfix.formats.records import EMPTY_CONTEXT, Context, Record, Site
from thinkfix.io import remote
from thinkfix.io.errors import ErrorKind


def _session_key(site: Site, path: str) -> str:
    if site.session_id:
        return site.session_id
    # Files without a session id: the file's own name, without archive or compression suffixes.
    return os.path.splitext(base_name(path))[0] if path != "-" else "-"


class _FileScan:
    """The per-record loop of one file, kept to plain dicts and locals: it runs per line."""

    BATCH = 512  # records per delimiter batch when the sparse reader does not apply

    def __init__(self, file: InputFile, fmt: SessionFormat, options: ScanOptions) -> None:
        self.file = file
        self.fmt = fmt
        self.options = options
        self.records = 0
        self.reader: sparse.SparseReader | None = None  # the fast path's, which counts its lines
        self.assistant = 0
        self.leaking = 0
        self.findings: list[LeakFinding] = []
        self.errors: list[InputError] = []
        # per model: assistant messages, leaking messages, findings
        self.by_model: dict[str, list[int]] = {}
        self.ctx_after: Context | None = None  # set when the line reader ran
        self.crlf_after = False
        # per (day, model): assistant messages, leaking messages, findings (timed scans)
        self.by_day: dict[tuple[str, str], list[int]] = {}
        self._file_time: float | None = None
        self._days: dict[float, str] = {}  # UTC day by day number (`_in_window`): ~5 µs each
        # (finding, session, leaked-text hash) of findings whose message is known by its place
        # (no message id): a byte range scanned apart renumbers them (engine/scan/split.py).
        self.positional: list[tuple[int, str, str]] = []
        # (message id, findings start, end, all reasoning) of emptied texts whose refusal
        # waits for the rest of the file (formats that spread a message over records)
        self.spread: list[tuple[str, int, int, bool]] = []
        # records whose text awaits rule 4's evidence from a later record (`evidence`):
        # judged at the file's end, after one more read that only they cause
        self.awaiting: list[Record] = []
        # set when they could not be judged: a byte range scanned apart (engine/scan/split.py)
        self.unsettled = False
        # where their findings begin: after every other finding of the file, so the pieces
        # of a file merge into the order one pass gives (engine/scan/split.py)
        self.deferred_from: int | None = None
        self.windowed = windowed = options.since is not None or options.until is not None
        self.dater = Dater(self._in_window, windowed)  # a clean line's day, from its bytes

    def run(
        self,
        fp: BinaryIO,
        *,
        start: int = 0,
        ctx: Context = EMPTY_CONTEXT,
        crlf: bool = False,
        numbered: bool = True,
        origin: int | None = None,
    ) -> None:
        """Scan the records of `fp`. An incremental scan hands a stream that begins at line
        `start` of a JSONL file, with the context the lines before it left (`ctx`, `crlf`);
        the reader's context after the last line is then kept in `ctx_after`. `numbered`:
        the records' indices are their places in the whole file. Not so for a byte range
        scanned apart (`engine.scan.split`): its indices count from `start` at byte `origin`
        of the file, where its texts awaiting evidence are settled from (left `unsettled`
        when `origin` is None)."""
        fmt, options = self.fmt, self.options
        candidates = delimiter_candidates(options.policy) if options.prefilter else None
        batches: Iterable[list[Record]]
        reader = self.reader = None
        timed = options.timed
        if options.prefilter and sparse.supports(fmt) and (start or not sparse.is_document(fp)):
            # A clean line is counted from its bytes (`quick_messages`), dated from them where they
            # prove it (`survey.Dater`); the block counter pays where it dates or hyperscan runs.
            reader = self.reader = sparse.SparseReader(
                fmt,
                fp,
                start=start,
                ctx=ctx,
                crlf=crlf,
                candidates=candidates,
                quick=self._quick_timed if timed else self._quick,
                surveyor=structsurvey.surveyor(fmt, options.policy, self.dater.days, self.windowed)
                if timed or native.warm(0)
                else None,
                bulk=self._bulk,
                content=fmt.canonical.content if fmt.canonical is not None else None,
            )
            batches = reader.blocks()
        else:
            records = self._filtered(fmt.read(fp), options.prefilter)
            batches = in_batches(records, self.BATCH)
        count = self._count_timed if timed else self._count
        for batch in batches:
            leaky = candidates([r.raw for r in batch]) if candidates is not None else None
            for i, record in enumerate(batch):
                if record.error is not None:
                    self._bad(record)
                elif record.data is None:
                    continue
                elif leaky is None or i in leaky:
                    self._record(record)
                else:
                    count(record)
        if reader is not None:
            self.records = reader.records - start
            self.ctx_after, self.crlf_after = reader.ctx, reader.crlf
        self.deferred_from = len(self.findings)
        if self.awaiting:
            self._settle_awaiting(0 if numbered else origin, 0 if numbered else start)
        if self.spread:
            self._settle_spread()

    def _filtered(self, records: Iterable[Record], prefilter: bool) -> Iterator[Record]:
        """Every non-blank record, or (with the prefilter) those that may hold an assistant
        message, and always an unterminated last line (so a truncated record is reported)."""
        fmt = self.fmt
        for record in records:
            self.records += 1
            raw = record.raw
            if not raw or raw.isspace():
                # blank; or a record a reader kept no bytes of (past the record limit), whose
                # error is its whole report (review8, finding 12: dropped unseen, exit 0)
                if record.error is not None:
                    yield record
                continue
            if prefilter and skippable(fmt, record):
                continue
            yield record

    def _bad(self, record: Record) -> None:
        error = record.error or ""
        self.errors.append(InputError(self.file.path, record.line, bad_kind(error), error))

    def _quick(self, raw: bytes, ctx: Context) -> bool:
        """Count a clean line's messages from its bytes, if its format can (True: counted)."""
        models = self.fmt.quick_messages(raw, ctx)
        if models is None:
            return False
        by_model = self.by_model
        for model in models:
            key = model or ctx.model or UNKNOWN_MODEL
            tally = by_model.get(key)
            if tally is None:
                by_model[key] = [1, 0, 0]
            else:
                tally[0] += 1
        self.assistant += len(models)
        return True

    def _quick_timed(self, raw: bytes, ctx: Context) -> bool:
        """`_quick` for a timed scan: the line's messages all take the day its bytes prove
        (`survey.Dater`), else the line is parsed."""
        models = self.fmt.quick_messages(raw, ctx)
        if models is None:
            return False
        when = self.dater.when(raw)
        if when is None:
            return False
        if when == OUTSIDE:
            return True  # outside the window: neither counted nor checked
        by_model, by_day = self.by_model, self.by_day
        for model in models:
            key = model or ctx.model or UNKNOWN_MODEL
            by_model.setdefault(key, [0, 0, 0])[0] += 1
            by_day.setdefault((when, key), [0, 0, 0])[0] += 1
        self.assistant += len(models)
        return True

    def _bulk(self, keys: list[Key], ctx: Context) -> None:
        """Count clean lines the block counter accepted (`survey.Surveyor`): one message each, by model
        and (in a timed scan) by day."""
        by_model, by_day, timed = self.by_model, self.by_day, self.options.timed
        for (model, day), n in Counter(keys).items():
            key = model or ctx.model or UNKNOWN_MODEL
            by_model.setdefault(key, [0, 0, 0])[0] += n
            if timed:
                by_day.setdefault((day, key), [0, 0, 0])[0] += n
        self.assistant += len(keys)

    def _count(self, record: Record) -> None:
        """The hot path: a record with no possible delimiter only adds to the counts (its
        texts are still walked: a text of a shape the reader refuses is an error, as when
        the record is checked, `formats.values`)."""
        by_model, ctx_model = self.by_model, record.ctx.model
        messages = self.fmt.checked_messages(record, texts=True)
        if record.error is not None:
            self._bad(record)
        for m in messages:
            key = m.model or ctx_model or UNKNOWN_MODEL
            tally = by_model.get(key)
            if tally is None:
                by_model[key] = [1, 0, 0]
            else:
                tally[0] += 1
            self.assistant += 1

    def _count_timed(self, record: Record) -> None:
        """`_count` for a scan that needs each message's day or keeps a time window."""
        ctx_model = record.ctx.model
        messages = self.fmt.checked_messages(record, texts=True)
        if record.error is not None:
            self._bad(record)
        for m in messages:
            when = self._day(record, m.path)
            if when is None:
                continue
            key = m.model or ctx_model or UNKNOWN_MODEL
            self.by_model.setdefault(key, [0, 0, 0])[0] += 1
            self.by_day.setdefault((when, key), [0, 0, 0])[0] += 1
            self.assistant += 1

    def _day(self, record: Record, message_path: Any) -> str | None:
        """The message's UTC day, `trend.UNDATED` for a message with no time of its own, or
        None when it falls outside the time window (which an undated message is judged by
        its file's modification time: the only sign of when it was written)."""
        when = trend.message_time(record.data, message_path) if message_path is not None else None
        if when is not None:
            return self._in_window(when)
        if self.options.since is None and self.options.until is None:
            return trend.UNDATED
        if self._file_time is None:
            try:
                real = self.file.real_path
                self._file_time = (
                    remote.modified(real) if remote.is_url(real) else os.stat(real).st_mtime
                )
            except OSError:
                self._file_time = 0.0
        return None if self._in_window(self._file_time) is None else trend.UNDATED

    def _in_window(self, when: float) -> str | None:
        """The UTC day of a time (kept per day number), or None outside the time window."""
        options = self.options
        if (options.since is not None and when < options.since) or (
            options.until is not None and when >= options.until
        ):
            return None
        number, rest = divmod(when, 86400)
        if not 1 <= rest <= 86399:  # rounded to the microsecond, it may be the next day
            return trend.day(when)
        return self._days.get(number) or self._days.setdefault(number, trend.day(when))

    def _messages(self, record: Record) -> list[tuple[str, list[Any], str | None]]:
        """(model, text paths, day) per assistant message of a sound record; the day is ""
        unless the scan is timed, and None for a message outside the time window."""
        timed = self.options.timed
        ctx_model = record.ctx.model
        return [
            (
                m.model or ctx_model or UNKNOWN_MODEL,
                [t.path for t in m.texts],
                self._day(record, m.path) if timed else "",
            )
            for m in self.fmt.checked_messages(record, texts=True)
        ]

    def _record(self, record: Record, followed: bool | None = None) -> None:
        """Count and check one parsed record. A text that awaits rule 4's evidence from a
        later record defers the whole record to the file's end (`_settle_awaiting`), which
        judges it again with `followed` known (True: its message calls a tool later)."""
        messages = self._messages(record)
        if record.error is not None:  # the format rejected a field's type
            self._bad(record)
            return
        judged = self._judged(record, messages, followed)
        if judged is None:
            self.awaiting.append(record)
            return
        by_model, by_day = self.by_model, self.by_day
        counted = 0
        for model, _, when in messages:
            if when is None:
                continue
            by_model.setdefault(model, [0, 0, 0])[0] += 1
            if when:
                by_day.setdefault((when, model), [0, 0, 0])[0] += 1
            counted += 1
        self.assistant += counted
        if not counted:
            return
        leaking: dict[int, int] = {}
        emptied: list[tuple[Site, int, int, bool]] = []  # all-reasoning texts, their findings
        for site, i, model, capped in judged:
            start = len(self.findings)
            found, text = self._site(site, model or None, capped)
            if found:
                leaking[i] = leaking.get(i, 0) + found
                if text.visible_empty:  # (None: not examined to its end, so not known)
                    emptied.append((site, start, len(self.findings), text.extracted))
        if emptied:
            self._mark_refused(record, emptied)
        for i, found in leaking.items():
            model = messages[i][0] if i < len(messages) else UNKNOWN_MODEL
            tally = by_model[model]
            tally[1] += 1
            tally[2] += found
            when = messages[i][2] if i < len(messages) else ""
            if when:
                day_tally = by_day[(when, model)]
                day_tally[1] += 1
                day_tally[2] += found
            self.leaking += 1

    def _judged(
        self,
        record: Record,
        messages: list[tuple[str, list[Any], str | None]],
        followed: bool | None,
    ) -> list[tuple[Site, int, str, CappedFindings]] | None:
        """(site, its message's place, model, findings) of each text to check; None when one
        awaits evidence from a later record (`evidence.awaits_call`) not yet known."""
        owner = {path: i for i, (_, paths, _) in enumerate(messages) for path in paths}
        options = self.options
        out = []
        for site in self.fmt.sites(record):
            i = owner.get(site.path, 0)
            if i < len(messages) and messages[i][2] is None:
                continue  # outside the time window
            model = messages[i][0] if i < len(messages) else site.model or UNKNOWN_MODEL
            if options.model_disabled(model):
                continue
            if followed:
                site = called(site)
            capped = capped_findings(
                site.text,
                site.native_reasoning,
                options.policy,
                options.max_findings,
                followed_by_tool_call=site.followed_by_tool_call,
                model=model or None,
            )
            if followed is None and awaits_call(self.fmt, site, capped.findings):
                return None
            out.append((site, i, model, capped))
        return out

    def _settle_awaiting(self, origin: int | None, first: int) -> None:
        """The records whose texts waited for rule 4's evidence (`_record`), judged now that
        the file has been read: one more read, from `origin` (the byte where the record
        numbered `first` starts; None: unknown), finds which messages call a tool after
        their text (`SessionFormat.calls_after`), only when such a text was found (rare).
        Evidence lies only after its text, so a byte range reads on past its own end just
        as far as its last waiting message needs, not from the file's start."""
        pending, self.awaiting = self.awaiting, []
        calls: frozenset[int] = frozenset()
        if origin is None:
            self.unsettled = True
        else:
            try:
                with self.file.open() as fp:
                    if origin:
                        fp.seek(origin)
                    calls = calls_after_from(self.fmt, fp, pending, first)
            except (OSError, ValueError, EOFError):
                pass
        for record in pending:
            self._record(record, record.index in calls)

    def _mark_refused(self, record: Record, emptied: list[tuple[Site, int, int, bool]]) -> None:
        """Say which leaks `thinkfix repair` refuses: all reasoning, and the message shows
        nothing else (the same rule repair applies), so a scan after a repair explains them."""
        paths = {(site.record_index, site.path) for site, _, _, _ in emptied}
        for site, start, end, reasoning in emptied:
            if keeps_visible(record.data, site, paths):
                continue
            if self.fmt.shown_by_later_call(site):
                continue  # its message shows its tool call, on a later record
            if self.fmt.spread and site.message_id is not None and site.path[-1] == "text":
                # its message may call a tool on a later record: known at the file's end
                self.spread.append((site.message_id, start, end, reasoning))
                continue
            self._refuse(start, end, reasoning)

    def _refuse(self, start: int, end: int, reasoning: bool) -> None:
        note = refusal_note(reasoning)
        self.findings[start:end] = [f._replace(refused=note) for f in self.findings[start:end]]

    def _settle_spread(self) -> None:
        """The refusals that waited for the rest of their message (`_mark_refused`): a text
        whose message calls a tool on another record is repaired (the text block goes), as
        `FormatBase.plan_emptied` does; the others are refused. The file is read once more,
        only when such a text was found (rare: an all-reasoning message)."""
        pending, self.spread = self.spread, []
        try:
            with self.file.open() as fp:
                called = self.fmt.called(self.fmt.read(fp))
        except (OSError, ValueError, EOFError):
            called = frozenset()
        for message_id, start, end, reasoning in pending:
            if message_id not in called:
                self._refuse(start, end, reasoning)

    def _site(
        self, site: Site, model: str | None, capped: CappedFindings
    ) -> tuple[int, CappedFindings]:
        """The findings of one text, appended; how many were reported, and what was found."""
        options = self.options
        findings = capped.findings
        if capped.capped:
            rest = (
                f"; the last {capped.unexamined:,} characters of it were not examined"
                if capped.unexamined
                else ""
            )
            self.errors.append(
                InputError(
                    self.file.path,
                    site.line,
                    ErrorKind.TOO_MANY_FINDINGS,
                    f"{site.json_path}: more than {options.max_findings} findings in one message: "
                    f"the first {len(findings)} are reported, and {capped.more:,} more were "
                    f"found{rest} (--max-findings raises the cap)",
                )
            )
        if not findings:
            return 0, capped
        # not a clean scan's; `import as`: a `from` import of a module looks up `__path__`
        import thinkfix.engine.secrets.rules as rules  # noqa: PLR0402

        path, fmt_id = self.file.path, self.fmt.id
        message = site.message_id or f"#{site.message_index}"
        session = _session_key(site, path)
        count = 0
        for f in findings:
            kind = f.kind
            if kind not in options.kinds:
                continue
            leaked = site.text[f.start : f.end]
            leaked_hash = text_hash(leaked)
            if not site.message_id:
                self.positional.append((len(self.findings), session, leaked_hash))
            self.findings.append(
                LeakFinding(
                    path=path,
                    line=site.line,
                    json_path=site.json_path,
                    format=fmt_id,
                    kind=kind,
                    tag=f.tag,
                    start=f.start,
                    end=f.end,
                    leaked_chars=f.end - f.start,
                    session_id=site.session_id,
                    message_id=site.message_id,
                    message_index=site.message_index,
                    model=model,
                    fingerprint=fingerprint_of(fmt_id, session, message, leaked_hash),
                    snippet=rules.snippet(leaked, options.snippet_chars, options.redaction),
                )
            )
            count += 1
        return count, capped

    def result(self) -> ScannedFile:
        return ScannedFile(
            path=self.file.path,
            format=self.fmt.id,
            size=self.file.size,
            records=self.records,
            assistant_messages=self.assistant,
            leaking_messages=self.leaking,
            findings=tuple(self.findings),
            errors=tuple(self.errors),
            by_model=tuple(sorted((m, a, lk, n) for m, (a, lk, n) in self.by_model.items())),
            by_day=tuple(sorted((d, m, a, lk, n) for (d, m), (a, lk, n) in self.by_day.items())),
        )
