"""The normalizer's policy: every knob of DESIGN.md's rules, as one frozen value."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any


class OrphanClose(str, Enum):
    """What a leading close tag with no opener does (rule 4)."""

    AUTO = "auto"  # split when non-blank text follows, else strip the delimiter only
    SPLIT = "split"  # everything before the close is reasoning, always
    STRIP = "strip"  # only the delimiter goes; nothing moves


class NativeMode(str, Enum):
    """How inline reasoning combines with a native reasoning field (rule 9)."""

    DEDUPE = "dedupe"  # drop extracted segments equal to or contained in the native text
    NATIVE_ONLY = "native-only"  # with native reasoning present, extracted segments are dropped
    MERGE = "merge"  # keep every extracted segment after the native text


XML_TAG_NAMES: tuple[str, ...] = ("think", "thinking", "thought", "reasoning", "reason", "reflection")

# (family id, opener, closer) for the literal special-token families of rule 1.
SPECIAL_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("begin_of_thought", "<|begin_of_thought|>", "<|end_of_thought|>"),
    ("kimi", "◁think▷", "◁/think▷"),
    ("mistral", "[THINK]", "[/THINK]"),
    ("seed", "<seed:think>", "</seed:think>"),
    ("command", "<|START_THINKING|>", "<|END_THINKING|>"),
)

# Literal tokens that wrap the answer rather than the reasoning: removed, content kept.
ANSWER_WRAPPERS: tuple[str, ...] = ("<|begin_of_solution|>", "<|end_of_solution|>")

# Granite-style prose delimiters (rule 10), only used when `prose_delimiters` is on.
PROSE_PAIRS: tuple[tuple[str, str], ...] = (
    ("Here is my thought process:", "Here is my response:"),
)


@dataclass(frozen=True)
class Policy:
    """Every configurable decision of the normalizer; the default is DESIGN.md's policy.

    `tags` are the XML-style names, `special_pairs` the literal token families;
    `harmony` turns on the gpt-oss channel grammar (raw tokens and detokenised
    `analysis...assistantfinal`).
    """

    tags: tuple[str, ...] = XML_TAG_NAMES
    special_pairs: tuple[tuple[str, str, str], ...] = SPECIAL_PAIRS
    harmony: bool = True
    protect_code: bool = True
    orphan_close: OrphanClose = OrphanClose.AUTO
    trim: bool = True
    native: NativeMode = NativeMode.DEDUPE
    prose_delimiters: bool = False
    enabled: bool = True  # the per-model / per-file opt-out of rule 10

    def __post_init__(self) -> None:
        object.__setattr__(self, "tags", tuple(sorted({t.lower() for t in self.tags}, key=lambda t: (-len(t), t))))
        object.__setattr__(self, "orphan_close", OrphanClose(self.orphan_close))
        object.__setattr__(self, "native", NativeMode(self.native))

    def with_changes(self, **changes: Any) -> Policy:
        """A copy with the given knobs changed; unknown names raise TypeError."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view, for reports and config dumps."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.value if isinstance(value, Enum) else value
        return out


DEFAULT = Policy()
