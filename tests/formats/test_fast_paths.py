"""The scan's fast paths change nothing a report says (#13 item 2).

Two format hooks let scan skip Python work on lines that cannot matter:
`context_markers_for(ctx)` (the markers whose records may change the carried context now) and
`quick_messages(raw, ctx)` (a clean line's message models, read from its bytes), and
`keeps_context(raw, ctx)` (a marked line proven to change nothing). Each is
proven here on its own (against the parsed record, for fixture lines and generated ones),
and together: for every format, scanning a session built from any mix of those lines gives
the same report with the hooks as with the base class's (which disable both). A scan with
counts by day also reads a counted line's time from its bytes (`quick.record_time`): proven
against `trend.message_time`, and by the JSON report, byte for byte, on lines whose time is
moved, repeated, nested, escaped, missing or not in UTC.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.support import DATA, FIXTURES
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.scan import sparse, trend
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.quick import record_time
from thinkfix.formats.reader import iter_jsonl
from thinkfix.formats.records import EMPTY_CONTEXT, Context, Record
from thinkfix.reporters.json import JsonReporter

LINE_FORMATS = [name for name in registry.names() if sparse.supports(registry.get(name))]


def _fixture_lines(name: str) -> list[bytes]:
    """Every line of the JSONL fixtures (and test data) this format claims."""
    out: list[bytes] = []
    for path in sorted([*FIXTURES.rglob("*.jsonl*"), *DATA.glob("*.jsonl")]):
        if not path.is_file():
            continue
        try:
            fmt = registry.detect_file(str(path))
        except ValueError:
            continue
        if fmt.id == name:
            out.extend(line for line in path.read_bytes().split(b"\n") if line.strip())
    return out


FIXTURE_LINES = {name: _fixture_lines(name) for name in LINE_FORMATS}

# --- generated lines, in the shapes the runtimes write ------------------------------------

TEXTS = st.sampled_from(
    [
        "Done.",
        "<think>check the caller</think>The fix is in.",
        "Use a < b here.",
        "it said `<think>` once",
        "plan</think>answer",
        "日本語 résumé",
        "line\nbreak",
        "",
        "assistant",
        "model",
    ]
)
MODELS = st.sampled_from(["claude-opus-4-5", "qwen3:32b", "minimax/minimax-m2", ""])


def _dumps(value: object) -> bytes:
    return orjson.dumps(value)


@st.composite
def claude_lines(draw: st.DrawFn) -> bytes:
    text = draw(TEXTS)
    kind = draw(
        st.sampled_from(
            [
                "assistant",
                "assistant-late-model",
                "no-model",
                "thinking",
                "tool-model",
                "user",
                "progress",
                "summary",
            ]
        )
    )
    content: list[dict[str, object]] = [{"type": "text", "text": text}]
    message: dict[str, object] = {
        "model": draw(MODELS),
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": content,
    }
    if kind == "assistant-late-model":
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": draw(MODELS),
            "content": content,
        }
    elif kind == "no-model":
        del message["model"]
    elif kind == "thinking":
        content.insert(0, {"type": "thinking", "thinking": draw(TEXTS), "signature": ""})
    elif kind == "tool-model":
        content.append(
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "Task",
                "input": {"prompt": text, "model": "haiku"},
            }
        )
    entry: dict[str, object] = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "assistant",
        "uuid": "u1",
        "sessionId": "s1",
        "message": message,
    }
    if kind == "user":
        entry = {
            "type": "user",
            "uuid": "u2",
            "sessionId": "s1",
            "message": {"role": "user", "content": text},
        }
    elif kind == "progress":
        entry = {
            "type": "progress",
            "uuid": "u3",
            "sessionId": "s1",
            "data": {
                "type": "agent_progress",
                "message": {"type": "assistant", "message": message},
            },
        }
    elif kind == "summary":
        entry = {"type": "summary", "summary": text, "leafUuid": "u1"}
    return _dumps(entry)


@st.composite
def pi_lines(draw: st.DrawFn) -> bytes:
    text = draw(TEXTS)
    kind = draw(
        st.sampled_from(
            [
                "session",
                "assistant",
                "no-model",
                "tool-model",
                "user",
                "tool-result",
                "model-change",
            ]
        )
    )
    if kind == "session":
        return _dumps({"type": "session", "version": 3, "id": "p1", "cwd": "/w"})
    if kind == "model-change":
        return _dumps(
            {"type": "model_change", "id": "m0", "provider": "x", "modelId": draw(MODELS)}
        )
    message: dict[str, object] = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions",
        "provider": "x",
        "model": draw(MODELS),
        "stopReason": "stop",
    }
    if kind == "no-model":
        del message["model"]
    elif kind == "tool-model":
        message["content"] = [
            {"type": "text", "text": text},
            {"type": "toolCall", "id": "c1", "name": "run", "arguments": {"model": "m"}},
        ]
    elif kind == "user":
        message = {"role": "user", "content": [{"type": "text", "text": text}]}
    elif kind == "tool-result":
        message = {
            "role": "toolResult",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": text}],
        }
    return _dumps({"type": "message", "id": "e1", "parentId": None, "message": message})


@st.composite
def codex_lines(draw: st.DrawFn) -> bytes:
    text = draw(TEXTS)
    kind = draw(
        st.sampled_from(
            [
                "meta",
                "turn",
                "user",
                "user-event",
                "assistant",
                "assistant-id",
                "reasoning",
                "summary",
                "agent-event",
                "call",
                "compacted",
                "bare",
            ]
        )
    )

    def line(kind: str, payload: dict[str, object]) -> bytes:
        return _dumps({"timestamp": "2026-03-02T10:21:19.004Z", "type": kind, "payload": payload})

    if kind == "meta":
        return line("session_meta", {"id": "c1", "model_provider": "ollama"})
    if kind == "turn":
        return line("turn_context", {"cwd": "/w", "model": draw(MODELS)})
    if kind == "user":
        return line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )
    if kind == "user-event":
        return line("event_msg", {"type": "user_message", "message": text})
    if kind in ("assistant", "assistant-id"):
        item: dict[str, object] = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }
        if kind == "assistant-id":
            item = {
                "type": "message",
                "id": "msg_1",
                **{k: v for k, v in item.items() if k != "type"},
            }
        return line("response_item", item)
    if kind == "reasoning":
        return line(
            "response_item",
            {
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": draw(TEXTS)}],
            },
        )
    if kind == "summary":
        return line(
            "response_item",
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": draw(TEXTS)}]},
        )
    if kind == "agent-event":
        return line("event_msg", {"type": "agent_message", "message": text})
    if kind == "call":
        return line(
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
        )
    if kind == "compacted":
        return line(
            "compacted",
            {
                "message": "",
                "replacement_history": [
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "r"}]},
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    },
                ],
            },
        )
    return _dumps(
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    )


GENERATED = {"claude-code": claude_lines(), "pi": pi_lines(), "codex": codex_lines()}


def lines_of(name: str) -> st.SearchStrategy[bytes]:
    """Fixture lines of the format, and generated ones where there is a generator."""
    pool = FIXTURE_LINES[name]
    fixed = st.sampled_from(pool) if pool else st.nothing()
    return st.one_of(fixed, GENERATED[name]) if name in GENERATED else fixed


# --- the hooks, each against the parsed record ----------------------------------------------


def _record(fmt: SessionFormat, raw: bytes, ctx: Context) -> Record:
    return Record(0, 1, raw, b"\n", ctx, fmt.shapes)


def _contexts(fmt: SessionFormat, lines: list[bytes]) -> Iterator[tuple[bytes, Context]]:
    """Each line after the first with the context the lines before it leave, as the full
    reader carries it (its hook sees the first line and every one with a static marker)."""
    data = b"".join(line + b"\n" for line in lines)
    hook, markers = fmt.context_hook, fmt.context_markers
    ctx = EMPTY_CONTEXT
    for record in iter_jsonl(io.BufferedReader(io.BytesIO(data)), shapes=fmt.shapes, hook=None):
        if record.index:
            yield record.raw, ctx
        if (
            hook is not None
            and record.data is not None
            and (record.index == 0 or any(m in record.raw for m in markers))
        ):
            _, ctx = hook(_record(fmt, record.raw, ctx), ctx)


def _check_line(fmt: SessionFormat, raw: bytes, ctx: Context) -> None:
    models = fmt.quick_messages(raw, ctx)
    if models is not None:
        record = _record(fmt, raw, ctx)
        assert record.error is None, raw
        messages = fmt.checked_messages(record)
        assert record.error is None, raw
        assert tuple(m.model for m in messages) == models, raw
    hook = fmt.context_hook
    if hook is not None and fmt.keeps_context(raw, ctx):
        record = _record(fmt, raw, ctx)
        assert record.data is None or hook(record, ctx) == (ctx, ctx), raw
    if (
        hook is not None
        and any(m in raw for m in fmt.context_markers)
        and not any(m in raw for m in fmt.context_markers_for(ctx))
    ):
        record = _record(fmt, raw, ctx)
        if record.data is not None:
            assert hook(record, ctx) == (ctx, ctx), raw  # an unmarked record changes nothing


@pytest.mark.parametrize("name", LINE_FORMATS)
def test_the_hooks_agree_with_the_parsed_record_on_fixture_lines(name: str) -> None:
    fmt = registry.get(name)
    for raw, ctx in _contexts(fmt, FIXTURE_LINES[name]):
        _check_line(fmt, raw, ctx)


@pytest.mark.parametrize("name", sorted(GENERATED))
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_hooks_agree_with_the_parsed_record_on_generated_lines(
    name: str, data: st.DataObject
) -> None:
    fmt = registry.get(name)
    lines = data.draw(st.lists(lines_of(name), min_size=1, max_size=12))
    for raw, ctx in _contexts(fmt, lines):
        _check_line(fmt, raw, ctx)


def test_the_quick_counters_take_the_lines_runtimes_write() -> None:
    """Not a vacuous proof: the counters do answer for the usual assistant lines."""
    for name in GENERATED:
        fmt = registry.get(name)
        answered = [
            fmt.quick_messages(line, EMPTY_CONTEXT) is not None
            for line in FIXTURE_LINES[name]
            if fmt.assistant_marker in line
        ]
        assert any(answered), name


# --- together: the report ---------------------------------------------------------------------


@contextmanager
def without_fast_paths(fmt: SessionFormat) -> Iterator[None]:
    """The base class's hooks: every marker matters, no line is counted from its bytes
    (one by one or by the block: `canonical`)."""
    with ExitStack() as stack:
        for name in ("quick_messages", "context_markers_for", "keeps_context", "canonical"):
            stack.enter_context(patch.object(type(fmt), name, getattr(SessionFormat, name)))
        yield


def _for_every_line_format(test: Callable[..., None]) -> Callable[..., None]:
    """A property run per line format, 40 examples each, drawing its lines as it goes."""
    return pytest.mark.parametrize("name", LINE_FORMATS)(
        settings(
            max_examples=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )(given(data=st.data())(test))
    )


@_for_every_line_format
def test_scan_report_is_identical_with_and_without_the_fast_paths(
    name: str, data: st.DataObject, tmp_path: Path
) -> None:
    if not FIXTURE_LINES[name] and name not in GENERATED:
        pytest.skip(f"no JSONL lines of {name}")
    fmt = registry.get(name)
    lines = data.draw(st.lists(lines_of(name), min_size=1, max_size=40))
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    options = ScanOptions(inputs=InputOptions(format=name), allow_no_sessions=True)
    fast = scan([str(path)], options, jobs=1)
    with without_fast_paths(fmt):
        slow = scan([str(path)], options, jobs=1)
    assert fast == slow


# --- by-day counts: the record's time read from its bytes ------------------------------------

VALID_STAMPS = st.sampled_from(["2026-03-02T10:21:19.004Z", "2026-03-03T00:00:00Z"])
STAMPS = VALID_STAMPS | st.sampled_from(
    [
        "2026-03-02T10:21:19.004Z",
        "2026-03-02T23:59:59.9999999Z",
        "2026-03-03T00:00:00Z",
        "2026-03-03T01:00:00+02:00",  # non-UTC: the day before in UTC
        "2026-03-02T10:21:19.004z",
        "2026-02-30T10:00:00Z",  # no such date
        "2026-03-02T24:00:00Z",
        "2026-03-02",
        "2026-03-02T10:21:19",
        " 2026-03-02T10:21:19Z",
        "0999-03-02T10:21:19Z",
        'a"b',  # escaped quote in the value
        "2026-03-02T10:21:19\\Z",
        "yesterday",
        "",
    ]
)
NUMBERS = st.sampled_from([1772409600000, 1772582400, 0, -1, 1.5])

# Byte edits that move, repeat, hide or nest a record's time (each keeps the line one object).
_EDITS = [
    "drop",
    "first",
    "last",
    "duplicate",
    "escaped-key",
    "in-message",
    "message-ms",
    "in-content",
    "only-in-content",
    "created",
    "time",
    "number",
    "nested-before",
    "in-text",
]


def _with_time(line: bytes, edit: str, stamp: str, number: object) -> bytes:
    """An assistant line of any format with its time placed (or hidden) as `edit` says."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:  # a fixture's broken line stays as it is
        return line
    if not isinstance(obj, dict):
        return line
    obj.pop("timestamp", None)
    message = obj.get("message") or obj.get("payload")
    if edit == "first":
        obj = {"timestamp": stamp, **obj}
    elif edit in ("last", "duplicate", "escaped-key", "created", "time", "in-text"):
        obj["timestamp"] = stamp
    elif edit == "number":
        obj["timestamp"] = number
    elif edit == "nested-before":
        obj = {"meta": {"x": 1}, "timestamp": stamp, **obj}
    if isinstance(message, dict):
        if edit == "in-message":
            message["timestamp"] = stamp
        elif edit == "message-ms":
            obj = {"timestamp": stamp, **obj}
            message["timestamp"] = number
        elif edit == "created":
            message["created_at"] = "2021-05-05T05:05:05Z"
        elif edit == "time":
            message["time"] = number
        elif edit == "in-text" and isinstance(message.get("content"), list):
            message["content"].append({"type": "text", "text": f'"timestamp":"{stamp}"'})
        elif edit.endswith("in-content") and isinstance(message.get("content"), list):
            if edit == "in-content":
                obj = {"timestamp": "2026-03-02T10:21:19.004Z", **obj}
            message["content"].append({"type": "tool_use", "input": {"timestamp": stamp}})
    raw = orjson.dumps(obj)
    if edit == "duplicate":  # a second key, earlier: JSON's last one wins
        raw = raw.replace(b"{", b'{"timestamp":"2020-01-01T00:00:00Z",', 1)
    elif edit == "escaped-key" and isinstance(message, dict):
        raw = raw.replace(
            b'"message":{', b'"message":{"\\u0074imestamp":"2021-05-05T05:05:05Z",', 1
        )
        raw = raw.replace(
            b'"payload":{', b'"payload":{"\\u0074imestamp":"2021-05-05T05:05:05Z",', 1
        )
    return raw


@st.composite
def timed_lines(draw: st.DrawFn, name: str, always: bool = False) -> bytes:
    """A line of the format, an assistant one often (`always`: always) with its time moved or
    hidden."""
    line = draw(lines_of(name))
    if registry.get(name).assistant_marker not in line or not (always or draw(st.booleans())):
        return line
    return _with_time(line, draw(st.sampled_from(_EDITS)), draw(STAMPS), draw(NUMBERS))


@pytest.mark.parametrize("name", sorted(GENERATED))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_quick_time_is_the_time_every_message_takes(name: str, data: st.DataObject) -> None:
    """Where `record_time` answers for a line the counter takes, it is the parsed record's
    time for each of its messages (`trend.message_time`), and `utc_day` is that time's day."""
    fmt = registry.get(name)
    raw = data.draw(timed_lines(name, always=True))
    if fmt.quick_messages(raw, EMPTY_CONTEXT) is None:
        return
    stamp = record_time(raw)
    record = _record(fmt, raw, EMPTY_CONTEXT)
    for m in fmt.checked_messages(record):
        when = trend.message_time(record.data, m.path)
        if stamp is not None:
            assert when == trend.epoch(stamp), raw
            # (None where no such date exists: then the record is parsed, as before)
            assert trend.utc_day(stamp) == (None if when is None else trend.day(when)), raw


def test_the_quick_time_takes_the_lines_runtimes_write() -> None:
    """Not vacuous: the usual Claude Code and Codex assistant lines answer, and each of the
    hostile shapes the report property draws is refused where it would be wrong."""
    for name in ("claude-code", "codex"):
        fmt = registry.get(name)
        assert any(
            record_time(line) is not None
            for line in FIXTURE_LINES[name]
            if fmt.quick_messages(line, EMPTY_CONTEXT) is not None
        ), name
    claude = (
        b'{"parentUuid":null,"type":"assistant","message":{"model":"m","role":"assistant",'
        b'"content":[]},"uuid":"u","timestamp":"2026-03-02T10:21:19.004Z"}'
    )
    assert record_time(claude) == "2026-03-02T10:21:19.004Z"
    for hostile in (
        claude.replace(b'"uuid":"u",', b'"uuid":"u","timestamp":"2020-01-01T00:00:00Z",'),
        claude.replace(b'"role"', b'"\\u0074ime":1,"role"'),
        claude.replace(b'"role"', b'"created_at":"2020-01-01T00:00:00Z","role"'),
        claude.replace(b".004Z", b".004+02:00"),
        claude.replace(b"10:21", b'10:\\"21'),
        b'{"type":"assistant","message":{"x":{"y":1}},"timestamp":"2026-03-02T10:21:19Z","u":1}',
        b'{"type":"assistant","message":{"role":"assistant","timestamp":"2026-03-02T10:21:19Z"}}',
        b'{"x":{"timestamp":"2026-03-02T10:21:19.004Z"},"message":{"role":"assistant"}}',
        b'{"x\\"timestamp":"2026-03-02T10:21:19.004Z","message":{"role":"assistant"}}',
        b'{"x":"\\"timestamp":"2026-03-02T10:21:19.004Z"}',
    ):
        assert record_time(hostile) is None, hostile


def _json_report(path: Path, name: str, options: ScanOptions) -> bytes:
    return JsonReporter().render_bytes(scan([str(path)], options, jobs=1))


@_for_every_line_format
def test_json_report_with_days_is_identical_with_and_without_the_fast_paths(
    name: str, data: st.DataObject, tmp_path: Path
) -> None:
    """The by-day counts (`--output-format json`, openmetrics, html) and a time window, byte
    for byte, on fixture lines and generated ones with their times moved, repeated, nested,
    escaped, missing or not in UTC (a message without a time takes its file's)."""
    if not FIXTURE_LINES[name] and name not in GENERATED:
        pytest.skip(f"no JSONL lines of {name}")
    fmt = registry.get(name)
    strategy = timed_lines(name) if name in GENERATED else lines_of(name)
    lines = data.draw(st.lists(strategy, min_size=1, max_size=40))
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    os.utime(path, (1772490000, 1772490000))  # 2026-03-02T22:20:00Z: a day some lines share
    since, until = data.draw(
        st.sampled_from(
            [(None, None), (1772409600.0, None), (None, 1772496000.0), (1772446879.0, 1772496000.0)]
        )
    )
    options = ScanOptions(
        inputs=InputOptions(format=name),
        allow_no_sessions=True,
        by_day=True,
        since=since,
        until=until,
    )
    fast = _json_report(path, name, options)
    with without_fast_paths(fmt):
        slow = _json_report(path, name, options)
    assert fast == slow
