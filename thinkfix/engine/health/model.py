"""The values the health checks trade in: which check, which problem, one finding."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from thinkfix._serialize import record


class Check(str, Enum):
    """A check `--check` can name, in the order reports list them."""

    SIGNATURE = "signature"
    TOOL_PAIRS = "tool-pairs"
    LINES = "lines"
    SECRETS = "secrets"
    SIZE = "size"

    def __str__(self) -> str:
        return self.value


class Problem(str, Enum):
    """What one finding is; each problem belongs to one check (`Problem.check`)."""

    # signature: thinking blocks the runtime replays and its API refuses
    MISSING_SIGNATURE = "missing-signature"
    EMPTY_SIGNATURE = "empty-signature"
    DUPLICATE_THINKING = "duplicate-thinking"
    # tool-pairs
    CALL_WITHOUT_RESULT = "call-without-result"
    RESULT_WITHOUT_CALL = "result-without-call"
    # lines
    TRUNCATED = "truncated"
    GLUED = "glued"
    NUL_PADDING = "nul-padding"
    SPLIT_RECORD = "split-record"
    NOT_JSON = "not-json"
    NOT_UTF8 = "not-utf8"
    # secrets
    SECRET = "secret"
    # size
    LARGE_RECORD = "large-record"
    LARGE_FILE = "large-file"

    def __str__(self) -> str:
        return self.value

    @property
    def check(self) -> Check:
        return _CHECK_OF[self]


_CHECK_OF = {
    **dict.fromkeys(
        (Problem.MISSING_SIGNATURE, Problem.EMPTY_SIGNATURE, Problem.DUPLICATE_THINKING),
        Check.SIGNATURE,
    ),
    **dict.fromkeys((Problem.CALL_WITHOUT_RESULT, Problem.RESULT_WITHOUT_CALL), Check.TOOL_PAIRS),
    **dict.fromkeys(
        (
            Problem.TRUNCATED,
            Problem.GLUED,
            Problem.NUL_PADDING,
            Problem.SPLIT_RECORD,
            Problem.NOT_JSON,
            Problem.NOT_UTF8,
        ),
        Check.LINES,
    ),
    Problem.SECRET: Check.SECRETS,
    **dict.fromkeys((Problem.LARGE_RECORD, Problem.LARGE_FILE), Check.SIZE),
}

ALL_CHECKS: tuple[Check, ...] = tuple(Check)


def parse_checks(value: str | Iterable[str]) -> tuple[Check, ...]:
    """`signature,lines` (or a list of names) as checks in report order; `all` names every
    check. Raises ValueError naming an unknown check and the known ones."""
    names = value.split(",") if isinstance(value, str) else list(value)
    picked: set[Check] = set()
    for raw in names:
        name = raw.strip().lower()
        if not name:
            continue
        if name == "all":
            picked.update(Check)
            continue
        try:
            picked.add(Check(name))
        except ValueError:
            known = ", ".join(c.value for c in Check)
            raise ValueError(f"unknown check {raw.strip()!r} (known: {known}, all)") from None
    return tuple(c for c in Check if c in picked)


@dataclass(frozen=True)
class HealthOptions:
    """The thresholds of the `size` check."""

    record_bytes: int = 1 << 20  # a record over this is a `large-record`
    file_bytes: int = 64 << 20  # a file over this is a `large-file`
    largest: int = 5  # at most this many `large-record` findings a file, the largest first


DEFAULT_HEALTH = HealthOptions()


@dataclass(frozen=True, order=True)
class HealthFinding:
    """One problem a check found, located well enough for a fix to find it again.

    `record_index` is the record's place in the format's `read` order and `json_path` the
    spot inside it ("" for the whole record); `offset`/`size` are the record's bytes in the
    (decompressed) file for `lines`, and `stops_reading` marks the line where the runtime
    stops loading the session."""

    path: str
    line: int
    check: Check
    problem: Problem
    format: str
    record_index: int = 0
    json_path: str = ""
    detail: str = ""  # the tool call id, the secret's rule, the record type, a hash
    message: str = ""
    offset: int = -1
    size: int = 0
    end_line: int = 0
    stops_reading: bool = False
    session_id: str | None = None
    fingerprint: str = field(default="", compare=False)
    baselined: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        # read back as text (a state file, a worker's result)
        if not isinstance(self.check, Check):
            object.__setattr__(self, "check", Check(self.check))
        if not isinstance(self.problem, Problem):
            object.__setattr__(self, "problem", Problem(self.problem))

    def to_dict(self) -> dict[str, Any]:
        return record(self, omit_none=("session_id",))


def fingerprint(fmt: str, session: str, problem: Problem, detail: str, content: bytes) -> str:
    """Baseline identity: format, session, problem and what the problem is about (an id, a
    rule, a hash of the bytes), never its line, so a finding keeps its identity as the file
    grows."""
    import hashlib

    digest = hashlib.sha256(content).hexdigest()
    key = f"health\0{fmt}\0{session}\0{problem.value}\0{detail}\0{digest}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class FileHealth:
    """What the checks found in one file, and (with `size`) its bytes per record type:
    (type, records, bytes), the largest first."""

    findings: tuple[HealthFinding, ...] = ()
    bytes_by_type: tuple[tuple[str, int, int], ...] = ()
