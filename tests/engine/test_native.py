"""The native passes (`engine.scan.native`, hyperscan) give the pure passes' answers (#26 item 1).

Each native pass against the pure one it stands for, on the same bytes: the wanted lines of a
block (`SparseReader._lines_with`), the pieces a token or a possible delimiter lies in (the
block counter's checks, for several policies), the block survey's whole answer; and the JSON
report byte for byte with the native passes and with the pure ones, on every fixture and on
generated sessions of Claude Code, pi and Codex (decoys, split markers, escapes, odd and
near-midnight stamps, every delimiter family, tokens in free parts, invalid UTF-8, lines over
the record limit). Skipped where hyperscan is not installed (the pure path is then the only
one, and the rest of the suite covers it).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.test_bulk import CANONICAL, NAMES, session_files, sessions
from tests.engine.test_prefilter import PIECES, POLICIES
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.scan import native, survey
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import SEPARATOR, delimiter_hits, delimiter_sources
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.sparse import SparseReader
from thinkfix.engine.scan.survey import TAIL_TOKENS, Days, Surveyor
from thinkfix.formats import registry
from thinkfix.io import jsoncheck
from thinkfix.io.multimatch import literal
from thinkfix.reporters.json import JsonReporter

pytest.importorskip("hyperscan")

_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# Formats whose assistant markers differ: quoted role word, a key and value, a bare word.
MARKER_FORMATS = ("claude-code", "crush", "copilot-cli", "copilot-chat")


@contextmanager
def native_path(on: bool) -> Iterator[None]:
    """The native passes from the first block (`on`), or the pure passes only; the block
    counter on from the first byte either way."""
    with (
        patch.object(native, "USE", on),
        patch.object(native, "WARM_UP", 0),
        patch.object(survey, "FROM_BYTES", 0),
    ):
        yield


# --- the wanted lines ---------------------------------------------------------------------------

# What a line may hold around the needles: the words, `"model"` as a key (whitespace, even a
# newline, before its colon) and as a value, and the end of the block right after a word.
FRAGMENTS = st.sampled_from(
    [
        '"assistant"',
        '"role":"assistant"',
        "assistant",
        '"response"',
        '"model"',
        '"model":',
        '"model" :',
        '"model"\n:',
        '"model"\t\r\n "x"',
        '"model"}',
        '"mode"',
        "\n",
        "\n",
        " ",
        "x",
        "{",
        "}",
        '"',
        ":",
        "é",
    ]
)


@pytest.mark.parametrize("name", MARKER_FORMATS)
@settings(max_examples=150, deadline=None)
@given(parts=st.lists(FRAGMENTS, max_size=30), first=st.booleans())
def test_the_native_wanted_lines_are_the_regex_ones(
    name: str, parts: list[str], first: bool
) -> None:
    buf = "".join(parts).encode() + b"\n"
    lo = buf.index(b"\n") + 1 if first else 0  # after the first line, as the reader does
    hi = len(buf)
    reader = SparseReader(registry.get(name), io.BytesIO(b""))
    lines = native.needle_lines(reader.wanted)
    assert lines is not None
    assert list(lines(buf, lo, hi).items()) == list(reader._lines_with(buf, lo, hi).items())


_HOOKED = [n for n in registry.names() if registry.get(n).context_markers]
_MARKER_PARTS = st.sampled_from(
    sorted({m.decode() for n in _HOOKED for m in registry.get(n).context_markers})
    + ["x", "\n", '"', "thinkin", "turn_", "reasoning"]
)


@pytest.mark.parametrize("name", [n for n in _HOOKED if n in MARKER_FORMATS])
@settings(max_examples=150, deadline=None)
@given(parts=st.lists(_MARKER_PARTS, max_size=30), cut=st.integers(0, 40))
def test_the_pass_finds_where_each_context_marker_first_occurs(
    name: str, parts: list[str], cut: int
) -> None:
    """The wanted-lines pass also gives each context marker's first offset in buf[lo:hi],
    as `find` does (-1 where absent; the reader found each with `find` before)."""
    buf = "".join(parts).encode() + b"\n"
    lo = min(cut, len(buf) - 1)
    markers = registry.get(name).context_markers
    lines = native.needle_lines(registry.get(name).assistant_marker, markers)
    assert lines is not None
    firsts: dict[bytes, int] = {}
    lines(buf, lo, len(buf), firsts)
    assert firsts.pop(native.EDGE) >= -1  # the JSON check's (below)
    assert firsts == {m: buf.find(m, lo) for m in markers}


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.sampled_from(["{}", "{", "}", "\n", "x", '"a"', ":", "}\n{"]), max_size=20),
    cut=st.integers(0, 40),
)
def test_the_pass_finds_a_newline_that_does_not_close_an_object_and_open_the_next(
    parts: list[str], cut: int
) -> None:
    """The same pass says whether a block may hold a line that is no object (`native.EDGE`):
    as `jsoncheck.EDGE` says, for the block whose first line opens an object and whose last
    closes one (the JSON check asks no more of it)."""
    buf = ("{" + "".join(parts) + "}").encode() + b"\n"
    lo = min(cut, len(buf) - 1)
    lines = native.needle_lines(registry.get("claude-code").assistant_marker)
    assert lines is not None
    firsts: dict[bytes, int] = {}
    lines(buf, lo, len(buf), firsts)
    if buf[lo] == 123:
        pure = jsoncheck.EDGE.search(buf, lo, len(buf) - 1) is not None
        assert (firsts[native.EDGE] >= 0) == pure


# --- the block counter's checks -----------------------------------------------------------------

PIECE_TEXTS = st.lists(st.sampled_from([*PIECES, *(t.decode() for t in TAIL_TOKENS)]), max_size=8)


def _encoded(parts: list[str], escaped: bool) -> bytes:
    """Parts as JSON string bytes, sometimes with every `<` and `/` escaped."""
    raw = "".join(parts).encode().replace(b"\\", b"\\\\").replace(b"\n", b"\\n")
    return raw.replace(b"<", b"\\u003c").replace(b"/", b"\\/") if escaped else raw


@pytest.mark.parametrize("policy", POLICIES, ids=range(len(POLICIES)))
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.tuples(PIECE_TEXTS, st.booleans(), st.booleans()), max_size=10))
def test_the_native_checks_find_the_pieces_the_pure_ones_find(
    policy: object, texts: list[tuple[list[str], bool, bool]]
) -> None:
    pieces = [
        _encoded(p, esc) if not bad else _encoded(p, esc) + b"\xff\xfe" for p, esc, bad in texts
    ]
    starts, at = [], 0
    for piece in pieces:
        starts.append(at)
        at += len(piece) + 1
    joined = SEPARATOR.join(pieces)
    pure = survey._tokens(joined, starts) | delimiter_hits(policy)(joined, starts)  # type: ignore[arg-type]
    words = tuple(literal(t) for t in TAIL_TOKENS)
    hits = native.piece_hits(words + delimiter_sources(policy), SEPARATOR)  # type: ignore[arg-type]
    assert hits is not None
    assert hits(joined, starts) == pure


# --- the whole block ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), limit=st.sampled_from([0, 0, 400]))
def test_the_native_survey_is_the_pure_one(name: str, data: st.DataObject, limit: int) -> None:
    """Both wanted lines and the block's answer (accepted lines, keys, lines left) are the
    pure path's, on lines in each runtime's shape with everything the counter must refuse."""
    lines = data.draw(st.lists(CANONICAL[name], min_size=1, max_size=8))
    buf = b'{"first":1}\n' + b"".join(line + b"\n" for line in lines)
    fmt = registry.get(name)
    reader = SparseReader(fmt, io.BytesIO(b""))
    lo, hi = buf.index(b"\n") + 1, len(buf)
    wanted = reader._lines_with(buf, lo, hi)
    lines_with = native.needle_lines(reader.wanted)
    assert lines_with is not None and lines_with(buf, lo, hi) == wanted
    policy = ScanOptions().policy
    canon = fmt.canonical
    assert canon is not None
    surveyor = Surveyor(canon, delimiter_hits(policy), Days(), limit, delimiter_sources(policy))
    assert surveyor.block(buf, wanted, fast=True) == surveyor.block(buf, wanted)
    assert surveyor._checks() is not None  # the native checks compiled (not the pure ones)


# --- the report ---------------------------------------------------------------------------------


def _json(paths: list[str], options: ScanOptions, on: bool) -> bytes:
    with native_path(on):
        return JsonReporter().render_bytes(scan(paths, options, jobs=1))


def test_every_fixture_reports_the_same_on_both_paths() -> None:
    for by_day in (True, False):
        options = ScanOptions(by_day=by_day, allow_no_sessions=True)
        paths = [str(_FIXTURES)]
        assert _json(paths, options, True) == _json(paths, options, False)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=sessions(), by_day=st.booleans(), limit=st.sampled_from([0, 0, 0, 700]))
def test_generated_sessions_report_the_same_on_both_paths(
    data: dict[str, list[bytes]], by_day: bool, limit: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("native")
    for _, path, options in session_files(folder, data, by_day=by_day, max_record_size=limit):
        assert _json([str(path)], options, True) == _json([str(path)], options, False)


def test_the_pure_switch_and_the_warm_up_keep_hyperscan_out() -> None:
    """`THINKFIX_PURE` (as `USE`) and a process that has read less than `WARM_UP` run the
    pure passes; a warm one the native passes."""
    with patch.object(native, "USE", False), patch.object(native, "WARM_UP", 0):
        assert not native.warm(1)
    with (
        patch.object(native, "USE", True),
        patch.object(native, "_seen", 0),
        patch.object(native, "_expected", 0),
        patch.object(native, "WARM_UP", 10),
    ):
        assert not native.warm(9)
        assert native.warm(1)


def test_a_run_that_will_read_the_warm_up_starts_native_at_its_first_byte(tmp_path: Path) -> None:
    """A one-process scan knows its inputs' size before it reads a byte: from `WARM_UP` on,
    the native passes run from the first block (the CLI's `--jobs 1` scan of the bench's pi
    third read 16 MB through the pure passes first), and below it they wait as before."""
    line = (_FIXTURES / "codex").glob("*.jsonl").__next__().read_bytes()
    (tmp_path / "a.jsonl").write_bytes(line)
    size = len(line)
    options = ScanOptions(allow_no_sessions=True)
    for warm_up, native_first in ((size, True), (size + 1, False)):
        with (
            patch.object(native, "USE", True),
            patch.object(native, "_seen", 0),
            patch.object(native, "_expected", 0),
            patch.object(native, "WARM_UP", warm_up),
            patch.object(native, "needle_lines", wraps=native.needle_lines) as built,
        ):
            scan([str(tmp_path)], options, jobs=1)
            assert built.called is native_first


def test_a_walk_compiles_no_hyperscan_database_for_its_ignore_rules(tmp_path: Path) -> None:
    """pathspec matches with hyperscan when it is installed (the `fast` extra), and compiling
    its database cost a CLI scan of a folder ~0.2 s of CPU (fixtures/codex: 0.53 s against
    0.32 s), more than matching a walk's few paths saves: the ignore rules, the default
    include and `--exclude` use pathspec's pure backend."""
    from pathspec._backends.hyperscan import pathspec as hyperscan_backend

    folder = tmp_path / "sessions"
    (folder / "skip").mkdir(parents=True)
    (folder / ".thinkfixignore").write_text("skip/\n*.log\n!keep.log\n")
    line = (_FIXTURES / "codex").glob("*.jsonl").__next__().read_bytes()
    (folder / "a.jsonl").write_bytes(line)
    (folder / "skip" / "b.jsonl").write_bytes(line)
    options = ScanOptions(inputs=InputOptions(exclude=("*.tmp",)), allow_no_sessions=True)
    refuse = AssertionError("a hyperscan database compiled for ignore rules")
    with patch.object(hyperscan_backend.HyperscanPsBackend, "__init__", side_effect=refuse):
        report = scan([str(folder)], options, jobs=1)
    assert report.summary.files == 1  # skip/ left out by the ignore file
