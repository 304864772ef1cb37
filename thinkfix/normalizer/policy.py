"""The normalizer's policy: every knob of DESIGN.md's rules, as one frozen value."""

from __future__ import annotations

import re
from dataclasses import replace
from enum import Enum
from functools import lru_cache
from typing import Any

from thinkfix._serialize import frozen, record


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


XML_TAG_NAMES: tuple[str, ...] = (
    "think",
    "thinking",
    "thought",
    "reasoning",
    "reason",
    "reflection",
)

# (family id, opener, closer) for the literal special-token families of rule 1.
SPECIAL_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("begin_of_thought", "<|begin_of_thought|>", "<|end_of_thought|>"),
    ("kimi", "◁think▷", "◁/think▷"),
    ("mistral", "[THINK]", "[/THINK]"),
    ("seed", "<seed:think>", "</seed:think>"),
    ("command", "<|START_THINKING|>", "<|END_THINKING|>"),
    ("minimax", "<mm:think>", "</mm:think>"),
    # Gemma 4's thought channel: the `thought` label belongs to the opener, not the reasoning;
    # the opener also comes without it (vLLM's tests/reasoning/test_gemma4_reasoning_parser.py)
    ("gemma4", "<|channel>thought", "<channel|>"),
    ("gemma4", "<|channel>", "<channel|>"),
    # Apertus' deliberation pair (vLLM's tests/reasoning/test_apertus_reasoning_parser.py)
    ("apertus", "<|inner_prefix|>", "<|inner_suffix|>"),
)

# Literal tokens that wrap the answer rather than the reasoning: removed, content kept,
# wherever they stand (special tokens no prose uses).
ANSWER_WRAPPERS: tuple[str, ...] = ("<|begin_of_solution|>", "<|end_of_solution|>")

# Answer wrappers unwrapped only right after an extracted reasoning block (rule 1):
# Hunyuan's `<answer>`, ERNIE's `<response>`, Command R's response tokens. Elsewhere they
# are text (`<answer>` is an ordinary word in HTML-ish prose).
ANSWER_PAIRS: tuple[tuple[str, str], ...] = (
    ("<answer>", "</answer>"),
    ("<response>", "</response>"),
    ("<|START_RESPONSE|>", "<|END_RESPONSE|>"),
)

# Tool-call openers of the chat templates and tool parsers of vLLM, SGLang and Ollama:
# one ends an implicit (template-opened) reasoning block, so a tool call never vanishes
# into reasoning (rule 3). Hermes/Qwen/GLM, MiniMax M1 and M2, Seed-OSS, Gemma 4,
# Granite/Phi-4, Mistral, Kimi K2, DeepSeek V3/R1, Llama 3.
TOOL_CALL_OPENERS: tuple[str, ...] = (
    "<tool_call>",
    "<tool_calls>",
    "<minimax:tool_call>",
    "<seed:tool_call>",
    "<|tool_call>",
    "<|tool_call|>",
    "[TOOL_CALLS]",
    "<|tool_calls_section_begin|>",
    "<｜tool▁calls▁begin｜>",
    "<|python_tag|>",
)

# Model names of the gpt-oss family, whose detokenised Harmony text (`analysis...assistantfinal`)
# is read only where the record names one of them: elsewhere `analysis` is an ordinary word.
_HARMONY_MODELS = re.compile(r"gpt[-_ ]?oss", re.IGNORECASE)


@lru_cache(maxsize=256)  # asked per text normalized; a session names a model or two
def harmony_model(model: str | None) -> bool:
    """True when `model` names a gpt-oss-family model (evidence for detokenised Harmony)."""
    return model is not None and _HARMONY_MODELS.search(model) is not None


#: What a tag name may be: letters first, then letters, digits, `-`, `_`, `.` or `:` (`mm:think`).
TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]*\Z")
#: How a setting of tag names is described when a value is not one.
TAG_NAMES_RULE = "tag names such as think (a letter, then letters, digits, -, _, . or :)"


def bad_tag(tags: Any) -> str | None:
    """The first of `tags` that is not a tag name (`TAG_NAME`), else None."""
    return next((t for t in tags if not isinstance(t, str) or not TAG_NAME.match(t)), None)


# Granite-style prose delimiters (rule 10), only used when `prose_delimiters` is on.
PROSE_PAIRS: tuple[tuple[str, str], ...] = (
    ("Here is my thought process:", "Here is my response:"),
)


@frozen
class Policy:
    """Every configurable decision of the normalizer; the default is DESIGN.md's policy.

    `tags` are the XML-style names (ASCII, `TAG_NAME`; matched in any ASCII case, `<THINK>`,
    never by Unicode folding, `<thin\u212a>`: the byte prefilter folds as they do),
    `special_pairs` the literal token families;
    `answer_pairs` the answer wrappers unwrapped right after a reasoning block;
    `tool_calls` the tool-call openers that end an implicit reasoning block;
    `harmony` turns on the gpt-oss channel grammar (raw tokens and, where the record
    names a gpt-oss model, detokenised `analysis...assistantfinal`).
    """

    tags: tuple[str, ...] = XML_TAG_NAMES
    special_pairs: tuple[tuple[str, str, str], ...] = SPECIAL_PAIRS
    answer_pairs: tuple[tuple[str, str], ...] = ANSWER_PAIRS
    tool_calls: tuple[str, ...] = TOOL_CALL_OPENERS
    harmony: bool = True
    protect_code: bool = True
    orphan_close: OrphanClose = OrphanClose.AUTO
    trim: bool = True
    native: NativeMode = NativeMode.DEDUPE
    prose_delimiters: bool = False
    enabled: bool = True  # the per-model / per-file opt-out of rule 10

    def __post_init__(self) -> None:
        _check(self)
        object.__setattr__(
            self, "tags", tuple(sorted({t.lower() for t in self.tags}, key=lambda t: (-len(t), t)))
        )
        object.__setattr__(self, "orphan_close", OrphanClose(self.orphan_close))
        object.__setattr__(self, "native", NativeMode(self.native))

    def with_changes(self, **changes: Any) -> Policy:
        """A copy with the given knobs changed; unknown names raise TypeError."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view, for reports and config dumps."""
        return record(self)


def _check(policy: Policy) -> None:
    """ValueError naming the setting for a delimiter no text can hold (an empty tag, opener,
    closer or tool call), which the grammar would otherwise fail on at the first text
    (TypeError for tags given as one string, which would read as one-letter tags)."""
    if isinstance(policy.tags, str):
        raise TypeError(f"Policy tags must be a tuple of {TAG_NAMES_RULE}, not a string")
    bad = bad_tag(policy.tags)
    if bad is not None:
        raise ValueError(f"Policy tags must be {TAG_NAMES_RULE}, not {bad!r}")
    delimiters = {
        "special_pairs": [d for _, *pair in policy.special_pairs for d in pair],
        "answer_pairs": [d for pair in policy.answer_pairs for d in pair],
        "tool_calls": list(policy.tool_calls),
    }
    for name, values in delimiters.items():
        if not all(isinstance(d, str) and d for d in values):
            raise ValueError(f"Policy {name} must hold non-empty strings: a delimiter has text")


DEFAULT = Policy()
