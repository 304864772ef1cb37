"""The block counter (`engine.scan.survey`, by the block, #26 items 1, 2) changes no report.

A clean assistant line the block counter accepts is counted from its match: one message of
the captured model on the captured day. Proven line by line against the parsed record (the
format's messages, `trend.message_time`) and against the per-line path it replaces (the
format's `quick_messages`, `survey.record_day`), on lines in each runtime's own shape with
everything the counter must refuse mixed in (tokens in free parts and in fixed values,
escapes, braces, invalid dates and UTF-8, pi stamps across midnight, delimiters of every
family, split markers); and whole: the JSON report byte for byte with and without the
counter (and with every format fast path off) on generated sessions and every fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.test_survey import MIDNIGHT_MS, TEXT_BYTES, _iso
from tests.formats.test_fast_paths import GENERATED, _record, without_fast_paths
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.scan import native, structsurvey, survey, trend
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import delimiter_hits
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.survey import Days, Key, Surveyor, record_day
from thinkfix.formats import registry
from thinkfix.formats.records import EMPTY_CONTEXT
from thinkfix.io import jsoncheck
from thinkfix.reporters.json import JsonReporter

_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NAMES = ("claude-code", "codex", "pi")

TEXTS = st.sampled_from(
    ["Done."] * 8
    + [
        "über café 日本語",
        "<think>plan</think>Done.",
        "<thinking>plan</thinking>Done.",
        "<reasoning>\nplan\n</reasoning>\nDone.",
        "plan\n</think>\n\nDone.",
        "◁think▷plan◁/think▷Done.",
        "<|begin_of_thought|>plan<|end_of_thought|>Done.",
        "[THINK]plan[/THINK]Done.",
        "Use `<think>` in code, then a < b.",
        "```html\n<think>a tag in a fence</think>\n```\n",
        '"assistant" and "model" and "timestamp" in prose',
        "the <thi",
        "nk> split",
    ]
)
# What a free part may hold that the counter must see: tokens, escapes, nested stamps.
EXTRAS = st.sampled_from(
    [None] * 12
    + [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls", "timeout": 5}},
        {"type": "tool_use", "id": "t2", "name": "Task", "input": {"model": "haiku"}},
        {"type": "text", "text": "x", "timestamp": MIDNIGHT_MS},
        {"type": "text", "text": "x", "created_at": "2026-03-02T10:00:00Z"},
        {"type": "text", "text": "assistant"},
        {"type": "text", "text": "model"},
        {"type": "tool_use", "id": "t3", "name": "x", "input": {"message": "hi"}},
        {"type": "thinking", "thinking": "hmm", "signature": ""},
    ]
)
RARELY = st.sampled_from([False] * 7 + [True])
# Mostly what runtimes write, sometimes what the counter must refuse.
VALUES = st.sampled_from(
    ["main", "/home/dev/app", ""] * 8
    + ["assistant", "model", "timeline", "created", "a{b}", "naïve", "a\\b"]
)
MODELS = st.sampled_from(["claude-opus-4-5", "qwen3:32b", "minimax/minimax-m2"] * 4 + ["", "naïve"])
DATES = st.sampled_from(
    ["2026-03-02", "2026-03-03"] * 6 + ["2026-02-30", "2100-01-01", "1970-06-01", "2026-13-01"]
)
TIMES = st.sampled_from(["23:59:59.500", "00:00:00.000", "12:30:00", "10:21:19.004"])


def _content(draw: st.DrawFn, kind: str) -> list[dict[str, object]]:
    content: list[dict[str, object]] = [{"type": kind, "text": draw(TEXTS)}]
    extra = draw(EXTRAS)
    if extra is not None:
        content.insert(draw(st.integers(0, 1)), extra)
    return content


def _escape(draw: st.DrawFn, line: bytes) -> bytes:
    """Sometimes as an encoder that escapes what it may (`\\u003c`, `\\/`)."""
    if draw(RARELY):
        line = line.replace(b"<", b"\\u003c").replace(b"/", b"\\/")
    return line


@st.composite
def claude_lines(draw: st.DrawFn) -> bytes:
    stamp = f"{draw(DATES)}T{draw(TIMES)}Z"
    head: dict[str, object] = {"id": "msg_1", "type": "message", "role": "assistant"}
    model = draw(MODELS)
    if draw(st.booleans()):
        head = {"model": model, **head}
    else:
        head["model"] = model
    message = {
        **head,
        "content": _content(draw, "text"),
        "stop_reason": None,
        "usage": {"input_tokens": 3},
    }
    entry: dict[str, object] = {
        "parentUuid": None,
        "isSidechain": False,
        "cwd": draw(VALUES),
        "gitBranch": draw(VALUES),
    }
    if draw(st.booleans()):  # the bench's order: type, uuid and timestamp before the message
        entry.update({"type": "assistant", "uuid": "u1", "timestamp": stamp, "message": message})
    else:  # the runtime's: the message first, the timestamp last
        entry.update(
            {"message": message, "requestId": "r1", "type": "assistant", "uuid": "u1"},
        )
        entry["timestamp"] = stamp
    if draw(RARELY):
        entry[draw(st.sampled_from(["timeout", "createdAt", "model", "x"]))] = draw(VALUES)
    return _escape(draw, orjson.dumps(entry))


@st.composite
def pi_lines(draw: st.DrawFn) -> bytes:
    created = MIDNIGHT_MS + draw(st.integers(-4000, 4000))
    appended = created + draw(st.integers(0, 3000))
    message: dict[str, object] = {
        "role": "assistant",
        "content": _content(draw, "text"),
        "api": "openai-completions",
        "provider": "x",
        "model": draw(MODELS),
        "usage": {"input": 1, "cost": {"total": 5e-6}},
        "stopReason": "stop",
        "timestamp": created,
    }
    if draw(RARELY):
        message["timestamp"] = draw(st.sampled_from([created + 0.5, 12, _iso(created)]))
    if draw(RARELY):
        message["errorMessage"] = "x"
    stamp = _iso(appended)
    if draw(RARELY):
        stamp = stamp.replace("2026-03-0", "2026-02-3")
    entry = {
        "type": "message",
        "id": "e1",
        "parentId": draw(st.sampled_from([None, "e0", "timeline"])),
        "timestamp": stamp,
        "message": message,
    }
    return _escape(draw, orjson.dumps(entry))


@st.composite
def codex_lines(draw: st.DrawFn) -> bytes:
    item: dict[str, object] = {"type": "message", "role": "assistant"}
    if draw(st.booleans()):
        item = {"type": "message", "id": draw(VALUES), "role": "assistant"}
    item["content"] = _content(draw, "output_text")
    line = {
        "timestamp": f"{draw(DATES)}T{draw(TIMES)}Z",
        "type": "response_item",
        "payload": item,
    }
    return _escape(draw, orjson.dumps(line))


CANONICAL = {"claude-code": claude_lines(), "pi": pi_lines(), "codex": codex_lines()}


def _surveyor(name: str) -> Surveyor:
    canon = registry.get(name).canonical
    assert canon is not None
    return Surveyor(canon, delimiter_hits(ScanOptions().policy), Days(), 0)


def _accepted(
    name: str, lines: list[bytes], fast: bool = False, surveyor: Surveyor | None = None
) -> dict[int, Key]:
    """{line number: key} of the lines one block's survey accepts (the lines in one buffer,
    after a first line, each one wanted as the sparse reader would hand it); `fast`: its
    native checks, and msgspec's JSON check (`io.jsoncheck`); `surveyor`: another than the
    format's pattern's (`structsurvey`'s)."""
    first = b'{"first":1}\n'
    buf = first + b"".join(line + b"\n" for line in lines)
    wanted: dict[int, int] = {}
    number: dict[int, int] = {}
    at = len(first)
    for i, line in enumerate(lines):
        wanted[at] = at + len(line)
        number[at] = i
        at += len(line) + 1
    with patch.object(jsoncheck, "MSGSPEC_FROM", 0 if fast else 1 << 62):
        found = (surveyor or _surveyor(name)).block(buf, wanted, fast)
    assert set(found.starts).isdisjoint(found.rest)
    assert sorted([*found.starts, *found.rest]) == list(wanted)  # every line, once
    return {number[s]: key for s, key in zip(found.starts, found.keys)}


def _check(name: str, raw: bytes, key: Key) -> None:
    """An accepted line is one message of the key's model on the key's day: by the parsed
    record, and by the per-line path it stands for."""
    fmt = registry.get(name)
    model, day = key
    record = _record(fmt, raw, EMPTY_CONTEXT)
    messages = list(fmt.checked_messages(record))
    assert len(messages) == 1, raw
    assert messages[0].model == model, raw
    when = trend.message_time(record.data, messages[0].path)
    assert when is not None and trend.day(when) == day, raw
    assert fmt.quick_messages(raw, EMPTY_CONTEXT) == (model,), raw
    assert record_day(raw, Days()) == day, raw


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_accepted_line_is_one_message_of_its_model_on_its_day(
    name: str, data: st.DataObject
) -> None:
    lines = data.draw(st.lists(CANONICAL[name], min_size=1, max_size=8))
    together = _accepted(name, lines)
    for i, line in enumerate(lines):
        alone = _accepted(name, [line])
        assert alone.get(0) == together.get(i), line  # a line's answer is its own
        if i in together:
            _check(name, line, together[i])


#: One assistant line of each runtime with a block counter, as it writes them (the fixtures'
#: and the bench's shapes), its text `Done.`.
RUNTIME_LINES = {
    "claude-code": (
        b'{"parentUuid":"p1","isSidechain":false,"userType":"external","cwd":"/w",'
        b'"sessionId":"s1","version":"2.1.32","gitBranch":"main","message":{"id":"msg_1",'
        b'"type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":'
        b'"text","text":"Done."}],"stop_reason":null,"usage":{"input_tokens":3}},'
        b'"requestId":"r1","type":"assistant","uuid":"u1",'
        b'"timestamp":"2026-03-02T23:59:59.500Z"}'
    ),
    "pi": (
        b'{"type":"message","id":"e1","parentId":null,"timestamp":"2026-03-02T23:59:59.500Z",'
        b'"message":{"role":"assistant","content":[{"type":"text","text":"Done."}],'
        b'"api":"x","provider":"x","model":"m","usage":{"input":1},"stopReason":"stop",'
        b'"timestamp":1772495999000}}'
    ),
    "codex": (
        b'{"timestamp":"2026-03-02T10:21:19.004Z","type":"response_item","payload":{"type":'
        b'"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}'
    ),
}


def test_the_runtimes_lines_are_accepted_and_hostile_ones_are_not() -> None:
    """Not vacuous: each runtime's own lines (the fixtures' and the bench's shapes) are
    accepted; one token, escape or odd stamp in them is enough to refuse."""
    lines = RUNTIME_LINES
    for name, line in lines.items():
        found = _accepted(name, [line])
        assert 0 in found, name
        _check(name, line, found[0])
        # escapes that spell no letter of a word the counter looks for and no delimiter (an
        # escaped printable ASCII character may: the delimiter test takes the line): a
        # terminal's colours, an accented letter, an escaped NUL
        for escaped in (b"\\u001b[32mDone.\\u001b[0m", b"caf\\u00e9", b"\\u0000"):
            assert 0 in _accepted(name, [line.replace(b"Done.", escaped)]), escaped
        for hostile in (
            line.replace(b"Done.", b"<think>x</think>Done."),
            line.replace(b"Done.", b"\\u003cthink>x\\u003c/think>Done."),
            line.replace(b"Done.", b'Done.","timeout":"1'),
            line.replace(b"Done.", b"\\u0074imestamp"),
            line.replace(b'"text":"Done."', b'"text":"Done.","\\u006dodel":"x"'),
            line.replace(b'"text":"Done."', b'"text":"Done.","mod\\u0065l":"x"'),
            line.replace(b'"text":"Done."', b'"text":"Done.","\\u006Dodel":"x"'),
            line.replace(b'"text":"Done."', b'"text":"Done.","model":"x"'),
            line.replace(b'"text":"Done."', b'"text":"Done.","created":"x"'),
            line.replace(b"Done.", b"\xff"),
            line.replace(b"Done.", b"Do\\qne."),  # not JSON: an escape JSON does not have
            line.replace(b"Done.", b"Done.\\u12"),
            line.replace(b"Done.", b"a\\\\\\qb"),  # an escaped backslash, then `\q`
            line.replace(b"Done.", b"Do\tne."),  # not JSON: a raw control character
            line.replace(b"Done.", b"Do\x00ne."),
            line.replace(b"2026-03-02T", b"2026-02-30T"),
            line.replace(b"2026-03-02T", b"2100-03-02T"),
            line.replace(b"Done.", b"assistant").replace(b'"text":"assistant"', b'"assistant"'),
        ):
            assert 0 not in _accepted(name, [hostile]), hostile
    pi = lines["pi"].replace(b"1772495999000", b"1772496000500")  # the message after midnight
    assert 0 not in _accepted("pi", [pi])
    assert 0 in _accepted("pi", [lines["pi"].replace(b"1772495999000", b"1772495000000")])


#: Claude Code's other canonical shape: type, uuid and stamp before the message (model first).
CLAUDE_TYPE_FIRST = (
    b'{"parentUuid":"p1","isSidechain":false,"userType":"external","cwd":"/w",'
    b'"sessionId":"s1","version":"2.1.32","gitBranch":"main","type":"assistant","uuid":"u1",'
    b'"timestamp":"2026-03-02T23:59:59.500Z","message":{"model":"claude-opus-4-5","id":"msg_1",'
    b'"type":"message","role":"assistant","content":[{"type":"text","text":"Done."}],'
    b'"stop_reason":null,"usage":{"input_tokens":3}}}'
)


@pytest.mark.parametrize("fast", [False, True], ids=["pure", "native"])
@pytest.mark.parametrize(
    ("name", "line"),
    [
        pytest.param("claude-code", RUNTIME_LINES["claude-code"], id="claude-code"),
        pytest.param("pi", RUNTIME_LINES["pi"], id="pi"),
        pytest.param("claude-code", CLAUDE_TYPE_FIRST, id="claude-code-type-first"),
        pytest.param("codex", RUNTIME_LINES["codex"], id="codex"),
    ],
)
def test_a_line_cut_in_two_by_a_newline_is_never_accepted(
    name: str, line: bytes, fast: bool
) -> None:
    """A free part runs to the end of the window it is searched in (`quick.FREE`), which the
    survey ends just past the line's newline: a line cut short at any byte by a newline (a
    torn write, a line glued to the next) can neither borrow the rest from the next line nor
    be read as one; both pieces are left to the parse. Where the pattern's end is one `}`
    (Codex's lines, Claude Code's type-first shape), a cut just after a `}` of the last free
    part still matched: the JSON check (`io.jsoncheck`) refuses it (it failed before it)."""
    assert 0 in _accepted(name, [line, line], fast)  # not vacuous: whole, each is accepted
    for cut in range(1, len(line)):
        assert _accepted(name, [line[:cut], line[cut:]], fast) == {}, cut


#: A runtime's line whose structure alone is broken, where no word, escape or byte the
#: survey checks shows it: a quote lost inside a text, a bracket lost, a member cut after a
#: `}`. Each was counted clean from its bytes before the JSON check (`io.jsoncheck`).
BROKEN_TEXTS = (b'Do"ne.', b'Done."}],"x":[{"y":1', b"Done.\\")


# --- the report -------------------------------------------------------------------------------


def _json(paths: list[str], options: ScanOptions) -> bytes:
    return JsonReporter().render_bytes(scan(paths, options, jobs=1))


def _reports(paths: list[str], options: ScanOptions, names: list[str]) -> list[bytes]:
    """The report with the block counter (from the first byte), without it, with every
    fast path off, and with the counter keying lines by decoding (`structsurvey`)."""
    with patch.object(survey, "FROM_BYTES", 0), patch.object(structsurvey, "FROM_BYTES", 1 << 62):
        fast = _json(paths, options)
    with patch.object(survey, "FROM_BYTES", 0), patch.object(structsurvey, "FROM_BYTES", 0):
        decoded = _json(paths, options)
    with patch.object(survey, "applies", lambda fmt, windowed: False):
        plain = _json(paths, options)
    with ExitStack() as stack:
        for name in names:
            stack.enter_context(without_fast_paths(registry.get(name)))
        slow = _json(paths, options)
    return [fast, plain, slow, decoded]


def test_every_fixture_reports_the_same_with_and_without_the_block_counter() -> None:
    for by_day in (True, False):
        options = ScanOptions(by_day=by_day, allow_no_sessions=True)
        fast, plain, slow, decoded = _reports([str(_FIXTURES)], options, list(NAMES))
        assert fast == plain == slow == decoded


@st.composite
def sessions(draw: st.DrawFn) -> dict[str, list[bytes]]:
    """Sessions of the three formats: canonical lines (clean, leaking, decoys, hostile),
    the fast-path generators' other lines, context lines (Codex turns and reasoning,
    Claude Code thinking blocks), pi stamps across midnight."""
    out: dict[str, list[bytes]] = {}
    for name in NAMES:
        lines = draw(st.lists(st.one_of(CANONICAL[name], GENERATED[name]), min_size=1, max_size=30))
        out[name] = lines
    return out


def session_files(
    folder: Path, data: dict[str, list[bytes]], **options: object
) -> Iterator[tuple[str, Path, ScanOptions]]:
    """Each generated session written to a file of its format (a fixed mtime, as the report
    shows it), with the options that scan it as that format."""
    for name, lines in data.items():
        path = folder / f"{name}.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        os.utime(path, (1772490000, 1772490000))
        scan_options = ScanOptions(
            inputs=InputOptions(format=name),
            allow_no_sessions=True,
            **options,  # type: ignore[arg-type]
        )
        yield name, path, scan_options


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=sessions(), by_day=st.booleans())
def test_generated_sessions_report_the_same_with_and_without_the_block_counter(
    data: dict[str, list[bytes]], by_day: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("bulk")
    for name, path, options in session_files(folder, data, by_day=by_day):
        fast, plain, slow, decoded = _reports([str(path)], options, [name])
        assert fast == plain == slow == decoded


def test_accepted_lines_take_the_model_of_their_own_turn(tmp_path: Path) -> None:
    """Codex's canonical lines name no model: each counts under the turn it was written in,
    though the block counter counts a block's lines together (two turns, two models, one
    block; a third turn of the first model again)."""

    def turn(model: str) -> bytes:
        return (
            b'{"timestamp":"2026-03-02T10:21:19.003Z","type":"turn_context","payload":{"cwd":'
            b'"/w","approval_policy":"on-request","model":"' + model.encode() + b'"}}\n'
        )

    answer = (
        b'{"timestamp":"2026-03-02T10:21:31.660Z","type":"response_item","payload":{"type":'
        b'"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}\n'
    )
    user = (
        b'{"timestamp":"2026-03-02T10:21:19.004Z","type":"response_item","payload":{"type":'
        b'"message","role":"user","content":[{"type":"input_text","text":"Go."}]}}\n'
    )
    meta = (
        b'{"timestamp":"2026-03-02T10:21:07.412Z","type":"session_meta","payload":{"id":"s",'
        b'"cwd":"/w","originator":"codex_cli_rs","cli_version":"0.98.0"}}\n'
    )
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(
        meta + turn("a") + user + answer * 3 + turn("b") + user + answer * 2 + turn("a") + answer
    )
    options = ScanOptions(inputs=InputOptions(format="codex"), by_day=True)
    fast, plain, slow, decoded = _reports([str(path)], options, ["codex"])
    assert fast == plain == slow == decoded
    report = orjson.loads(fast)
    counts = {m: row["assistant_messages"] for m, row in report["summary"]["by_model"].items()}
    assert counts == {"a": 4, "b": 2}


@pytest.mark.parametrize("name", sorted(RUNTIME_LINES))
def test_a_line_that_is_not_json_is_an_error_on_every_path(name: str, tmp_path: Path) -> None:
    """Never silently clean: a runtime's line whose text holds what no JSON parser reads (an
    escape JSON does not have, a raw control byte) is an input error whether it is counted
    by the block, read line by line from its bytes or parsed; one a parser reads (an escaped
    backslash before a letter, a lone surrogate, a colour escape) is one clean message."""
    line = RUNTIME_LINES[name]
    damaged = [line.replace(b"Done.", text) for text in TEXT_BYTES]
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(x + b"\n" for x in [line] * 40 + damaged + [line] * 40))
    options = ScanOptions(inputs=InputOptions(format=name), by_day=True)
    fast, plain, slow, decoded = _reports([str(path)], options, [name])
    assert fast == plain == slow == decoded
    errors = orjson.loads(slow)["errors"]
    assert [e["line"] for e in errors] == [41, 42, 43, 44, 45, 47]  # \\q .. \x00, a\\\\\\qb


@pytest.mark.parametrize("on", [False, True], ids=["pure", "native"])
@pytest.mark.parametrize("name", [*sorted(RUNTIME_LINES), "claude-code-type-first"])
def test_a_line_whose_structure_alone_is_broken_is_an_error_on_every_path(
    name: str, on: bool, tmp_path: Path
) -> None:
    """Never silently clean: a runtime's line whose structure is broken where no word,
    escape or byte shows it (`BROKEN_TEXTS`: a lost quote, a lost bracket, a quote escaped by
    a text's last backslash), or cut just after a `}` with the rest on the next line, is an
    input error whether it is counted by the block, read line by line from its bytes or
    parsed, on the native passes and the pure ones. Before the JSON check (`io.jsoncheck`)
    the fast paths counted them clean."""
    line = CLAUDE_TYPE_FIRST if name == "claude-code-type-first" else RUNTIME_LINES[name]
    fmt = name.removesuffix("-type-first")
    cut = line.rindex(b"}", 0, len(line) - 1) + 1  # just after a `}` of the last free part
    damaged = [line.replace(b"Done.", text) for text in BROKEN_TEXTS] + [line[:cut], line[cut:]]
    path = tmp_path / f"{fmt}.jsonl"
    path.write_bytes(b"".join(x + b"\n" for x in [line] * 40 + damaged + [line] * 40))
    options = ScanOptions(inputs=InputOptions(format=fmt), by_day=True)
    with (
        patch.object(native, "USE", on),
        patch.object(native, "WARM_UP", 0),
        patch.object(jsoncheck, "MSGSPEC_FROM", 0 if on else 1 << 62),
    ):
        fast, plain, slow, decoded = _reports([str(path)], options, [fmt])
    assert fast == plain == slow == decoded
    report = orjson.loads(slow)
    # the cut line's second half is read only where it holds the assistant marker
    assert [e["line"] for e in report["errors"]] in ([41, 42, 43, 44], [41, 42, 43, 44, 45])
    assert report["summary"]["assistant_messages"] == 80


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(sorted(RUNTIME_LINES)),
    letters=st.sets(st.integers(0, 8), min_size=1),
    on=st.booleans(),
)
def test_a_role_word_spelled_with_escapes_still_names_its_turn(
    name: str, letters: set[int], on: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`"\\u0061ssistant"` is "assistant" to every JSON parser: a runtime's leaking line whose
    role word (and type) has any of its letters escaped is found on every path, native and
    pure, as with the word spelled plainly (review8, finding 1: the marker test read bytes,
    and the default scan and `--parse-all` both counted it clean)."""
    word = "assistant"
    escaped = "".join(f"\\u{ord(c):04x}" if i in letters else c for i, c in enumerate(word))
    line = RUNTIME_LINES[name].replace(b"Done.", b"<think>plan</think>Done.")
    line = line.replace(b'"assistant"', f'"{escaped}"'.encode())
    assert orjson.loads(line) == orjson.loads(  # not vacuous: the same record
        RUNTIME_LINES[name].replace(b"Done.", b"<think>plan</think>Done.")
    )
    path = tmp_path_factory.mktemp("escaped") / f"{name}.jsonl"
    path.write_bytes(b"".join(x + b"\n" for x in [RUNTIME_LINES[name]] * 3 + [line]))
    options = ScanOptions(inputs=InputOptions(format=name), by_day=True)
    with patch.object(native, "USE", on), patch.object(native, "WARM_UP", 0):
        fast, plain, slow, decoded = _reports([str(path)], options, [name])
    assert fast == plain == slow == decoded
    report = orjson.loads(fast)
    assert report["summary"]["findings"] == 1 and report["summary"]["assistant_messages"] == 4
