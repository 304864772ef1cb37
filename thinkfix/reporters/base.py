"""The reporter interface: one `Report` in, one document out, and the helpers every format shares.

Reporters never read files and never print; the CLI decides where the text goes. Everything a
reporter emits comes from the report, so the same report always renders to the same bytes.
"""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from thinkfix.engine.report import (
    InputError,
    LeakFinding,
    MessageCounts,
    Report,
    SkippedFile,
    Summary,
)
from thinkfix.io import jsontext
from thinkfix.io.errors import ErrorKind
from thinkfix.normalizer.kinds import LeakKind

if TYPE_CHECKING:  # annotations only: a report without `--check` loads no health value
    from typing import NamedTuple

    from thinkfix.engine.report.health import HealthFinding
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

E = TypeVar("E", bound=Enum)
R = TypeVar("R")
V = TypeVar("V")  # the report value a renderer renders


class OutputFormat(str, Enum):
    """The values of `--output-format` and of `--report FORMAT=PATH`."""

    TEXT = "text"
    JSON = "json"
    JSONL = "jsonl"
    SARIF = "sarif"
    JUNIT = "junit"
    GITHUB = "github"
    MARKDOWN = "markdown"
    OPENMETRICS = "openmetrics"
    CONCISE = "concise"  # path:line:col: kind message, for editors' problem matchers
    GITLAB = "gitlab"  # GitLab Code Quality
    HTML = "html"  # one self-contained page for auditors


class RenderOptions(NamedTuple):
    """What the user asked of the output, as opposed to what the scan found (a NamedTuple: every
    run builds one, and a frozen dataclass costs ~1 ms of start-up to define).

    Machine formats (json, jsonl, sarif, junit, gitlab, openmetrics) are complete data and ignore
    `statistics` and `max_findings`; they shape the human formats (text, markdown) only, and
    `max_findings` caps the html page's findings (it always has every count).
    `show_baselined` shapes what people read in a terminal or on a diff (text, concise, github).
    """

    statistics: bool = False  # add the counts by kind, format, model and file
    color: bool = False  # ANSI styles in text; the CLI decides (terminal, NO_COLOR, --color)
    max_findings: int | None = None  # rows of findings listed; None is the reporter's default
    width: int | None = None  # text columns; None is a fixed width, so files are reproducible
    # Baselined findings are accepted: the text, concise and github formats leave them out
    # unless asked, so what a person reads is what fails the run.
    show_baselined: bool = False
    summary: bool = True  # the text report's box of counts; `-q` leaves it out (the verdict stays)


DEFAULT_OPTIONS = RenderOptions()


class Renderer(ABC, Generic[V]):
    """Turns one kind of report value (a scan's `Report`, a repair's `DiffReport`) into one
    document of one output format.

    A format implements `document`, returning text or bytes, whichever it builds natively (orjson
    builds bytes); `render` and `render_bytes` give callers either without encoding twice.
    """

    media_type: ClassVar[str] = "text/plain; charset=utf-8"
    suffix: ClassVar[str] = ".txt"  # the usual file name ending for this format

    @abstractmethod
    def document(self, report: V, options: RenderOptions) -> str | bytes:
        """The whole document, ending with a newline; bytes are UTF-8."""

    def render(self, report: V, options: RenderOptions = DEFAULT_OPTIONS) -> str:
        """The document as text."""
        doc = self.document(report, options)
        return doc if isinstance(doc, str) else doc.decode("utf-8")

    def render_bytes(self, report: V, options: RenderOptions = DEFAULT_OPTIONS) -> bytes:
        """The document as UTF-8, the encoding every supported format specifies or allows."""
        doc = self.document(report, options)
        return jsontext.encode_text(doc) if isinstance(doc, str) else doc


class Reporter(Renderer[Report]):
    """Turns a `Report` into one document of one output format."""

    format: ClassVar[OutputFormat]
    default_max_findings: ClassVar[int | None] = None  # None lists every finding

    def finding_limit(self, options: RenderOptions) -> int | None:
        """How many findings to list: the option when given, else this reporter's default."""
        if options.max_findings is not None:
            return options.max_findings
        return self.default_max_findings


def pretty_json(value: object) -> bytes:
    """Indented JSON in the value's own key order, newline-terminated, raw UTF-8."""
    return escaped_controls(jsontext.dumps(value, indent=True, newline=True))


# JSON escapes C0 controls but may carry DEL, C1 and the line and paragraph separators raw;
# in UTF-8 these bytes are exactly those characters (0xC2 and 0xE2 only ever lead), and in a
# JSON document they stand only inside strings.
_RAW_JSON_CONTROLS = b"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]"


def _json_escape(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode("utf-8"))


def escaped_controls(document: bytes) -> bytes:
    """A JSON document with DEL, the C1 controls, U+2028 and U+2029 written as `\\u`
    escapes: the same value, nothing a terminal showing it would obey (`\\x9b` is a CSI),
    and no line end but its own for a reader that splits lines the way Python does."""
    if b"\x7f" not in document and b"\xc2" not in document and b"\xe2" not in document:
        return document  # none of them: no regex to compile (#26 item 3: start-up)
    return re.sub(_RAW_JSON_CONTROLS, _json_escape, document)


def by_name(table: Mapping[E, R], choices: type[E], name: str | E, what: str) -> R:
    """`table`'s entry for a format name; ValueError naming the choices when there is none."""
    try:
        return table[choices(name)]
    except ValueError:
        names = ", ".join(str(f.value) for f in choices)
        raise ValueError(f"unknown {what} {name!r} (choose from {names})") from None


class LazyTable(Mapping[E, R]):
    """Format -> renderer instance, each built (and its module imported) when first asked for:
    a renderer's imports (rich, for the text ones) are paid only by a run that uses it."""

    def __init__(self, package: str, where: Mapping[E, tuple[str, str]]) -> None:
        self._package, self._where = package, where
        self._built: dict[E, R] = {}

    def cls(self, fmt: E) -> type[R]:
        """The class for a format, its module imported on first use."""
        module, name = self._where[fmt]
        found: type[R] = getattr(importlib.import_module(f"{self._package}.{module}"), name)
        return found

    def class_named(self, module: str, name: str) -> type[R]:
        """A package's PEP 562 `__getattr__`: a renderer class by its class name, imported on
        first use. The names come from the table, so each is written once."""
        for fmt, (_, class_name) in self._where.items():
            if class_name == name:
                return self.cls(fmt)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __getitem__(self, fmt: E) -> R:
        if fmt not in self._built:
            self._built[fmt] = self.cls(fmt)()
        return self._built[fmt]

    def __iter__(self) -> Iterator[E]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


# --- words shared by every format --------------------------------------------------------------

TOOL_NAME = "thinkfix"

_KIND_DESCRIPTIONS: dict[str, str] = {
    LeakKind.BLOCK: "A complete reasoning block was stored in the visible answer.",
    LeakKind.ORPHAN_CLOSE: (
        "Reasoning ended by a close tag whose opener was in the prompt template was stored in the "
        "visible answer."
    ),
    LeakKind.STRAY_CLOSE: (
        "A reasoning close tag with nothing to close was left in the visible answer."
    ),
    LeakKind.UNCLOSED: (
        "A reasoning block that never closed (generation stopped inside it) was stored as the "
        "visible answer."
    ),
    LeakKind.EMPTY_BLOCK: "An empty reasoning block was left in the visible answer.",
    LeakKind.DUPLICATE: (
        "Reasoning already stored in the native field was repeated in the visible answer."
    ),
    LeakKind.MARKER: "An answer-wrapper or channel token was left in the visible answer.",
    LeakKind.UNCLOSED_INLINE: (
        "A reasoning opener in the middle of the text never closed; the text was left visible."
    ),
}


def known_kinds() -> list[str]:
    """Every leak kind the normalizer can report, in declaration order."""
    return [k.value for k in LeakKind]


def describe_kind(kind: str) -> str:
    """One sentence on what a leak kind means; unknown kinds still get a sentence."""
    return _KIND_DESCRIPTIONS.get(kind, f"Reasoning leaked into the visible answer ({kind}).")


def report_kinds(report: Report) -> list[str]:
    """The known kinds, then any other kind the report names, so every finding has a rule."""
    kinds = known_kinds()
    extra = {f.kind for f in report.findings} | set(report.summary.by_kind)
    return kinds + sorted(extra - set(kinds))


def label(value: str | None) -> str:
    """A breakdown key or optional field for humans: an empty or missing one still reads."""
    return value if value else "(unknown)"


def location(path: str, line: int | None) -> str:
    """`path:line` the way editors and terminals link it."""
    return f"{path}:{line}" if line else path


def finding_title(f: LeakFinding) -> str:
    """A short headline for one finding."""
    return f"Leaked reasoning ({f.kind})"


def finding_message(f: LeakFinding) -> str:
    """One line that says what leaked, where in the record, and from which model."""
    parts = [f"{f.leaked_chars} chars of reasoning leaked into {f.json_path or 'the text'}"]
    if f.tag:
        parts.append(f"tag {f.tag}")
    if f.model:
        parts.append(f"model {f.model}")
    if f.session_id:
        parts.append(f"session {f.session_id}")
    if f.message_id:
        parts.append(f"message {f.message_id}")
    if f.baselined:
        parts.append("covered by the baseline")
    if f.refused:
        parts.append(f"not repairable: {f.refused}")
    return f"{f.kind}: " + "; ".join(parts)


def refused_messages(report: Report) -> int:
    """Leaking texts `thinkfix repair` leaves as they are (all reasoning, nothing else shown)."""
    return len({(f.path, f.line, f.json_path) for f in report.findings if f.refused})


def error_message(e: InputError) -> str:
    """One line for one input error."""
    return f"{e.kind}: {e.message}"


def percent(part: int, whole: int) -> str:
    """A share as text, with a dash where there is nothing to divide."""
    return f"{100 * part / whole:.1f}%" if whole else "-"


def plural(n: int, word: str) -> str:
    """`1 file`, `2 files`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def headline(report: Report) -> str:
    """The verdict in a sentence or two, the same words in every human format."""
    s = report.summary
    total = len(report.findings)
    new = len(report.new_findings)
    if total:
        messages = plural(s.assistant_messages, "assistant message")
        leaking_files = len({f.path for f in report.findings})  # "across 30 files" hid that 16 leak
        text = (
            f"Reasoning leaked in {s.leaking_messages} of {messages}"
            f" in {leaking_files} of {plural(s.files, 'file')}: {plural(total, 'finding')}"
        )
        if new == total:
            text += "."
        elif new:
            text += f", {new} new, {total - new} covered by the baseline."
        else:
            text += ", all covered by the baseline."
    elif s.files:
        text = (
            f"No leaked reasoning in {plural(s.assistant_messages, 'assistant message')}"
            f" across {plural(s.files, 'file')}."
        )
    elif any(e.kind == ErrorKind.NO_SESSIONS for e in report.errors):
        text = "No session file found: nothing was checked."
    else:
        text = "No files scanned."
    refused = refused_messages(report)
    if refused:
        text += (
            f" {plural(refused, 'leaking text')} {'is' if refused == 1 else 'are'} all "
            "reasoning with nothing else in the message: `thinkfix repair` leaves "
            f"{'it' if refused == 1 else 'them'} as {'it is' if refused == 1 else 'they are'}"
            " (an empty text would break the session)."
        )
    text += health_headline(report)
    unread = [e for e in report.errors if e.kind != ErrorKind.NO_SESSIONS]
    if unread:
        text += f" {plural(len(unread), 'input error')}: those inputs were not fully read."
    if report.skipped:
        text += f" {skipped_summary(report.skipped)}."
    return text


def health_headline(report: Report) -> str:
    """The sentence `scan --check` adds to the verdict ("" when no check ran)."""
    if report.health is None:
        return ""
    checks = ", ".join(c.value for c in report.health.checks)
    total, new = len(report.health.findings), len(report.new_health)
    if not total:
        return f" Session health ({checks}): no problem found."
    text = f" Session health ({checks}): {plural(total, 'problem')}"
    if new == total:
        return text + "."
    return text + (f", {new} new." if new else ", all covered by the baseline.")


def shown_health(report: Report, options: RenderOptions) -> "tuple[HealthFinding, ...]":
    """The health findings a person-facing list shows: new ones, baselined ones when asked."""
    found = report.health.findings if report.health is not None else ()
    return found if options.show_baselined else report.new_health


def health_rule(f: "HealthFinding") -> str:
    """A health finding's rule id in every format that has rules: `health/<problem>`."""
    return f"health/{f.problem.value}"


def health_title(f: "HealthFinding") -> str:
    return f"Session health: {f.problem.value} ({f.check.value})"


def health_message(f: "HealthFinding") -> str:
    """One line: what the problem is, where in the record, and whose."""
    parts = [f.message]
    if f.json_path:
        parts.append(f"at {f.json_path}")
    if f.baselined:
        parts.append("covered by the baseline")
    return f"{f.problem.value}: " + "; ".join(parts)


def skipped_summary(skipped: Sequence[SkippedFile]) -> str:
    """`3 files skipped (2 not a known session format, 1 empty)`: what was not read, and why."""
    reasons: dict[str, int] = {}
    for s in skipped:
        reasons[s.reason] = reasons.get(s.reason, 0) + 1
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    return f"{plural(len(skipped), 'file')} skipped ({why})"


def skipped_message(s: SkippedFile) -> str:
    """One line for one skipped file."""
    return f"not scanned: {s.reason}"


def counts_sections(
    summary: Summary, *, by_file: bool
) -> Iterator[tuple[str, str, Mapping[str, MessageCounts]]]:
    """The message-count breakdowns as (title, key heading, counts), in a fixed order."""
    yield "By format", "format", dict(sorted(summary.by_format.items()))
    yield "By model", "model", dict(sorted(summary.by_model.items()))
    if by_file:
        yield "By file", "file", dict(sorted(summary.by_file.items()))


def sorted_by_kind(summary: Summary) -> list[tuple[str, int]]:
    """Findings per kind, most first, ties by name."""
    return sorted(summary.by_kind.items(), key=lambda kv: (-kv[1], kv[0]))


def scanned_paths(report: Report) -> list[str]:
    """Every file the report mentions: scanned, leaking, failed or skipped."""
    paths = set(report.summary.by_file)
    paths.update(f.path for f in report.findings)
    paths.update(e.path for e in report.errors)
    paths.update(s.path for s in report.skipped)
    return sorted(paths)


def listing_order(findings: Sequence[LeakFinding]) -> list[LeakFinding]:
    """New findings before baselined ones, each in report order, so a cap never hides a new one."""
    return sorted(findings, key=lambda f: f.baselined)


def shown_findings(report: Report, options: RenderOptions) -> tuple[LeakFinding, ...]:
    """The findings a person-facing list shows: new ones, plus baselined ones when asked."""
    return report.findings if options.show_baselined else report.new_findings


def capped(findings: Sequence[V], limit: int | None) -> tuple[Sequence[V], int]:
    """The findings to list and how many were left out."""
    if limit is None or len(findings) <= limit:
        return findings, 0
    return findings[: max(limit, 0)], len(findings) - max(limit, 0)
