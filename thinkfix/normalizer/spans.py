"""The values the normalizer returns: labelled spans that tile the input, and what derives from them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar, overload

from thinkfix._serialize import Plain, record
from thinkfix.normalizer.kinds import Label, LeakKind


@dataclass(frozen=True)
class Span:
    """A half-open slice [start, end) of the original text with its label."""

    start: int
    end: int
    label: Label
    block: int | None = None  # index of the reasoning block it belongs to, if any


@dataclass(frozen=True)
class Finding(Plain):
    """One leak: its kind, the delimiter that showed it, and the offsets it covers."""

    kind: LeakKind
    tag: str
    start: int
    end: int


_new = object.__new__


def spans_of(rows: Iterable[tuple[int, int, Label, int | None]]) -> tuple[Span, ...]:
    """`Span(*row)` for each (start, end, label, block) row, made without the frozen
    dataclass's `__init__` (an `object.__setattr__` call per field, ~0.3 µs a span): every
    normalize makes a span per labelled run of its text."""
    out = []
    for start, end, label, block in rows:
        span = _new(Span)
        fields = span.__dict__
        fields["start"], fields["end"], fields["label"], fields["block"] = start, end, label, block
        out.append(span)
    return tuple(out)


def new_finding(kind: LeakKind, tag: str, start: int, end: int) -> Finding:
    """`Finding(kind, tag, start, end)`, made as `spans_of` makes a span: the scanner makes
    one per leak it finds."""
    finding = _new(Finding)
    fields = finding.__dict__
    fields["kind"], fields["tag"], fields["start"], fields["end"] = kind, tag, start, end
    return finding


_T = TypeVar("_T")


class _once(Generic[_T]):
    """`functools.cached_property` without its lock (Python 3.12 dropped it too): a `Result`
    is made per normalized text and read once or twice, and the lock cost ~1.5 µs a read."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _once[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object, owner: type | None = None) -> _T | _once[_T]:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)  # the instance's value from now on
        return value


_WS = re.compile(r"\s+")


def squash_whitespace(text: str) -> str:
    """Whitespace-normalised form used to compare reasoning segments (rule 9)."""
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True)
class Result:
    """The partition of `text` into spans, with the visible text, reasoning and findings derived."""

    text: str
    spans: tuple[Span, ...]
    findings: tuple[Finding, ...] = ()
    native: str = ""  # the native reasoning, delimiters stripped and trimmed

    @_once
    def visible(self) -> str:
        text = self.text
        return "".join(text[s.start : s.end] for s in self.spans if s.label is Label.VISIBLE)

    @_once
    def extracted(self) -> tuple[str, ...]:
        """The reasoning segments taken from the text and kept, in order (not the native)."""
        text = self.text
        segments: dict[int, list[str]] = {}
        for s in self.spans:
            if s.label is Label.THINKING and s.block is not None:
                segments.setdefault(s.block, []).append(text[s.start : s.end])
        return tuple(
            seg for seg in ("".join(parts) for _, parts in sorted(segments.items())) if seg
        )

    @_once
    def thinking(self) -> tuple[str, ...]:
        """Every reasoning segment, native first."""
        return ((self.native,) if self.native else ()) + self.extracted

    @property
    def thinking_text(self) -> str:
        """The reasoning as one string, segments joined by a blank line (rule 8)."""
        return "\n\n".join(self.thinking)

    @property
    def changed(self) -> bool:
        """True when the visible text differs from the input."""
        return any(s.label is not Label.VISIBLE for s in self.spans)

    @property
    def leaked_chars(self) -> int:
        """Characters removed from the visible text."""
        return sum(s.end - s.start for s in self.spans if s.label is not Label.VISIBLE)

    def to_dict(self) -> dict[str, object]:
        return record(self, ("visible", "thinking", "findings"))


def new_result(
    text: str,
    spans: tuple[Span, ...],
    findings: tuple[Finding, ...],
    native: str,
    known: tuple[str, tuple[str, ...]] | None = None,
) -> Result:
    """`Result(text, spans, findings, native)` without the frozen dataclass's `__init__`
    (as `spans_of`): one per normalize. `known`: its `visible` and `extracted`, where the
    caller has them at hand (`shapes`), kept as their first read would keep them (deriving
    them from the spans costs ~30 k instructions a text, and a scan reads both)."""
    result = _new(Result)
    fields = result.__dict__
    fields["text"], fields["spans"], fields["findings"], fields["native"] = (
        text,
        spans,
        findings,
        native,
    )
    if known is not None:
        fields["visible"], fields["extracted"] = known
    return result


class Delta(NamedTuple):
    """What one `StreamNormalizer.feed` or `finish` call releases (a tuple: cheap per token)."""

    visible: str = ""
    thinking: str = ""

    def __bool__(self) -> bool:
        return bool(self.visible or self.thinking)
