"""The scanner's vocabulary: its modes, the spans and findings it emits, its mutable state and
the checkpoints it rolls back to, and the attributes every part of `Scanner` shares.

The scanner is split by job into a chain of classes, each using only those below it:
`ScanBase` (these attributes) → `scan_text.ChunkText` (the fed text) → `scan_actions.Actions`
(cutting spans, recording findings, opening and closing blocks) → `scan_code.CodeRules`
(rule 2) → `scan_tokens.TokenRules` (what a delimiter means where it stands) →
`scan_shortcuts.PlainChunks` (the stream's shortcuts for plain chunks) → `scanner.Scanner`
(the scan loop, one unit per mode; the frontier of final spans; the end of the text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from thinkfix.normalizer.grammar import Grammar, Kind, Token
from thinkfix.normalizer.kinds import Label
from thinkfix.normalizer.policy import Policy
from thinkfix.normalizer.spans import Finding

NON_WS = re.compile(r"[^\s\ufeff]")
#: Characters before a tag that make it a prose mention (`use the <think> tag`).
PROSE_BEFORE = " \t"
NEWLINE = re.compile("\n")
#: A code-marker run that reaches the end of the text ends at the first other character.
RUN_GROUPS = {"ticks": re.compile("[^`]"), "tildes": re.compile("[^~]")}


class Mode(Enum):
    LEAD = "lead"  # nothing but whitespace seen yet
    OUT = "out"  # visible text
    IN = "in"  # inside a reasoning block
    DETOK = "detok"  # inside a detokenised harmony `analysis...assistantfinal` candidate

    __hash__ = object.__hash__  # as `Kind`'s: identity, without a Python call


# Read per token: module constants, not class attributes (see `grammar.OPEN`).
LEAD, OUT, IN, DETOK = Mode.LEAD, Mode.OUT, Mode.IN, Mode.DETOK
#: The modes inside reasoning (a block, or a detokenised Harmony analysis).
INSIDE = (IN, DETOK)


class Override(Enum):
    """What a rollback decides for the token a checkpoint stands at."""

    LITERAL = "literal"  # the token is text
    CLOSE = "close"  # the token ends the block


LITERAL = Override.LITERAL  # read per token (see `grammar.OPEN`)


class RawSpan(NamedTuple):
    start: int
    end: int
    label: Label
    block: int | None = None


class BlockFinding(NamedTuple):
    """A finding, with the reasoning block it concerns (so dedupe can relabel it)."""

    finding: Finding
    block: int | None = None


#: `RawSpan(...)` and `BlockFinding(...)` from all their fields in order, without the
#: NamedTuple's Python-level `__new__` (a frame per span the scanner cuts).
new_raw_span = new_block_finding = tuple.__new__


@dataclass(slots=True)
class ScanState:
    """The scanner's mutable position in the grammar (copied into checkpoints)."""

    mode: Mode
    seg: int = 0  # start of the text not yet cut into a span
    first_delim: bool = False  # rule 4 looks only at the first delimiter
    window: int | None = 0  # start of the pre-delimiter window while it is open
    prose: int = 0  # prose openers awaiting their prose close
    depth: int = 0
    block: int = -1  # id of the current (or last) reasoning block
    opener: Token | None = None
    leading: bool = False
    content: bool = False  # the current block has non-blank reasoning
    fence: str | None = None  # the fence of the code block we are inside
    shown: bool = False  # non-blank visible text precedes the scan position
    visible_from: int = 0  # where the run of visible text before the scan position starts
    # the spaces between a line start and the last removal (None: it was not at a line start)
    gap_indent: int | None = 0
    # inside a block, the end of the last run of special tokens the visible text would drop
    # (`<|begin_of_solution|>`), and gap_indent's count for it: rule 2 reads past them there too
    marker_end: int = -1
    marker_indent: int | None = None
    after_block: int = -1  # where the last removed reasoning block ended (answer wrappers)
    answer: str | None = None  # the closer of the unwrapped answer we are inside
    guard: int = 0  # tokens starting before this are text (an opener's attribute run may join)


class Checkpoint(NamedTuple):
    """Where to come back to if the text ends before a speculation is confirmed."""

    state: ScanState
    pos: int
    spans: int
    findings: int
    override: Override


class ScanBase:
    """The attributes every part of the scanner reads and sets (`Scanner.__init__` sets them)."""

    policy: Policy
    grammar: Grammar
    context: int  # text kept before the scan position: the longest unfinished delimiter
    holdback: int | None
    start_in_reasoning: bool
    followed_by_tool_call: bool
    detok: bool  # the record names a gpt-oss model: detokenised Harmony may start the text
    st: ScanState
    pos: int  # the scan position: everything before it has been read
    length: int  # how much text was fed
    spans: list[RawSpan]
    findings: list[BlockFinding]
    _ck: Checkpoint | None
    # A decision that waits for a character class (a line end, a non-blank): until new
    # text holds one, feeding more changes nothing, so the scan is not repeated.
    _await: tuple[re.Pattern[str], int] | None


#: Token kinds that are code or text wherever they stand.
CODE_KINDS = frozenset({Kind.FENCE, Kind.TICKS, Kind.TEXT})
#: Token kinds that may close a block.
CLOSING = frozenset({Kind.CLOSE, Kind.END, Kind.VISIBLE_HEADER, Kind.CALL})
