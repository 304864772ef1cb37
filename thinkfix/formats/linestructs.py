"""A runtime's assistant lines decoded into narrow structs: what the block counter reads (#26).

The scan's block counter (`engine.scan.survey`) counts a clean assistant line without
parsing it into Python objects. Its first design proved each line's model and stamp with the
format's canonical pattern (`quick.Canonical`): one `re` match a line, the runtime's exact
key order only, and the free parts searched for any token that could hide a key. This one
decodes the line with msgspec into structs that hold only the members `checked_messages`
and `trend.message_time` read: the record's kind and stamp, the message's role, model, time
keys and content parts. msgspec skips every other member in C (validated as JSON, nothing
built), reads keys in any order and through escapes, and takes a repeated key's last value
as orjson does, so a line it decodes is keyed exactly as its parse would be:

- a member whose type differs from what every runtime writes (a role that is a number, a
  time key on the message with a value, a part without a string `type`) fails the decode,
  and the line is read one by one (`None` below), with the reader's own answer;
- `keys` answers `(model, stamp)` for a line that holds exactly one assistant message (the
  reader's rule, field for field: cited at each format), where `model` is the message's
  (None or "": the context's) and `stamp` what `trend.message_time` reads for it: an ISO
  string (the record's; `engine.scan.survey` checks its shape and date) or a number of
  milliseconds (pi's message's own; checked for its range there).

The structs are built on first use (msgspec is imported then: the fast extra's dependency,
and ~25 ms a small scan does not pay). tests/engine/test_struct_survey.py holds every
accepted line to its parsed record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, Optional, Union

from thinkfix.formats.records import TIME_KEYS

#: `(model, stamp)` of a line holding one assistant message, else None.
Keyed = Optional[tuple[Optional[str], Union[str, int]]]  # noqa: UP007, UP045 - runtime aliases
Keyer = Callable[[Sequence[bytes | memoryview]], list[Keyed]]
#: `build(msgspec)`: the rule over decoded lines (None for a line the decode refused), and the
#: struct type a line decodes into.
Build = Callable[[Any], tuple[Callable[[list[Any]], list[Keyed]], Any]]


class LineStructs:
    """One format's decoder and keying rule, built on first use (`keyer`)."""

    __slots__ = ("_build", "_keyer", "_tried")

    def __init__(self, build: Build) -> None:
        self._build = build
        self._keyer: Keyer | None = None
        self._tried = False

    def keyer(self) -> Keyer | None:
        """The keying of raw lines, or None where msgspec cannot be imported."""
        if not self._tried:
            self._tried = True
            try:
                import msgspec
            except ImportError:
                return None
            self._keyer = _keyer(msgspec, self._build)
        return self._keyer


def _keyer(msgspec: Any, build: Build) -> Keyer:
    rule, line_type = build(msgspec)
    decode = msgspec.json.Decoder(line_type).decode
    refused: tuple[type[BaseException], ...] = (ValueError, RecursionError, msgspec.DecodeError)

    def keys(lines: Sequence[bytes | memoryview]) -> list[Keyed]:
        try:
            values = list(map(decode, lines))  # C-level: no Python frame per line
        except refused:
            values = [_decoded(decode, line, refused) for line in lines]  # rare: which
        return rule(values)

    return keys


def _decoded(
    decode: Callable[[bytes | memoryview], Any],
    line: bytes | memoryview,
    refused: tuple[type[BaseException], ...],
) -> Any:
    try:
        return decode(line)
    except refused:
        return None


def _content(msgspec: Any, text_ok: bool) -> Any:
    """The content the readers read (`io.jsoncheck._shaped`: typed parts whose `text` and
    `thinking` are strings; a string where the format allows one)."""
    text = Optional[str]  # noqa: UP045 - runtime types for msgspec, on Python 3.10 too
    part = msgspec.defstruct(
        "Part", [("type", str), ("text", text, None), ("thinking", text, None)], gc=False
    )
    parts = list[part]  # type: ignore[valid-type]
    return Union[str, parts, None] if text_ok else Optional[parts]  # noqa: UP007, UP045


def _no_times(msgspec: Any) -> list[tuple[str, Any, None]]:
    """Struct fields for every time key (`records.TIME_KEYS`), each absent or null: on a message
    with no time key of its own (Claude Code's, Codex's items) any other value is read one
    by one, since `trend.message_time` reads the innermost object's first."""
    return [(key, type(None), None) for key in TIME_KEYS]


def _structs(msgspec: Any, name: str, key: str, fields: list[Any]) -> tuple[Any, Any]:
    """A format's message struct (`fields`) and its line's: the record's `type` and
    `timestamp`, and the message under `key` (an object; a string or null is no message)."""
    message = msgspec.defstruct(f"{name}Message", fields, gc=False)
    line = msgspec.defstruct(
        f"{name}Line",
        [
            ("type", Optional[str], None),  # noqa: UP045
            (key, Union[message, str, None], None),  # noqa: UP007
            ("timestamp", Union[str, int, float, None], None),  # noqa: UP007
        ],
        gc=False,
    )
    return message, line


def _claude_code(msgspec: Any) -> tuple[Callable[[list[Any]], list[Keyed]], Any]:
    """Claude Code (`formats.claude_code`: `_assistant` and `ClaudeCode.messages`): an entry of
    type "assistant" whose `message` is an object with role "assistant" (or none) holds one
    message, of the message's `model`, dated by the entry's `timestamp` (its message has no
    time key)."""
    message, line = _structs(
        msgspec,
        "Claude",
        "message",
        [
            ("role", str, "assistant"),
            ("model", Optional[str], None),  # noqa: UP045
            ("content", _content(msgspec, True), None),
            *_no_times(msgspec),
        ],
    )

    def rule(values: list[Any]) -> list[Keyed]:
        return [
            (v.message.model, v.timestamp)
            if v is not None
            and v.type == "assistant"
            and type(v.message) is message
            and v.message.role == "assistant"
            and type(v.timestamp) is str
            else None
            for v in values
        ]

    return rule, line


def _pi(msgspec: Any) -> tuple[Callable[[list[Any]], list[Keyed]], Any]:
    """pi (`formats.pi`: `entry_message` and `Pi.messages`): an entry of type "message" whose
    `message` is an object with role "assistant" holds one message, of its `model`, dated by
    its own `timestamp` (milliseconds: the first time key `trend.message_time` reads, on the
    innermost object), or, where the message has no time key at all (pi before its messages
    carried one), by the entry's."""
    others = [(key, Any, None) for key in TIME_KEYS[1:]]  # read only for being absent or null
    message, line = _structs(
        msgspec,
        "Pi",
        "message",
        [
            ("role", Optional[str], None),  # noqa: UP045
            ("model", Optional[str], None),  # noqa: UP045
            ("content", _content(msgspec, True), None),
            ("timestamp", Union[int, float, str, None], None),  # noqa: UP007
            *others,
        ],
    )
    untimed = tuple(None for _ in others)
    read = attrgetter(*(key for key, _, _ in others))

    def rule(values: list[Any]) -> list[Keyed]:
        return [
            (m.model, m.timestamp if type(m.timestamp) is int else v.timestamp)
            if v is not None
            and v.type == "message"
            and type(m := v.message) is message
            and m.role == "assistant"
            and (
                type(m.timestamp) is int
                or (m.timestamp is None and read(m) == untimed and v.timestamp is not None)
            )
            else None
            for v in values
        ]

    return rule, line


def _codex(msgspec: Any) -> tuple[Callable[[list[Any]], list[Keyed]], Any]:
    """Codex (`formats.codex_items`: `item_of` and `is_assistant`): a `response_item` whose
    payload is an object of type "message" (or none) with role "assistant" holds one
    message, of the turn's model (the context's: None here), dated by the line's
    `timestamp` (its payload has no time key)."""
    payload, line = _structs(
        msgspec,
        "Codex",
        "payload",
        [
            ("type", str, "message"),
            ("role", Optional[str], None),  # noqa: UP045
            ("content", _content(msgspec, False), None),
            *_no_times(msgspec),
        ],
    )

    def rule(values: list[Any]) -> list[Keyed]:
        return [
            (None, v.timestamp)
            if v is not None
            and v.type == "response_item"
            and type(v.payload) is payload
            and v.payload.type == "message"
            and v.payload.role == "assistant"
            and v.payload.content is not None  # none: a shape Codex never writes (`slots`)
            and type(v.timestamp) is str
            else None
            for v in values
        ]

    return rule, line


CLAUDE_CODE = LineStructs(_claude_code)
PI = LineStructs(_pi)
CODEX = LineStructs(_codex)
