"""The block counter by decoding (`engine.scan.structsurvey`, `formats.linestructs`, #26).

A line the decoding counter accepts is counted as one message of its key's model on its
key's day, never parsed: proven against the parsed record (the format's `checked_messages`
and `trend.message_time`) on the runtimes' lines in any key order, with escaped keys,
repeated keys and everything it must refuse mixed in. The whole report is held byte for
byte to the pattern's counter, to no counter and to every fast path off in
tests/engine/test_bulk.py (`_reports`' fourth report).
"""

from __future__ import annotations

import random
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.test_bulk import CANONICAL, NAMES, RUNTIME_LINES, _reports
from tests.engine.test_bulk import _accepted as accepted_by
from tests.formats.test_fast_paths import _record
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.scan import structsurvey, survey, trend
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import delimiter_hits
from thinkfix.engine.scan.structsurvey import StructSurveyor
from thinkfix.engine.scan.survey import Days, Key, Surveyor
from thinkfix.formats import registry
from thinkfix.formats.records import EMPTY_CONTEXT


def _surveyor(name: str, limit: int = 0) -> StructSurveyor:
    canon = registry.get(name).canonical
    assert canon is not None and canon.structs is not None
    keys = canon.structs.keyer()
    assert keys is not None  # msgspec is a test dependency
    base = Surveyor(canon, delimiter_hits(ScanOptions().policy), Days(), limit)
    return StructSurveyor(base, keys)


def _accepted(name: str, lines: list[bytes], fast: bool = False, limit: int = 0) -> dict[int, Key]:
    """{line number: key} of the lines one block's decoding survey accepts, each line wanted."""
    return accepted_by(name, lines, fast, _surveyor(name, limit))


def _check(name: str, raw: bytes, key: Key) -> None:
    """An accepted line is one message of the key's model on the key's day, by its parse."""
    fmt = registry.get(name)
    model, day = key
    record = _record(fmt, raw, EMPTY_CONTEXT)
    messages = list(fmt.checked_messages(record, texts=True))
    assert record.error is None, raw
    assert len(messages) == 1, raw
    assert messages[0].model == model, raw
    when = trend.message_time(record.data, messages[0].path)
    assert when is not None and trend.day(when) == day, raw


def _shuffled(line: bytes, seed: int) -> bytes:
    """The same record with the members of it and of its message in another order."""
    rng = random.Random(seed)

    def mix(value: object) -> object:
        if isinstance(value, dict):
            items = list(value.items())
            rng.shuffle(items)
            return {k: mix(v) if k in ("message", "payload") else v for k, v in items}
        return value

    return orjson.dumps(mix(orjson.loads(line)))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_accepted_line_is_one_message_of_its_model_on_its_day(
    name: str, data: st.DataObject
) -> None:
    lines = data.draw(st.lists(CANONICAL[name], min_size=1, max_size=8))
    if data.draw(st.booleans()):  # in another key order, where it parses
        seed = data.draw(st.integers(0, 1000))
        lines = [_shuffled(line, seed) if _parses(line) else line for line in lines]
    fast = data.draw(st.booleans())
    together = _accepted(name, lines, fast)
    for i, line in enumerate(lines):
        alone = _accepted(name, [line], fast)
        assert alone.get(0) == together.get(i), line  # a line's answer is its own
        if i in together:
            _check(name, line, together[i])


def _parses(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


def test_the_runtimes_lines_are_accepted_in_any_key_order() -> None:
    """Not vacuous: each runtime's own line is accepted, as it writes it and reordered, with
    a key its reader does not read and a repeated key (the last value wins, as in orjson's
    parse). An escaped letter anywhere is the delimiter test's to refuse (it may spell a
    tag)."""
    for name, line in RUNTIME_LINES.items():
        for variant in (
            line,
            _shuffled(line, 1),
            _shuffled(line, 2),
            line.replace(b'"text":"Done."', b'"text":"Done.","model":"x"'),  # a part's, not read
        ):
            found = _accepted(name, [variant])
            assert 0 in found, variant
            _check(name, variant, found[0])
    claude = RUNTIME_LINES["claude-code"]
    twice = claude.replace(b'"model":"claude-opus-4-5"', b'"model":"a","model":"b"')
    assert _accepted("claude-code", [twice])[0][0] == "b"
    _check("claude-code", twice, ("b", "2026-03-02"))
    # pi: the message's own stamp dates it, whichever day the entry was written on
    pi = RUNTIME_LINES["pi"].replace(b"1772495999000", b"1772496000500")
    assert _accepted("pi", [pi])[0] == ("m", "2026-03-03")
    _check("pi", pi, ("m", "2026-03-03"))


#: What the counter must leave to the parse, for each runtime's line (a text's replacement).
HOSTILE_TEXTS = (
    b"<think>x</think>Done.",
    b"\\u003cthink>x\\u003c/think>Done.",
    b"Done.</think>",
    b"\xff",
    b"Do\\qne.",
    b"Done.\\u12",
    b"Do\tne.",
    b"Do\x00ne.",
    b'Do"ne.',
    b"Done.\\",
)


@pytest.mark.parametrize("fast", [False, True], ids=["pure", "native"])
@pytest.mark.parametrize("name", sorted(RUNTIME_LINES))
def test_hostile_lines_are_left_to_the_parse(name: str, fast: bool) -> None:
    line = RUNTIME_LINES[name]
    assert 0 in _accepted(name, [line], fast)
    message = b'"message":{' if name != "codex" else b'"payload":{'
    # the stamp the reader does not read: pi dates a message by its own (milliseconds)
    stamps = [
        line.replace(b"2026-03-02T", b"2026-02-30T"),
        line.replace(b"2026-03-02T", b"2100-03-02T"),
        line.replace(b"2026-03-02T", b"2026-03-02 "),
        line.replace(message, message + b'"created_at":"2026-03-01T00:00:00Z",'),
        line.replace(message, message + b'"time":1,'),
    ]
    if name == "pi":
        found = _accepted(name, stamps, fast)
        assert sorted(found) == list(range(len(stamps)))
        for i, key in found.items():
            _check(name, stamps[i], key)
        stamps = []
    hostile = [
        *(line.replace(b"Done.", text) for text in HOSTILE_TEXTS),
        *stamps,
        line.replace(b'"role":"assistant"', b'"role":"user"'),
        line.replace(b'"role":"assistant"', b'"role":7'),
        line.replace(b'"text":"Done."', b'"text":7'),
        line.replace(b'{"type":"', b'{"type":7,"x":"', 1),
        line.replace(b'"type":"text"', b'"kind":"text"').replace(b'"output_text"', b"null"),
        line[:-1],  # cut short
        line + b"{}",  # two values on a line
        b"\xef\xbb\xbf" + line,
    ]
    if name == "pi":
        hostile += [
            line.replace(b"1772495999000", b"1772495999000.5"),
            line.replace(b"1772495999000", b'"1772495999000"'),
            line.replace(b"1772495999000", b"9999999999999"),
        ]
    else:
        hostile.append(line.replace(b'"timestamp":"2026', b'"timestamp":1772495999000,"x":"2026'))
    found = _accepted(name, [line, *hostile, line], fast)
    taken = [hostile[i - 1] for i in found if 0 < i <= len(hostile)]
    assert sorted(found) == [0, len(hostile) + 1], taken


def test_a_pi_message_without_a_stamp_of_its_own_takes_the_entrys() -> None:
    """pi's messages before they carried a `timestamp` (the sparse bench's lines): dated by
    the entry's, as `trend.message_time` reads them, and only when the message has no time
    key at all."""
    line = RUNTIME_LINES["pi"]
    bare = line.replace(b',"timestamp":1772495999000}}', b"}}")
    assert bare != line
    accepted = [bare, bare.replace(b'"stopReason"', b'"timestamp":null,"stopReason"')]
    found = _accepted("pi", accepted)
    assert found == {0: ("m", "2026-03-02"), 1: ("m", "2026-03-02")}
    for i, key in found.items():
        _check("pi", accepted[i], key)
    refused = [
        bare.replace(b'"stopReason"', b'"created_at":"2026-03-01T00:00:00Z","stopReason"'),
        bare.replace(b'"stopReason"', b'"time":0,"stopReason"'),
        bare.replace(b'"stopReason"', b'"timestamp":"x","stopReason"'),
        bare.replace(b"2026-03-02T", b"2026-02-30T"),
        bare.replace(b'"timestamp":"2026-03-02T23:59:59.500Z",', b""),
    ]
    assert _accepted("pi", [bare, *refused]) == {0: ("m", "2026-03-02")}


def test_a_line_past_the_record_limit_is_left_to_the_parse() -> None:
    line = RUNTIME_LINES["pi"]
    assert _accepted("pi", [line, line + b" " * 50], limit=len(line) + 10) == {
        0: ("m", "2026-03-02")
    }


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.sampled_from(sorted(RUNTIME_LINES)), seeds=st.lists(st.integers(0, 99), max_size=6))
def test_reordered_sessions_report_the_same_on_every_path(
    name: str, seeds: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Lines the pattern cannot read (another key order) are counted by the decoding
    counter: the report is the same on every path, and the counter did count them."""
    line = RUNTIME_LINES[name]
    leak = line.replace(b"Done.", b"<think>plan</think>Done.")
    lines = [line, line, leak, *(_shuffled(line, s) for s in seeds), _shuffled(leak, 5)]
    path = tmp_path_factory.mktemp("order") / f"{name}.jsonl"
    path.write_bytes(b"".join(x + b"\n" for x in lines))
    options = ScanOptions(inputs=InputOptions(format=name), by_day=True)
    counted: list[int] = []
    block = StructSurveyor.block

    def spy(self: StructSurveyor, *args: object, **kwargs: object) -> object:
        found = block(self, *args, **kwargs)  # type: ignore[arg-type]
        counted.append(len(found.starts))
        return found

    with patch.object(StructSurveyor, "block", spy):
        fast, plain, slow, decoded = _reports([str(path)], options, [name])
    assert fast == plain == slow == decoded
    assert sum(counted) == 1 + len(seeds)  # every clean line after the first, in any order
    report = orjson.loads(decoded)
    assert report["summary"]["findings"] == 2
    assert report["summary"]["assistant_messages"] == len(lines)


def test_the_counter_needs_the_reach_that_pays_for_msgspec() -> None:
    structs = registry.get("pi").canonical.structs  # type: ignore[union-attr]
    with patch.object(structsurvey, "FROM_BYTES", 1 << 62):
        assert structsurvey.keyer(structs) is None
    with patch.object(structsurvey, "FROM_BYTES", 0):
        assert structsurvey.keyer(structs) is not None
    assert structsurvey.keyer(None) is None


def test_without_msgspec_the_pattern_counts() -> None:
    """A broken install (msgspec missing): no keying, and the file's counter is the
    pattern's (`survey.Surveyor`), with the same answers."""
    from thinkfix.formats.linestructs import LineStructs

    def gone(msgspec: object) -> object:
        raise AssertionError("not built")

    structs = LineStructs(gone)  # type: ignore[arg-type]
    with patch.dict("sys.modules", {"msgspec": None}):
        assert structs.keyer() is None
    fmt = registry.get("codex")
    with (
        patch.object(fmt.canonical, "structs", structs),
        patch.object(structsurvey, "FROM_BYTES", 0),
        patch.object(survey, "FROM_BYTES", 0),
    ):
        found = structsurvey.surveyor(fmt, ScanOptions().policy, Days(), False)
    assert type(found) is Surveyor
