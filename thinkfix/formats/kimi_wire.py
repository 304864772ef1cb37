"""Kimi CLI wire logs: `<session id>/wire.jsonl` (and `subagents/<id>/wire.jsonl`) beside `context.jsonl`.

What the UI saw, replayed on every resume (never sent to the model): ACP's `session/load`
(`src/kimi_cli/acp/session.py`, `replay_history`: a text part goes to `_send_text`, a think
part to `_send_thinking`), the shell's `_build_replay_turns_from_wire`
(`src/kimi_cli/ui/shell/replay.py`), the web UI (`src/kimi_cli/web/api/sessions.py`) and
wire mode's `replay` (`src/kimi_cli/wire/server.py`, `_handle_replay`). So a leak left here
shows again on every resume even once `context.jsonl` is repaired.

Shape (`src/kimi_cli/wire/file.py`): a first line `{"type": "metadata", "protocol_version"}`,
then one `WireMessageRecord` a line, `{"timestamp": <float>, "message": {"type": <class
name>, "payload": {...}}}`, each written by `json.dumps(..., ensure_ascii=False)` (default
separators). Assistant text is a `ContentPart` whose payload is `{"type": "text", "text"}`,
reasoning one whose payload is `{"type": "think", "think", "encrypted"}`. The recorder
(`src/kimi_cli/wire/__init__.py`, `_WireRecorder`) writes the merged queue: consecutive text
deltas are one line, but any other message mid-stream (a status update, a notification)
splits the text over several lines. So a message here is a *run*: the text parts of one step
with no other content, tool call, step or turn record between them, read as one text (its
site is on the run's first line, `_runs`); a repair rewrites each line's share of it
(`shares`) and puts the reasoning in a think part record before the run.

A sub-agent's events are also in the parent's wire, each wrapped as a `SubagentEvent`
(`src/kimi_cli/subagents/runner.py`, `_make_ui_loop_fn`), and the web UI replays them on
every session open as the text and thinking steps of the parent's Agent tool call
(`src/kimi_cli/web/api/sessions.py`, `replay_history`; `web/src/hooks/useSessionStream.ts`,
`processSubagentEvent`). So each sub-agent's events are a lane of their own (sub-agents run
side by side; their events interleave), read in runs as the top level's are, and a nested
run's reasoning goes into a nested think part before it, wrapped as its first line is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from thinkfix.formats.base import Message
from thinkfix.formats.common import FormatBase, join_texts, place_nothing
from thinkfix.formats.detection import sample, share
from thinkfix.formats.kimi_cli import content_text, think_part
from thinkfix.formats.locations import env_dir
from thinkfix.formats.reader import bounded_lines, iter_jsonl
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import (
    DEFAULT_OPTIONS,
    ApplyOptions,
    Edits,
    Placement,
    PlacementKind,
    Repair,
    TextSlot,
)
from thinkfix.formats.turn_shapes import tool_call, tool_result
from thinkfix.formats.turns import Part, PartKind, Role, Turn
from thinkfix.formats.values import UnexpectedShape, get_path, kept_chars, text_value

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

    from thinkfix.formats.planner import Draft, Plan

#: Where a text part's text is in a record, and in a sub-agent's event the parent wraps.
TEXT = ("message", "payload", "text")
NESTED_TEXT = ("message", "payload", "event", "payload", "text")
#: A record's lane: None for the session's own events, else the sub-agent's (its parent tool
#: call and agent id): sub-agents run side by side and their events interleave.
Lane = tuple[Any, Any] | None

#: Messages that end a run of text: another step or turn, a tool call, a compaction, a
#: sub-agent's event (`src/kimi_cli/wire/types.py`, `Event`). Any other content part (think,
#: image) ends it too; the rest (status updates, notifications, hooks, approvals) only
#: interrupt the stream, as the recorder's merge sees them.
_ENDS_RUN = frozenset(
    {
        "TurnBegin",
        "SteerInput",
        "TurnEnd",
        "StepBegin",
        "StepInterrupted",
        "StepRetry",
        "CompactionBegin",
        "CompactionEnd",
        "ToolCall",
        "ToolCallPart",
        "ToolResult",
        "SubagentEvent",
        "BtwBegin",
        "BtwEnd",
    }
)
#: Messages after which a step's earlier think parts no longer belong to the next text.
_NEW_STEP = frozenset({"TurnBegin", "SteerInput", "TurnEnd", "StepBegin", "CompactionEnd"})

_TEXT, _THINK, _END, _OTHER = "text", "think", "end", "other"


def _message(o: Any) -> tuple[str, Any] | None:
    """(type, payload) of a wire record, or None for a line of another shape (metadata)."""
    if not isinstance(o, dict):
        return None
    message = o.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return None
    return message["type"], message.get("payload")


def _lane(o: Any) -> tuple[Lane, tuple[str, Any] | None]:
    """A record's lane and the message in it: a `SubagentEvent`'s nested event is its
    sub-agent's (`parent_tool_call_id`, before wire 1.6 `task_tool_call_id`, and
    `agent_id`: `SubagentEvent._compat_legacy_fields`, src/kimi_cli/wire/types.py)."""
    found = _message(o)
    if found is None or found[0] != "SubagentEvent" or not isinstance(found[1], dict):
        return None, found
    payload = found[1]
    inner = _message({"message": payload.get("event")})
    if inner is None:
        return None, found
    call = payload.get("parent_tool_call_id", payload.get("task_tool_call_id"))
    return (call, payload.get("agent_id")), inner


def _kind(record: Record, lane: Lane = None) -> str:
    """How a record bears on the runs of `lane`: a text part, a think part, a run's end, or
    neither. Another sub-agent's events, and the session's own, are neither to a
    sub-agent's run; a sub-agent's event ends a run of the session's own (`_ENDS_RUN`)."""
    return _kind_of(*_lane(record.obj), lane)


def _kind_of(own: Lane, found: tuple[str, Any] | None, lane: Lane) -> str:
    if found is None or (own != lane and lane is not None):
        return _OTHER
    if own != lane:
        return _END
    kind, payload = found
    if kind == "ContentPart":
        if isinstance(payload, dict) and payload.get("type") == "text":
            return _TEXT if isinstance(payload.get("text"), str) else _END
        if isinstance(payload, dict) and payload.get("type") == "think":
            return _THINK
        return _END
    return _END if kind in _ENDS_RUN else _OTHER


def _text_path(record: Record) -> tuple[str, ...]:
    return TEXT if _lane(record.obj)[0] is None else NESTED_TEXT


def _text(record: Record) -> str:
    text = get_path(record.obj, _text_path(record))
    assert isinstance(text, str)
    return text


def _runs(records: Iterable[Record]) -> Iterator[Record]:
    """The records, the first of each run of text carrying the run's texts (`ctx.extra["run"]`)
    and its lane's step's reasoning before it (`"native"`): the run's other lines hold no
    message of their own. Records are held back only while a run is open (memory: the
    runs open side by side, one a lane)."""
    runs: dict[Lane, tuple[Record, list[str]]] = {}
    thinks: dict[Lane, list[str]] = {}
    held: list[Record] = []
    for record in records:
        lane, found = _lane(record.obj)
        if lane is not None and None in runs:  # a sub-agent's event ends the session's run
            _close(*runs.pop(None), thinks.get(None, []))
        kind = _kind_of(lane, found, lane)
        if kind == _TEXT:
            assert found is not None  # a text part's payload is a dict with a string text
            runs.setdefault(lane, (record, []))[1].append(found[1]["text"])
        elif kind != _OTHER:
            if lane in runs:
                _close(*runs.pop(lane), thinks.get(lane, []))
            if kind == _THINK:
                think = found[1].get("think") if found and isinstance(found[1], dict) else None
                thinks.setdefault(lane, []).append(think if isinstance(think, str) else "")
            if found is not None and found[0] in _NEW_STEP:
                thinks[lane] = []
        held.append(record)
        if not runs:
            yield from held
            held = []
    for lane, (first, texts) in runs.items():
        _close(first, texts, thinks.get(lane, []))
    yield from held


def _close(first: Record, texts: list[str], thinks: list[str]) -> None:
    first.ctx = first.ctx._replace(
        extra={**first.ctx.extra, "run": tuple(texts), "native": join_texts(thinks)}
    )


def run_at(records: Sequence[Record], start: int) -> list[int]:
    """The indices of the text lines of the run whose first line is record `start`."""
    lines = [start]
    lane = _lane(records[start].obj)[0]
    for i in range(start + 1, len(records)):
        kind = _kind(records[i], lane)
        if kind == _TEXT:
            lines.append(i)
        elif kind != _OTHER:
            break
    return lines


def shares(texts: Sequence[str], visible: str) -> list[str]:
    """Each line's share of a run's repaired text: what of its own text remains visible.

    `visible` is matched in the joined text as a subsequence, from the end (the leak most
    often precedes the answer), so every line keeps the characters it held; the shares join
    to `visible` exactly. A `visible` that is no subsequence (a placeholder) goes whole to
    the first line."""
    kept = kept_chars("".join(texts), visible)
    if kept is None:
        return [visible] + [""] * (len(texts) - 1)
    out, at = [], 0
    for text in texts:
        out.append("".join(c for c, k in zip(text, kept[at : at + len(text)]) if k))
        at += len(text)
    return out


def _think_record(first: dict[str, Any], segments: Sequence[str]) -> dict[str, Any]:
    """A think part's record as the recorder writes one (`ThinkPart.model_dump(mode="json")`
    keeps `encrypted: null`), with the timestamp of the run's first line; in a sub-agent's
    lane wrapped as that line is (the runner forwards a think part as it does a text part)."""
    payload = {"type": "think", "think": "\n\n".join(segments), "encrypted": None}
    message: dict[str, Any] = {"type": "ContentPart", "payload": payload}
    if _lane(first)[0] is not None:
        wrapper = first["message"]["payload"]
        message = {"type": "SubagentEvent", "payload": {**wrapper, "event": message}}
    return {"timestamp": first.get("timestamp"), "message": message}


#: The text field of kosong's text and think parts (`TextPart.text`, `ThinkPart.think`).
_PART_TEXT = {"text": "text", "think": "think"}
#: How the recorder's `json.dumps` opens every record's message (default separators).
_MESSAGE_OPENER = b'"message": {"type": "'


def _check(o: Any) -> None:
    """Raise `UnexpectedShape` for a record no Kimi writes: a message that is no `{type:
    <class name>, payload}` (`WireMessageRecord`), a `SubagentEvent` whose payload or nested
    event is not one (`SubagentEvent._validate_event`), or a content part whose `type` is no
    string or whose text or think is no string (kosong's `ContentPart` validator and
    `TextPart`/`ThinkPart`). `_kind` took each for a run's end, so its leak was counted
    clean."""
    if not _metadata(o):
        _check_message(o.get("message") if isinstance(o, dict) else None, ("message",))


def _check_message(message: Any, where: tuple[str, ...]) -> None:
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise UnexpectedShape(where, message, "a {type, payload} wire message")
    payload = message.get("payload")
    if message["type"] == "SubagentEvent":
        if not isinstance(payload, dict):
            raise UnexpectedShape((*where, "payload"), payload, "a SubagentEvent object")
        _check_message(payload.get("event"), (*where, "payload", "event"))
    if message["type"] != "ContentPart":
        return
    where = (*where, "payload")
    if not isinstance(payload, dict):
        raise UnexpectedShape(where, payload, "a content part object")
    kind = payload.get("type")
    if not isinstance(kind, str):
        raise UnexpectedShape((*where, "type"), kind, "a string naming the part's type")
    field = _PART_TEXT.get(kind)
    if field is not None:
        text_value(payload.get(field), (*where, field))


def _metadata(o: Any) -> bool:
    """`WireFileMetadata`'s shape: its two fields (`type` is "metadata"; judged by the keys, so
    an odd value does not make the file unknown)."""
    return isinstance(o, dict) and set(o) == {"type", "protocol_version"}


def _envelope(o: Any) -> bool:
    return (
        isinstance(o, dict)
        and isinstance(o.get("timestamp"), (int, float))
        and _message(o) is not None
        and set(o) <= {"timestamp", "message"}
    )


class KimiWire(FormatBase):
    id = "kimi-wire"
    description = (
        "Kimi CLI wire logs: ~/.kimi/sessions/<md5 of work dir>/<session>/wire.jsonl (what "
        "the UI showed, replayed on resume; text and think ContentPart records)"
    )
    detection = (
        'JSONL opening with {"type": "metadata", "protocol_version"} and then '
        "{timestamp, message: {type, payload}} records (or only such records)"
    )
    placement = (
        "a {type: think, think, encrypted: null} ContentPart record before the text's run, "
        "with its timestamp: replayed as thinking on resume"
    )
    locations_source = (
        "$KIMI_SHARE_DIR, else ~/.kimi (MoonshotAI/kimi-cli src/kimi_cli/share.py "
        "get_share_dir); sessions/<md5 of the work dir>/<id>/wire.jsonl "
        "(src/kimi_cli/session.py, src/kimi_cli/wire/file.py WireFile)"
    )
    assistant_marker = b'"ContentPart"'
    appends_lines = True  # `WireFile.append_record` only appends lines (undo keeps them)

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [env_dir(env, ("KIMI_SHARE_DIR",), home, ".kimi") / "sessions"]

    def detect(self, head: bytes, path: str = "") -> float:
        objects = sample(head).objects
        if not objects:
            return 0.0
        if _metadata(objects[0]):
            rest = objects[1:]
            return 0.95 if not rest or share(rest, _envelope) >= 0.8 else 0.0
        return 0.9 if share(objects, _envelope) >= 0.8 else 0.0

    def read(self, fp: BinaryIO) -> Iterator[Record]:
        """The lines, the first of each run carrying it (`_runs`)."""
        return _runs(iter_jsonl(bounded_lines(fp), shapes=self.shapes))

    def may_contain_assistant(self, raw: bytes) -> bool:
        """A content part's record, or one whose message the recorder did not write (parsed,
        so `messages` rejects it)."""
        return self.assistant_marker in raw or _MESSAGE_OPENER not in raw

    def messages(self, record: Record) -> Iterator[Message]:
        if record.obj is not None:
            _check(record.obj)
        texts = record.ctx.extra.get("run")
        if texts is None or _kind(record, _lane(record.obj)[0]) != _TEXT:
            return
        at = _text_path(record)
        yield Message(
            () if at == TEXT else at[:-2],
            record.index,
            [TextSlot(at, "".join(texts))],
            native=record.ctx.extra.get("native"),
        )

    def edits(
        self,
        records: Sequence[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[Edits, list[Placement]]:
        """As planned, a run's repair drafted on its first line as that line reads alone
        (the planner checks the site's text against the record), and reported with the
        site as scanned."""
        given = list(repairs)
        edits, placements = super().edits(
            records, [self._on_line(records, r) for r in given], options
        )
        return edits, [p._replace(site=r.site) for p, r in zip(placements, given)]

    @staticmethod
    def _on_line(records: Sequence[Record], repair: Repair) -> Repair:
        site = repair.site
        i = site.record_index
        if not 0 <= i < len(records) or site.path not in (TEXT, NESTED_TEXT):
            return repair
        if (
            site.path != _text_path(records[i])
            or _kind(records[i], _lane(records[i].obj)[0]) != _TEXT
        ):
            return repair
        own = _text(records[i])
        joined = "".join(_text(records[j]) for j in run_at(records, i))
        if joined == site.text:
            return repair._replace(site=site._replace(text=own))
        # not the run scanned (a text line added to it since): the planner's check says stale
        return repair if own != site.text else repair._replace(site=site._replace(text=joined))

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        from thinkfix.formats.jsonedit import SetValue

        site = draft.site
        lines = run_at(plan.records, site.record_index)
        texts = [_text(plan.records[i]) for i in lines]
        draft.edits = []
        at = site.path
        for n, (i, text, share_) in enumerate(
            zip(lines, texts, shares(texts, draft.repair.visible))
        ):
            if share_ == text:
                continue
            if n == 0:
                draft.edit(i, SetValue(at, share_))
            else:
                draft.mirror(i, at, share_)
        if not draft.segments:
            place_nothing(draft)
            return
        first = plan.records[site.record_index].data
        draft.insert_record(site.record_index, _think_record(first, draft.segments))
        draft.place(
            PlacementKind.RECORD,
            "think ContentPart record before the text (replayed as thinking on resume)",
        )

    def turns(self, record: Record) -> Iterator[Turn]:
        """The record as `show` prints it: a prompt, a run's whole text (on its first line),
        a think part, a tool call or its result."""
        found = _message(record.obj)
        if found is None:
            return
        kind, payload = found
        if not isinstance(payload, dict):
            return
        if kind in ("TurnBegin", "SteerInput"):
            text = content_text(payload.get("user_input"))
            if text:
                yield Turn(Role.USER, (Part(PartKind.TEXT, text),))
        elif kind == "ContentPart" and payload.get("type") == "text":
            # a run is one text, on its first line (as its site is)
            run = record.ctx.extra.get("run")
            said = "".join(run) if run is not None else None
            if said:
                yield Turn(Role.ASSISTANT, (Part(PartKind.TEXT, said, path=TEXT),))
        elif kind == "ContentPart" and payload.get("type") == "think":
            part = think_part(payload)
            if part is not None:
                yield Turn(Role.ASSISTANT, (part,))
        elif kind == "ToolCall" and isinstance(payload.get("function"), dict):
            fn = payload["function"]
            call = tool_call(fn.get("arguments"), fn.get("name"), payload.get("id"))
            yield Turn(Role.ASSISTANT, (call,))
        elif kind == "ToolResult":
            value = payload.get("return_value")
            output = value.get("output") if isinstance(value, dict) else value
            yield Turn(Role.TOOL, (tool_result(output, call_id=payload.get("tool_call_id")),))
