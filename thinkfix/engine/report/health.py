"""What `scan --check` found (#28): each problem, where it is, and the section a report
carries. Loaded only when a check ran: three frozen dataclasses and a 17-member enum cost
~3 ms of a scan's start-up to define (#26 item 3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from thinkfix._serialize import Plain, record
from thinkfix.engine.report.checks import Check


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
    INLINED_IMAGES = "inlined-images"
    REPEATED_IMAGE = "repeated-image"
    REPEATED_SIGNATURE = "repeated-signature"

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
    **dict.fromkeys(
        (
            Problem.LARGE_RECORD,
            Problem.LARGE_FILE,
            Problem.INLINED_IMAGES,
            Problem.REPEATED_IMAGE,
            Problem.REPEATED_SIGNATURE,
        ),
        Check.SIZE,
    ),
}


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


def health_fingerprint(
    fmt: str, session: str, problem: Problem, detail: str, content: bytes
) -> str:
    """Baseline identity: format, session, problem and what the problem is about (an id, a
    rule, a hash of the bytes), never its line, so a finding keeps its identity as the file
    grows."""
    import hashlib

    digest = hashlib.sha256(content).hexdigest()
    key = f"health\0{fmt}\0{session}\0{problem.value}\0{detail}\0{digest}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class TypeBytes(Plain):
    """Records of one type and their bytes (`size`)."""

    records: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class HealthSection:
    """What `scan --check` found: the checks that ran, their findings (sorted), and with
    `size` the bytes by format and record type."""

    checks: tuple[Check, ...]
    findings: tuple[HealthFinding, ...] = ()
    bytes_by_type: dict[str, dict[str, TypeBytes]] = field(default_factory=dict)

    @property
    def by_problem(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.problem.value] = counts.get(f.problem.value, 0) + 1
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict[str, Any]:
        return record(
            self,
            ("checks", "findings", "by_problem", "baselined", "bytes_by_type"),
            by_problem=self.by_problem,
            baselined=sum(1 for f in self.findings if f.baselined),
        )
