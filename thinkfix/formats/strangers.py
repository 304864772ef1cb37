"""The guard that makes a file a format cannot read fail loudly, never count as clean.

Detection weighs a file's head, so a runtime thinkfix does not know can be claimed by a
format whose envelope it shares (Qwen Code's chats wear Claude Code's `uuid`/`sessionId`/
`type` envelope around a Gemini-like `message: {role: "model", parts: [...]}`), and that
format then reads no message from it: scan would report 0 assistant messages and exit 0.
So a record that names itself an assistant or model turn (by `type` or `role`) and carries
content, yet yields no message to the format reading it, is an input error for the file.

`names_turn` is the byte test (no parse) that tells a reader which lines must be parsed for
this; `stranger_turn` is the check on a parsed record. Both are format-agnostic.
"""

from __future__ import annotations

import re
from typing import Any

#: What an assistant turn calls itself in the runtimes' records (`role` or `type`).
TURN_WORDS = frozenset({"assistant", "model"})
#: Keys that give a turn content: a turn without any (OpenCode's message header, whose text
#: lives in part files) is metadata, not an unread message.
BODY_KEYS = ("content", "parts", "text", "message", "blocks")

ASSISTANT = b'"assistant"'
_MODEL_VALUE = re.compile(rb'"model"(?![ \t\r\n]*:)')
#: A JSON escape of an ASCII letter (`\u0061` is `a`): with one, a line may spell
#: "assistant", "model" or a format's marker without its bytes holding the word (review8,
#: finding 1: `"role":"\u0061ssistant"` hid a leak), so such a line is read as one that may.
#: A superset (`\\u0061`, an escaped backslash before `u0061`, is flagged too): parsed.
ESCAPED_LETTER = rb"\\u00[4-7]"
ESCAPED = re.compile(ESCAPED_LETTER)


def model_value(raw: bytes, lo: int = 0, hi: int | None = None) -> int:
    """Where `"model"` occurs in raw[lo:hi] as a JSON string value (not as the key `"model":`),
    or -1. An unescaped quote never occurs inside a JSON string, so the bytes `"model"` are a
    whole string token, and a token followed by `:` is a key."""
    found = _MODEL_VALUE.search(raw, lo, len(raw) if hi is None else hi)
    return -1 if found is None else found.start()


def turn_needles(marker: bytes) -> re.Pattern[bytes]:
    """One pattern for a line reader's jump: a format's `marker`, "assistant", or "model" as a
    string value. A line none of them occurs in, nor an escaped letter (`ESCAPED`, searched
    on its own: in this alternation it stopped the search at every backslash, +80% of a
    pure dense scan), has no assistant message and names no turn (`names_turn` is False)."""
    words = [re.escape(w) for w in dict.fromkeys((marker, ASSISTANT)) if w]
    return re.compile(b"|".join([*words, _MODEL_VALUE.pattern]))


def escapes_a_letter(raw: bytes) -> bool:
    """Does the line hold an escaped letter (`ESCAPED_LETTER`)? Then no word test on its
    bytes proves what it names."""
    return ESCAPED.search(raw) is not None


def names_turn(raw: bytes) -> bool:
    """False proves from the bytes alone that no object of the record has `role` or `type`
    equal to "assistant" or "model" (so the guard has nothing to check: no parse needed):
    neither word occurs, nor an escaped letter that could spell one."""
    return ASSISTANT in raw or model_value(raw) >= 0 or escapes_a_letter(raw)


def _turn(o: Any) -> str | None:
    """`role` or `type` of an object that is an assistant or model turn with content."""
    if not isinstance(o, dict):
        return None
    if not any(k in o for k in BODY_KEYS):
        return None
    named = [
        f'{k} "{o[k]}"'
        for k in ("type", "role")
        if isinstance(o.get(k), str) and o[k] in TURN_WORDS
    ]
    return ", ".join(named) or None


def _near(value: Any) -> list[tuple[str, Any]]:
    """The record itself and the objects one step in (a member, or an item of a top-level
    list member): where a runtime puts its turns. Deeper objects are payloads (a progress
    entry's copy of a sidechain message, a tool's arguments) that formats skip on purpose."""
    out: list[tuple[str, Any]] = [("", value)]
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict):
                out.append((str(k), v))
            elif isinstance(v, list):
                out.extend(
                    (f"{k}[{i}]", item) for i, item in enumerate(v) if isinstance(item, dict)
                )
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                out.append((f"[{i}]", item))
                out.extend((f"[{i}].{k}", v) for k, v in item.items() if isinstance(v, dict))
    return out


def stranger_turn(data: Any) -> str | None:
    """Where a parsed record names an assistant or model turn with content (`type
    "assistant", message.role "model"`), or None. Called only for a record its format read
    no message from."""
    return unread_beside(data, [])


def unread_beside(data: Any, read: list[str]) -> str | None:
    """Where a parsed record names an assistant or model turn with content (as
    `stranger_turn` finds them) that is none of the messages its format read, nor holds one:
    `read` are those messages' paths (`fmt_path`). A document of many messages (a claw-code
    or Cline history) whose other messages read hid one of an unexpected shape, so its leak
    was counted clean (review9)."""
    found = []
    for where, o in _near(data):
        if any(_within(r, where) for r in read):
            continue
        what = _turn(o)
        if what is not None:
            found.append(f"{where}.{what}" if where else what)
            if len(found) == 3:
                break
    return ", ".join(found) or None


def _within(path: str, where: str) -> bool:
    """Is the message at `path` the object at `where`, or inside it (or the record itself,
    which a message at the root is whole)?"""
    return (
        not where
        or not path
        or path == where
        or (path.startswith(where) and path[len(where) : len(where) + 1] in (".", "["))
    )


def unread_turn(format_id: str, where: str) -> str:
    """The error of a record naming a turn that `format_id` cannot read (after "unknown
    shape: ", which makes it a `bad_shape` input error)."""
    return (
        f"an assistant turn ({where}) that {format_id} cannot read: the file may be another "
        "runtime's; it is not counted as clean (name its format with --format if it is "
        f"{format_id}'s)"
    )
