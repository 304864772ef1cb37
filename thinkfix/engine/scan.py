"""Scan session files for leaked reasoning: one file -> a mergeable `ScannedFile`, many -> a `Report`.

The unit of work is one file, so files run in any order, in any process, and
`build_report` sorts everything: `--jobs 8` and `--jobs 1` give the same report.
Records stream through block by block (memory is bounded by a block plus the
largest record). A line without the format's assistant marker is counted and
never parsed (`sparse`); an assistant record is parsed for the counts, and its
texts are normalized only when the byte prefilter says it may hold a delimiter
(`prefilter`). `ScanOptions(prefilter=False)` (`--parse-all`) parses every line.

What is reported: every finding whose kind changes the text. `unclosed_inline`
(an opener mid-text that never closed and stays visible) is a notice, left out
unless selected (`--select all` or `--select unclosed_inline`); when selected it
counts like any other kind. A message leaks when it has at least one reported
finding.

The engine needs only the `SessionFormat` contract (`read`, `messages`,
`checked_messages`, `sites`, `assistant_marker`, `line_records`, ...): no format is
special-cased here.
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

from thinkfix._version import __version__
from thinkfix.engine import parallel, sparse, trend
from thinkfix.engine.inputs import (
    DISABLED,
    UNKNOWN,
    Candidate,
    InputFile,
    InputOptions,
    WalkStats,
    glob_match,
    resolve,
    walk,
)
from thinkfix.engine.paths import display_path, with_display_paths
from thinkfix.engine.prefilter import delimiter_candidates
from thinkfix.engine.progress import NULL_PROGRESS, Progress
from thinkfix.engine.report import (
    ErrorKind,
    InputError,
    LeakFinding,
    MessageCounts,
    Report,
    SkippedFile,
    Summary,
)
from thinkfix.engine.secrets import Redaction
from thinkfix.engine.secrets import snippet as redacted_snippet
from thinkfix.formats import registry
from thinkfix.formats.base import (
    DEFAULT_RECORD_LIMIT,
    EMPTY_CONTEXT,
    TOO_LARGE,
    Context,
    Record,
    SessionFormat,
    Site,
    set_record_limit,
)
from thinkfix.formats.common import keeps_visible, refusal_note
from thinkfix.formats.detection import base_name
from thinkfix.formats.quick import record_time
from thinkfix.io import remote
from thinkfix.normalizer import DEFAULT, Finding, LeakKind, Policy, Result
from thinkfix.normalizer.grammar import grammar_for

#: Kinds reported unless `--select` says otherwise: every kind that changes the text.
#: `unclosed_inline` is a notice (the opener stays visible); select it to see it.
DEFAULT_KINDS: frozenset[str] = frozenset(k.value for k in LeakKind if k.changes_text)
ALL_KINDS: frozenset[str] = frozenset(k.value for k in LeakKind)

UNKNOWN_MODEL = ""  # the by_model key for messages whose model is not recorded


def select_kinds(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> frozenset[str]:
    """The kinds to report: `select` (or the default set) minus `ignore`; `ALL` selects all.

    Unknown names raise ValueError listing the valid ones.
    """
    chosen = set(DEFAULT_KINDS)
    select, ignore = (
        [s.strip().lower() for s in select if s.strip()],
        [s.strip().lower() for s in ignore if s.strip()],
    )
    for name in select + ignore:
        if name != "all" and name not in ALL_KINDS:
            raise ValueError(
                f"unknown leak kind {name!r} (choose from "
                + ", ".join(sorted(ALL_KINDS))
                + ", all)"
            )
    if select:
        chosen = set(ALL_KINDS) if "all" in select else set(select)
    chosen -= set(ALL_KINDS) if "all" in ignore else set(ignore)
    return frozenset(chosen)


@dataclass(frozen=True)
class ScanOptions:
    """Everything that decides what a scan finds (not how it is shown)."""

    policy: Policy = DEFAULT
    kinds: frozenset[str] = DEFAULT_KINDS
    inputs: InputOptions = field(default_factory=InputOptions)
    # Opt-outs for applications whose own prompts use `<think>` as an annotation:
    # globs over model names (case-insensitive) and over file paths.
    disabled_models: tuple[str, ...] = ()
    disabled_paths: tuple[str, ...] = ()
    # A run whose paths hold no session file is an error unless this says it may happen
    # (a pre-commit hook on a commit that touches no session).
    allow_no_sessions: bool = False
    disabled_base: str | None = None  # folder the path globs are relative to (the config's)
    prefilter: bool = True  # skip parsing records the byte tests prove irrelevant
    # Trend: counts by day (from each message's time, else its file's) and a time window
    # (seconds since the epoch: since inclusive, until exclusive); messages outside it are
    # neither counted nor checked.
    by_day: bool = False
    since: float | None = None
    until: float | None = None

    @property
    def timed(self) -> bool:
        """Does the scan need each message's time?"""
        return self.by_day or self.since is not None or self.until is not None

    snippet_chars: int = 200
    # Findings reported per message at most (`--max-findings`, 0: no cap): past it the rest
    # of the message is not examined, so a record of millions of delimiters costs about what
    # a clean one does.
    max_findings: int = 1000
    # Records longer than this many bytes (`--max-record-size`, 0: no limit) are reported
    # as too large and never parsed; a decompressed stream is checked against it too.
    max_record_size: int = DEFAULT_RECORD_LIMIT
    # What a finding's snippet may show: secrets are masked before the snippet is cut, so
    # no prefix of a credential survives the cut (`--redact`).
    redaction: Redaction = Redaction.SECRETS

    def path_disabled(self, path: str) -> bool:
        """Does a `disable.paths` glob cover this file?"""
        if not self.disabled_paths or path == "-":
            return False
        candidates = [path]
        if self.disabled_base is not None:
            rel = os.path.relpath(os.path.abspath(path), self.disabled_base)
            if not rel.startswith(".."):
                candidates.append(rel)
        return any(glob_match(p, c) for p in self.disabled_paths for c in candidates)

    def model_disabled(self, model: str | None) -> bool:
        """Does a `disable.models` glob cover this model?"""
        if not self.disabled_models or not model:
            return False
        name = model.lower()
        return any(fnmatch.fnmatchcase(name, p.lower()) for p in self.disabled_models)


@dataclass
class _Tally:
    assistant: int = 0
    leaking: int = 0
    findings: int = 0


@dataclass(frozen=True)
class ScannedFile:
    """What one file contributed: counts, findings, errors; merged by `build_report`."""

    path: str
    format: str | None = None
    size: int = 0
    records: int = 0
    assistant_messages: int = 0
    leaking_messages: int = 0
    findings: tuple[LeakFinding, ...] = ()
    errors: tuple[InputError, ...] = ()
    by_model: tuple[tuple[str, int, int, int], ...] = ()  # (model, assistant, leaking, findings)
    skipped: str | None = None
    # (day, model, assistant, leaking, findings), when the options ask for days
    by_day: tuple[tuple[str, str, int, int, int], ...] = ()

    @property
    def read(self) -> bool:
        """The file was opened and read as a session (possibly with bad lines)."""
        return self.format is not None and self.skipped is None


def fingerprint(fmt: str, session: str, message: str, leaked: str) -> str:
    """Baseline identity: format + session + message + hash of the leaked text, nothing else."""
    return fingerprint_of(fmt, session, message, text_hash(leaked))


def text_hash(leaked: str) -> str:
    import hashlib  # here: a clean scan hashes nothing, and loading OpenSSL costs ~2 ms

    return hashlib.sha256(leaked.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint_of(fmt: str, session: str, message: str, leaked_hash: str) -> str:
    """`fingerprint` from the leaked text's hash (a byte range of a file, scanned apart, knows
    a message's place only once the ranges before it are counted: engine/split.py)."""
    import hashlib

    key = f"{fmt}\0{session}\0{message}\0{leaked_hash}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


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
        # (finding, session, leaked-text hash) of findings whose message is known by its place
        # (no message id): a byte range scanned apart renumbers them (engine/split.py).
        self.positional: list[tuple[int, str, str]] = []

    def run(
        self, fp: BinaryIO, *, start: int = 0, ctx: Context = EMPTY_CONTEXT, crlf: bool = False
    ) -> None:
        """Scan the records of `fp`. An incremental scan hands a stream that begins at line
        `start` of a JSONL file, with the context the lines before it left (`ctx`, `crlf`);
        the reader's context after the last line is then kept in `ctx_after`."""
        fmt, options = self.fmt, self.options
        candidates = delimiter_candidates(options.policy) if options.prefilter else None
        batches: Iterable[list[Record]]
        reader = None
        timed = options.timed
        if options.prefilter and sparse.supports(fmt) and (start or not sparse.is_document(fp)):
            # A clean assistant line is counted from its bytes where the format can say how
            # (`quick_messages`); a timed scan also reads the record's time from its bytes
            # where they prove it (`quick.record_time`), and parses the line otherwise.
            reader = sparse.SparseReader(
                fmt,
                fp,
                start=start,
                ctx=ctx,
                crlf=crlf,
                candidates=candidates,
                quick=self._quick_timed if timed else self._quick,
            )
            batches = reader.blocks()
        else:
            batches = _chunks(self._filtered(fmt.read(fp), options.prefilter), self.BATCH)
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

    def _filtered(self, records: Iterable[Record], prefilter: bool) -> Iterator[Record]:
        """Every non-blank record, or (with the prefilter) those that may hold an assistant
        message, and always an unterminated last line (so a truncated record is reported)."""
        fmt = self.fmt
        for record in records:
            self.records += 1
            raw = record.raw
            if not raw or raw.isspace() or (prefilter and skippable(fmt, record)):
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
        """`_quick` for a timed scan: the line's messages all take the record's own stamp."""
        models = self.fmt.quick_messages(raw, ctx)
        if models is None:
            return False
        stamp = record_time(raw)
        if stamp is None:
            return False
        options = self.options
        if options.since is None and options.until is None:
            when = trend.utc_day(stamp)
            if when is None:
                return False
        else:
            seconds = trend.epoch(stamp)
            if seconds is None:
                return False
            when = self._in_window(seconds)
            if when is None:
                return True  # outside the window: neither counted nor checked
        by_model, by_day = self.by_model, self.by_day
        for model in models:
            key = model or ctx.model or UNKNOWN_MODEL
            by_model.setdefault(key, [0, 0, 0])[0] += 1
            by_day.setdefault((when, key), [0, 0, 0])[0] += 1
        self.assistant += len(models)
        return True

    def _count(self, record: Record) -> None:
        """The hot path: a record with no possible delimiter only adds to the counts."""
        by_model, ctx_model = self.by_model, record.ctx.model
        messages = self.fmt.checked_messages(record)
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
        messages = self.fmt.checked_messages(record)
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
        """The message's UTC day, or None when it falls outside the time window."""
        when = trend.message_time(record.data, message_path) if message_path is not None else None
        if when is None:
            if self._file_time is None:
                try:
                    real = self.file.real_path
                    self._file_time = (
                        remote.modified(real) if remote.is_url(real) else os.stat(real).st_mtime
                    )
                except OSError:
                    self._file_time = 0.0
            when = self._file_time
        return self._in_window(when)

    def _in_window(self, when: float) -> str | None:
        """The UTC day of a time, or None when it falls outside the time window."""
        options = self.options
        if (options.since is not None and when < options.since) or (
            options.until is not None and when >= options.until
        ):
            return None
        return trend.day(when)

    def _messages(self, record: Record) -> list[tuple[str, list[Any], str | None]]:
        """(model, text paths, day) per assistant message of a sound record; the day is ""
        unless the scan is timed, and None for a message outside the time window."""
        fmt = self.fmt
        timed = self.options.timed
        ctx_model = record.ctx.model
        return [
            (
                m.model or ctx_model or UNKNOWN_MODEL,
                [t.path for t in m.texts],
                self._day(record, m.path) if timed else "",
            )
            for m in fmt.checked_messages(record, texts=True)
        ]

    def _record(self, record: Record) -> None:
        messages = self._messages(record)
        if record.error is not None:  # the format rejected a field's type
            self._bad(record)
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
        owner = {path: i for i, (_, paths, _) in enumerate(messages) for path in paths}
        leaking: dict[int, int] = {}
        emptied: list[tuple[Site, int, int, bool]] = []  # all-reasoning texts, their findings
        for site in self.fmt.sites(record):
            i = owner.get(site.path, 0)
            if i < len(messages) and messages[i][2] is None:
                continue  # outside the time window
            model = messages[i][0] if i < len(messages) else site.model or UNKNOWN_MODEL
            if self.options.model_disabled(model):
                continue
            start = len(self.findings)
            found, text = self._site(site, model or None)
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

    def _mark_refused(self, record: Record, emptied: list[tuple[Site, int, int, bool]]) -> None:
        """Say which leaks `thinkfix repair` refuses: all reasoning, and the message shows
        nothing else (the same rule repair applies), so a scan after a repair explains them."""
        paths = {(site.record_index, site.path) for site, _, _, _ in emptied}
        for site, start, end, reasoning in emptied:
            if not keeps_visible(record.data, site, paths):
                note = refusal_note(reasoning)
                self.findings[start:end] = [
                    replace(f, refused=note) for f in self.findings[start:end]
                ]

    def _site(self, site: Site, model: str | None) -> tuple[int, CappedFindings]:
        """The findings of one text, appended; how many were reported, and what was found."""
        options = self.options
        capped = capped_findings(
            site.text,
            site.native_reasoning,
            options.policy,
            options.max_findings,
            followed_by_tool_call=site.followed_by_tool_call,
        )
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
        path, fmt_id = self.file.path, self.fmt.id
        message = site.message_id or f"#{site.message_index}"
        session = _session_key(site, path)
        count = 0
        for f in findings:
            kind = f.kind
            if kind not in options.kinds:
                continue
            leaked = site.text[f.start : f.end]
            if not site.message_id:
                self.positional.append((len(self.findings), session, text_hash(leaked)))
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
                    fingerprint=fingerprint(fmt_id, session, message, leaked),
                    snippet=redacted_snippet(leaked, options.snippet_chars, options.redaction),
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


#: Characters fed to the streaming normalizer at a time on the capped path: small enough
#: that stopping at the cap costs little, large enough that feeding costs nothing.
_CAP_CHUNK = 1 << 14


@dataclass(frozen=True)
class CappedFindings:
    """The findings of one text, at most `cap` of them, and what was left out."""

    findings: tuple[Finding, ...]
    more: int = 0  # further findings in the part examined, not reported
    unexamined: int = 0  # characters at the end of the text not examined at all
    # Whether the text shows nothing once normalized, and whether reasoning came out of it
    # (None when the text was not examined to its end), so no caller normalizes it twice.
    visible_empty: bool | None = None
    extracted: bool = False

    @property
    def capped(self) -> bool:
        return bool(self.more or self.unexamined)


def normalize(text: str, **kwargs: Any) -> Result:
    """`normalizer.normalize`, whose scanner loads with the first text that may hold a
    delimiter: a scan of clean sessions never compiles it (#13 start-up)."""
    from thinkfix.normalizer.batch import normalize as run

    return run(text, **kwargs)


def capped_findings(
    text: str, native: str | None, policy: Policy, cap: int, *, followed_by_tool_call: bool = False
) -> CappedFindings:
    """The findings of `normalize(text)`: all of them, or (past `cap`) the first `cap` and how
    many more there were, stopping early when a long text passes the cap.

    A text that cannot hold more than `cap` findings (fewer candidate characters than two per
    finding) is normalized whole, as always. Otherwise it streams through the same pipeline,
    which gives exactly `normalize`'s findings when it finishes (`StreamNormalizer`'s
    contract), and stops once the cap is passed with text still to read.
    """
    from thinkfix.normalizer.stream import StreamNormalizer

    evidence = followed_by_tool_call
    if cap <= 0 or sum(text.count(c) for c in grammar_for(policy).start_chars) <= 2 * cap:
        result = normalize(
            text, native_reasoning=native, policy=policy, followed_by_tool_call=evidence
        )
        found = result.findings if cap <= 0 else result.findings[:cap]
        return CappedFindings(
            found,
            len(result.findings) - len(found),
            visible_empty=not result.visible.strip(),
            extracted=bool(result.extracted),
        )
    stream = StreamNormalizer(policy, native_reasoning=native, followed_by_tool_call=evidence)
    shown = False
    for at in range(0, len(text), _CAP_CHUNK):
        shown = bool(stream.feed(text[at : at + _CAP_CHUNK]).visible.strip()) or shown
        rest = len(text) - at - _CAP_CHUNK
        if rest > 0 and len(stream.findings) > cap:
            found = stream.findings
            return CappedFindings(found[:cap], len(found) - cap, rest)
    shown = bool(stream.finish().visible.strip()) or shown
    found = stream.findings
    return CappedFindings(
        found[:cap],
        max(0, len(found) - cap),
        visible_empty=not shown,
        extracted=bool(stream.segments),
    )


def bad_kind(error: str) -> ErrorKind:
    """The error kind of a record that could not be used, from its error."""
    if error.startswith("unknown shape"):
        return ErrorKind.BAD_SHAPE
    if error.startswith(TOO_LARGE):
        return ErrorKind.TOO_LARGE
    return ErrorKind.BAD_LINE


def skippable(fmt: SessionFormat, record: Record) -> bool:
    """Scan's rule for a record it need not parse (nor validate): it cannot hold an assistant
    message, and it is not an unterminated last line (which may be a truncated record)."""
    return bool(record.eol) and not fmt.may_contain_assistant(record.raw)


def _chunks(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    batch: list[Record] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def scan_file(item: Candidate | InputFile, options: ScanOptions = ScanOptions()) -> ScannedFile:
    """Detect (if needed) and scan one file. Never raises for a bad file: errors are values,
    and an unexpected exception (a bug met on this file) is an error for this file alone."""
    set_record_limit(options.max_record_size)
    try:
        return _scan_file(item, options)
    except Exception as exc:  # noqa: BLE001 - one odd file must not end a run over thousands
        path = getattr(item, "path", "?")
        return ScannedFile(
            path,
            None,
            max(0, getattr(item, "size", 0) or 0),
            errors=(
                InputError(
                    path,
                    None,
                    ErrorKind.INTERNAL,
                    f"cannot scan: internal error ({type(exc).__name__}: {exc})",
                ),
            ),
        )


def _scan_file(item: Candidate | InputFile, options: ScanOptions) -> ScannedFile:
    file = resolve(item, options.inputs)
    if file.error is not None:
        return ScannedFile(file.path, file.format, file.size, errors=(file.error,))
    if file.skipped is not None:
        return ScannedFile(file.path, file.format, file.size, skipped=file.skipped)
    if options.path_disabled(file.path):
        return ScannedFile(file.path, file.format, file.size, skipped=DISABLED)
    scan = _FileScan(file, file.session_format(), options)
    try:
        with file.open() as fp:
            scan.run(fp)
    except (OSError, EOFError, ValueError) as exc:
        scan.errors.append(
            InputError(
                file.path,
                None,
                ErrorKind.UNREADABLE,
                f"read failed after {scan.records} records: {exc}",
            )
        )
    except Exception as exc:  # noqa: BLE001 - one odd file must not end a run over thousands
        scan.errors.append(
            InputError(
                file.path, None, ErrorKind.UNREADABLE, f"read failed: {type(exc).__name__}: {exc}"
            )
        )
    return scan.result()


# --- many files ------------------------------------------------------------------------------


def error_key(e: InputError) -> tuple[str, int, str, str]:
    return (e.path, -1 if e.line is None else e.line, e.kind, e.message)


def build_report(results: Iterable[ScannedFile], tool_version: str = "") -> Report:
    """Merge per-file results into one `Report`, sorted so processing order never shows."""
    files = records = assistant = leaking = 0
    findings: list[LeakFinding] = []
    errors: list[InputError] = []
    skipped: list[SkippedFile] = []
    by_format: dict[str, _Tally] = {}
    by_model: dict[str, _Tally] = {}
    by_file: dict[str, MessageCounts] = {}
    by_day: dict[str, dict[str, _Tally]] = {}
    for r in results:
        errors.extend(r.errors)
        if r.skipped is not None:
            skipped.append(SkippedFile(r.path, r.skipped))
            continue
        if r.format is None:
            continue
        files += 1
        records += r.records
        assistant += r.assistant_messages
        leaking += r.leaking_messages
        findings.extend(r.findings)
        fmt = by_format.setdefault(r.format, _Tally())
        fmt.assistant += r.assistant_messages
        fmt.leaking += r.leaking_messages
        fmt.findings += len(r.findings)
        for model, a, lk, n in r.by_model:
            tally = by_model.setdefault(model, _Tally())
            tally.assistant, tally.leaking, tally.findings = (
                tally.assistant + a,
                tally.leaking + lk,
                tally.findings + n,
            )
        by_file[r.path] = MessageCounts(
            r.assistant_messages, r.leaking_messages, len(r.findings), r.format
        )
        for day, model, a, lk, n in r.by_day:
            tally = by_day.setdefault(day, {}).setdefault(model, _Tally())
            tally.assistant, tally.leaking, tally.findings = (
                tally.assistant + a,
                tally.leaking + lk,
                tally.findings + n,
            )
    findings.sort()
    summary = Summary(
        files=files,
        records=records,
        assistant_messages=assistant,
        leaking_messages=leaking,
        findings=len(findings),
        leaked_chars=sum(f.leaked_chars for f in findings),
        baselined=sum(1 for f in findings if f.baselined),
        by_kind=dict(sorted(Counter(f.kind for f in findings).items())),
        by_format={
            k: MessageCounts(t.assistant, t.leaking, t.findings)
            for k, t in sorted(by_format.items())
        },
        by_model={
            k: MessageCounts(t.assistant, t.leaking, t.findings)
            for k, t in sorted(by_model.items())
        },
        by_file=dict(sorted(by_file.items())),
        by_day={
            day: {
                m: MessageCounts(t.assistant, t.leaking, t.findings)
                for m, t in sorted(models.items())
            }
            for day, models in sorted(by_day.items())
        },
    )
    return Report(
        summary=summary,
        findings=tuple(findings),
        errors=tuple(sorted(errors, key=error_key)),
        skipped=tuple(sorted(skipped)),
        tool_version=tool_version,
    )


#: Below this many bytes of input, the default `jobs` scans in-process.
POOL_MIN_BYTES = 8 << 20


def default_jobs() -> int:
    """All cores this process may use."""
    return parallel.default_jobs()


def _task(options: ScanOptions, task: Any) -> Any:
    """A worker's unit: a whole file, or a piece of a large one (engine/split.py)."""
    split = _split()
    if isinstance(task, split.Piece):
        return split.scan_piece_safely(task, options)
    return scan_file(task, options)


def _split() -> Any:
    """engine.split, found at run time (it builds on this module, not the reverse)."""
    import importlib

    return importlib.import_module("thinkfix.engine.split")


def scan_files(
    items: Sequence[Candidate | InputFile],
    options: ScanOptions = ScanOptions(),
    *,
    jobs: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> Iterator[ScannedFile]:
    """Scan files, in a process pool when `jobs` > 1, yielding results as they complete.

    With `jobs` left to its default, a small input (under `POOL_MIN_BYTES`) runs in this
    process: starting workers would cost more than it saves. The results are the same. In
    a pool, a file much larger than a worker's share is scanned in pieces (engine/split.py),
    so one huge session does not leave the other cores idle; its pieces merge into the
    result one pass gives. A worker that dies leaves its files to this process.
    """
    total = sum(max(0, getattr(i, "size", 0)) for i in items)
    workers = jobs or default_jobs()
    if not jobs and total < POOL_MIN_BYTES:
        workers = 1
    progress.start(len(items), total)
    try:
        split = _split() if workers > 1 and items else None
        tasks = split.plan(items, options, workers) if split is not None else []
        if split is None or len(tasks) <= 1:  # one process reads them all, in order
            for item in items:
                result = scan_file(item, options)
                progress.advance(result.path, result.size)
                yield result
            return
        # Largest first, so one big file started last does not leave the other workers idle.
        tasks.sort(key=lambda t: -max(0, getattr(t, "size", 0)))
        merger = split.Merger(options)
        outs = parallel.run_or_here(
            _task,
            tasks,
            options,
            min(workers, len(tasks)),
            key=split.key,
            result_key=split.result_key,
        )
        for out in outs:
            for result in merger.add(out):
                progress.advance(result.path, result.size)
                yield result
    finally:
        progress.finish()


def scan(
    paths: Iterable[str],
    options: ScanOptions = ScanOptions(),
    *,
    jobs: int | None = None,
    progress: Progress = NULL_PROGRESS,
    stdin: BinaryIO | None = None,
    walk_stats: WalkStats | None = None,
    dask: str | None = None,
) -> Report:
    """Walk `paths`, scan every session file found, and return the merged `Report`.

    `walk_stats`, when given, learns which exclude patterns matched anything. With `dask`
    (a scheduler address), the files are scanned on that Dask cluster instead of local
    processes; the report is the same."""
    paths = list(paths)
    items = list(walk(paths, options.inputs, stdin=stdin, stats=walk_stats))
    results = (
        scan_files(items, options, jobs=jobs, progress=progress)
        if not dask
        else _dask_runner(items, options, dask, progress)
    )
    report = build_report(results, __version__)
    return with_display_paths(require_sessions(report, paths, options))


def _dask_runner(
    items: Sequence[Candidate | InputFile], options: ScanOptions, address: str, progress: Progress
) -> Iterator[ScannedFile]:
    """engine.distributed's runner, found at run time (it imports this module, not the
    reverse, so the layers stay acyclic)."""
    import importlib

    runner = importlib.import_module("thinkfix.engine.distributed").scan_files_dask
    results: Iterator[ScannedFile] = runner(items, options, address, progress)
    return results


def require_sessions(report: Report, paths: Sequence[str], options: ScanOptions) -> Report:
    """A run that read no session file is an error, not a clean run (unless allowed).

    Green must mean "read and found nothing": when the paths hold no file any format
    claims (all unknown JSON, only empty files, an empty folder), the report gets a
    `no_sessions` error that says what was found and what to do. Files a format
    claimed but the configuration disables count as claimed: the user chose that.
    """
    claimed = report.summary.files or any(s.reason == DISABLED for s in report.skipped)
    if claimed or report.errors or options.allow_no_sessions:
        return report
    where = ", ".join(paths) or "."
    return replace(
        report,
        errors=(
            InputError(where, None, ErrorKind.NO_SESSIONS, no_sessions_message(report, options)),
        ),
    )


def no_sessions_message(report: Report, options: ScanOptions, shown: int = 3) -> str:
    """What the paths held, and the ways out: --format, --exclude, --allow-no-sessions."""
    cwd = os.getcwd()
    by_reason: dict[str, list[str]] = {}
    for s in report.skipped:
        by_reason.setdefault(s.reason, []).append(display_path(s.path, cwd))
    if not by_reason:
        include = ", ".join(options.inputs.include) or "*.jsonl, *.json"
        return (
            "no session file to check: no file is named like one ("
            + include
            + ", compressed or archived copies too) once excludes and ignore files apply. "
            "Name the files, widen --include, or pass --allow-no-sessions where a run "
            "with nothing to check is expected"
        )
    parts = [
        f"{len(files)} {reason}: {name_some(files, shown)}"
        for reason, files in sorted(by_reason.items())
    ]
    n = len(report.skipped)
    text = (
        f"no session file to check: {n} file{'' if n == 1 else 's'} found, none in a "
        f"known session format ({'; '.join(parts)}). "
    )
    if UNKNOWN in by_reason:
        text += (
            "If they are sessions, name their format with --format NAME ("
            + ", ".join(registry.names())
            + "); otherwise leave them out with --exclude "
            "GLOB, or pass"
        )
    else:
        text += "Pass"
    return text + " --allow-no-sessions where a run with nothing to check is expected"


def name_some(paths: Sequence[str], shown: int = 3) -> str:
    """`a, b, c and 4 more`: enough names to find the files, never a wall of them."""
    names = ", ".join(paths[:shown])
    return names + (f" and {len(paths) - shown} more" if len(paths) > shown else "")
