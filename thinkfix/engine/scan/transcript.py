"""Read one session file into a Transcript, as stored or as repair would leave it."""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import BinaryIO

import zstandard

from thinkfix.engine.scan import evidence
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat, wrong_types
from thinkfix.formats.records import Record, Site, set_record_limit
from thinkfix.formats.turns import Part, PartKind, Path, Role, Turn
from thinkfix.io.compression import open_read
from thinkfix.normalizer.batch import normalize
from thinkfix.normalizer.policy import DEFAULT, Policy


class TranscriptError(Exception):
    """The session cannot be shown: unreadable, or in no format thinkfix knows."""


@dataclass(frozen=True)
class Transcript:
    """A session's turns in file order, with the records that could not be read."""

    path: str
    format_id: str
    turns: tuple[Turn, ...]
    problems: tuple[str, ...] = ()  # "line 7: not JSON ..." for records shown as missing


def load(
    path: str,
    format_name: str | None = None,
    *,
    normalized: bool = False,
    policy: Policy = DEFAULT,
    max_record_size: int | None = None,
) -> Transcript:
    """The transcript of the session at `path` (`.gz`/`.zst`/`.bz2`/`.xz` read transparently).

    `format_name` skips detection. With `normalized`, each assistant-visible text is
    split as repair would split it: the format's own sites say which texts those are,
    with their native reasoning, and signed texts stay as they are. A record longer than
    `max_record_size` (default: the process's record limit; 0: none) is read past, never
    held, and named among the problems.
    """
    if max_record_size is not None:
        set_record_limit(max_record_size)
    try:
        fmt = registry.get(format_name) if format_name else registry.detect_file(path)
        with open_read(path) as fp:
            turns, problems = _read(fmt, fp, normalized, policy)
    except registry.UnknownFormatError as exc:
        raise TranscriptError(str(exc)) from None
    except IsADirectoryError:
        raise TranscriptError(f"{path}: is a directory; show takes one session file") from None
    except OSError as exc:
        raise TranscriptError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (EOFError, zlib.error, zstandard.ZstdError) as exc:
        raise TranscriptError(f"{path}: cannot decompress: {exc}") from None
    if not turns and problems:
        raise TranscriptError(f"{path}: nothing readable ({problems[0]})")
    return Transcript(os.fspath(path), fmt.id, tuple(merge(turns)), tuple(problems))


def _read(
    fmt: SessionFormat, fp: BinaryIO, normalized: bool, policy: Policy
) -> tuple[list[Turn], list[str]]:
    adapter = fmt.turns
    turns: list[Turn] = []
    problems: list[str] = []
    records = 0
    read: Iterable[Record] = fmt.read(fp)
    calls: frozenset[int] = frozenset()
    if normalized and fmt.calls_later:
        # rule 4's evidence may be on a later record: the session is held whole anyway
        read = list(read)
        calls = _later_calls(fmt, read, policy)
    for record in read:
        if record.blank:
            continue
        records += 1
        if record.error is not None:
            problems.append(f"line {record.line}: {record.error}")
            continue
        sites = _sites(fmt, record, record.index in calls) if normalized else {}
        found: list[Turn] = []
        try:
            found = list(adapter(record))
        except Exception as exc:  # noqa: BLE001 - odd field types: this record only
            record.reject(wrong_types(exc))
        if record.error is not None:  # rejected here or by the format's own sites
            problems.append(f"line {record.line}: {record.error}")
            continue
        for turn in found:
            if sites:
                turn = normalized_turn(turn, sites, policy)
            turns.append(replace(turn, lines=(record.line, record.line)))
    if records == 1:  # one document: its line number locates nothing, its JSON paths do
        turns = [replace(turn, lines=(0, 0)) for turn in turns]
    return turns, problems


def _sites(fmt: SessionFormat, record: Record, followed: bool = False) -> dict[Path, Site]:
    return {site.path: evidence.called(site) if followed else site for site in fmt.sites(record)}


def _later_calls(fmt: SessionFormat, records: list[Record], policy: Policy) -> frozenset[int]:
    """The records whose texts await rule 4's evidence (`evidence.awaits_call`) and whose
    message calls a tool on a later record, as scan and repair judge them."""
    waiting = [
        site
        for record in records
        if not record.blank and record.error is None
        for site in fmt.sites(record)
        if not site.signed
        and evidence.awaits_call(
            fmt,
            site,
            normalize(
                site.text,
                native_reasoning=site.native_reasoning,
                policy=policy,
                model=site.model,
            ).findings,
        )
    ]
    return evidence.followed(fmt, records, waiting) if waiting else frozenset()


def normalized_turn(turn: Turn, sites: Mapping[Path, Site], policy: Policy = DEFAULT) -> Turn:
    """The turn with each site's text split into recovered thinking and the visible rest.

    The recovered segments come right before the text they came from, which is where
    repair puts them; segments that repeat the native reasoning are already dropped.
    """
    parts: list[Part] = []
    for part in turn.parts:
        site = sites.get(part.path) if part.path is not None else None
        if part.kind is not PartKind.TEXT or site is None or site.signed:
            parts.append(part)
            continue
        result = normalize(
            site.text,
            native_reasoning=site.native_reasoning,
            policy=policy,
            followed_by_tool_call=site.followed_by_tool_call,
            model=site.model,
        )
        if not result.changed:
            parts.append(part)
            continue
        parts.extend(Part(PartKind.THINKING, seg, recovered=True) for seg in result.extracted)
        if result.visible.strip():
            parts.append(replace(part, text=result.visible))
    return replace(turn, parts=tuple(parts))


def merge(turns: Iterable[Turn]) -> Iterator[Turn]:
    """Turns as a reader sees them.

    Consecutive turns of one speaker with the same message id become one,
    tool results get the name of their call when they lack one, a system prompt that
    repeats the previous one is dropped (request logs repeat it on every line), and a
    turn with no parts and no note is dropped.
    """
    names: dict[str, str] = {}
    last_system: tuple[Part, ...] | None = None
    pending: Turn | None = None
    for turn in turns:
        turn = _named(turn, names)
        if not turn.parts and turn.note is None:
            continue
        if turn.role is Role.SYSTEM:
            if turn.parts == last_system and turn.note == "system prompt":
                continue
            last_system = turn.parts
        if pending is not None and _continues(pending, turn):
            pending = _joined(pending, turn)
            continue
        if pending is not None:
            yield pending
        pending = turn
    if pending is not None:
        yield pending


def _named(turn: Turn, names: dict[str, str]) -> Turn:
    changed = False
    parts = []
    for part in turn.parts:
        if part.kind is PartKind.TOOL_CALL and part.call_id and part.name:
            names[part.call_id] = part.name
        elif part.kind is PartKind.TOOL_RESULT and not part.name and part.call_id in names:
            part = replace(part, name=names[part.call_id])
            changed = True
        parts.append(part)
    return replace(turn, parts=tuple(parts)) if changed else turn


def _continues(previous: Turn, turn: Turn) -> bool:
    return (
        turn.role is previous.role
        and turn.message_id is not None
        and turn.message_id == previous.message_id
    )


def _joined(first: Turn, second: Turn) -> Turn:
    return replace(
        first,
        parts=first.parts + second.parts,
        model=first.model or second.model,
        note=second.note or first.note,
        lines=(first.lines[0], second.lines[1]),
    )
