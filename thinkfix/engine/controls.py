"""Control characters made visible, so a session or a file name cannot drive the terminal that
shows it, nor forge a line of a line-oriented output.

A model name or message holding `\\x1b[2J` (clear screen), an OSC title (`\\x1b]0;...\\x07`)
or an OSC 8 hyperlink would otherwise be interpreted by the auditor's terminal while it reads
the session; a file name holding a newline would split a diff's `---` header or add a line a
problem matcher reads as a finding of its own. C0 controls become their Unicode control
pictures (`\\x1b` is `␛`), DEL is `␡`, C1 controls are written as `\\x9b`.

Two spellings, one table: `visible_controls` for text that has a layout (a message: tab and
newline stay, a CR that does not end a line becomes `␍`), `visible_name` for a name (a path,
a model, an id), which is one line whatever it holds: tab and newline are shown too, and so
are the Unicode line and paragraph separators. Every output that shows a name uses
`visible_name`; nothing else escapes names.
"""

from __future__ import annotations

import re

_CONTROLS = "[\x00-\x08\x0b-\x1f\x7f-\x9f]"
_NAME_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}
_NAME_TABLE[0x7F] = "\u2421"
_NAME_TABLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_NAME_TABLE.update({c: f"\\u{c:04x}" for c in (0x2028, 0x2029)})
# Text keeps its layout; U+2028/U+2029 in a message are drawn by a terminal, never obeyed.
_TEXT_TABLE = {c: s for c, s in _NAME_TABLE.items() if c not in (0x09, 0x0A, 0x2028, 0x2029)}


def visible_controls(text: str) -> str:
    """`text` with every control character but tab and newline shown, never interpreted."""
    # Printable text holds none: the class is compiled (re's cache) for text that may hold one
    if text.isprintable() or not re.search(_CONTROLS, text):
        return text
    return text.replace("\r\n", "\n").translate(_TEXT_TABLE)


def visible_name(name: str) -> str:
    """`name` on one line, every control character shown (tab and newline included)."""
    # Printable text holds no control character and no line separator: no regex to compile
    # (a class holding U+2028 spans 64K code points, ~2 M instructions: #26 item 3).
    if name.isprintable():
        return name
    return name.translate(_NAME_TABLE)
