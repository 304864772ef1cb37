"""What the normalizer calls a span of text (`Label`) and each kind of leak it reports
(`LeakKind`), apart from the spans themselves (`spans.py`): every scan names the kinds it
reports, but only a scan that normalizes a text loads the spans' values (#26 item 3)."""

from __future__ import annotations

from enum import Enum


class Label(str, Enum):
    """What a span of the original text is."""

    VISIBLE = "visible"
    THINKING = "thinking"
    DELIMITER = "delimiter"
    TRIMMED = "trimmed"  # whitespace dropped next to a removed block or at a segment edge
    DUPLICATE = "duplicate"  # reasoning already present in the native field


# In 3.11 a member read through its class costs ~130 ns (EnumType's `__getattr__` puts every
# attribute read of the class on the slow path); the normalizer labels spans per token, so it
# reads these instead.
VISIBLE, THINKING, DELIMITER = Label.VISIBLE, Label.THINKING, Label.DELIMITER
TRIMMED, DUPLICATE = Label.TRIMMED, Label.DUPLICATE


class LeakKind(str, Enum):
    """The kinds of leak the normalizer reports (DESIGN.md's damage table, plus two notices)."""

    def __str__(self) -> str:  # `f"{kind}"` is `block` on every Python, as in the JSON
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    BLOCK = "block"
    ORPHAN_CLOSE = "orphan_close"
    STRAY_CLOSE = "stray_close"
    UNCLOSED = "unclosed"
    EMPTY_BLOCK = "empty_block"
    DUPLICATE = "duplicate"
    MARKER = (
        "marker"  # an answer-wrapper or channel token removed (begin_of_solution, harmony final)
    )
    UNCLOSED_INLINE = (
        "unclosed_inline"  # notice only: a mid-text opener that never closed stays visible
    )

    @property
    def changes_text(self) -> bool:
        """False for notices that leave the visible text as it was."""
        return self is not LeakKind.UNCLOSED_INLINE
