"""`.bz2` and `.xz` sessions are read as `.gz` and `.zst` ones are (edges11). Before, a
`.jsonl.bz2` or `.jsonl.xz` was not walked in a folder and, named, was `unknown_format`.
Now they are recognised by their magic bytes, read in every command, written back in their
own compression by repair, and a damaged one is an error for its file, never clean: cut
short, with trailing garbage (which the stdlib's `BZ2File` and `LZMAFile` pass over without
a word), a flipped byte, a second stream cut short, through stdin as through a path."""

from __future__ import annotations

import bz2
import gzip
import io
import itertools
import json
import lzma
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from tests.commands import invoke
from tests.engine.repair_helpers import findings, run
from tests.formats.support import FIXTURES, fixture_table, is_store
from thinkfix.cli import main
from thinkfix.engine.ledger import restore
from thinkfix.engine.repair.model import FileStatus, WriteMode
from thinkfix.engine.report import LeakFinding
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.transcript import TranscriptError, load
from thinkfix.io import compression as c

#: Each new compression: its suffix, and the stdlib's compressor of one stream.
KINDS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "bzip2": (".bz2", bz2.compress),
    "xz": (".xz", lambda data: lzma.compress(data, lzma.FORMAT_XZ)),
}
#: All four, for the property: a compressed part lost its name, and with it the file beside
#: it that a reader looks up (a zstd OpenCode part read as one without its message's file).
EVERY_KIND: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "zstd": zstandard.ZstdCompressor().compress,
    **{kind: compress for kind, (_, compress) in KINDS.items()},
}
SUFFIX = {"gzip": ".gz", "zstd": ".zst", **{kind: suffix for kind, (suffix, _) in KINDS.items()}}
#: Every fixture session held in one file (a store is a database, never compressed).
SESSIONS = sorted(p for p in fixture_table() if not is_store(FIXTURES / p))
CLAUDE = FIXTURES / "claude-code" / "2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl"
CLAUDE_LEAKS = 4


def _found(paths: list[str]) -> tuple[list[LeakFinding], int]:
    report = scan(paths, ScanOptions(), jobs=1)
    assert not report.errors, report.errors
    assert not report.skipped, report.skipped
    return sorted(f._replace(path="") for f in report.findings), report.summary.assistant_messages


def _streams(data: bytes, kind: str, cuts: list[int]) -> bytes:
    """`data` compressed as one stream per piece between the `cuts`, concatenated."""
    compress = EVERY_KIND[kind]
    bounds = [0, *sorted({min(cut, len(data)) for cut in cuts}), len(data)]
    return b"".join(compress(data[a:b]) for a, b in itertools.pairwise(bounds))


#: A part whose role is read from its message's file beside it.
PART = "opencode/storage/part/msg_95e0f3d71002bP4sW8nY1eLmTg/prt_95e0f3d71005Pp3qQ4rR5sS6tT.json"


#: A pretty-printed document (Copilot CLI's legacy file): a first stream or member holding its
#: `{` alone made the scan's peek end before the first newline, and the file was read by line
#: (78 "not JSON" errors): found by this property, kept as examples.
DOCUMENT = (
    "copilot-cli/history-session-state/"
    "session_a9c8b7d6-e5f4-4a3b-9c2d-1e0f9a8b7c6d_1759957816398.json"
)


@example(session=PART, kind="zstd", cuts=[])
@example(session=PART, kind="xz", cuts=[])
@example(session=DOCUMENT, kind="bzip2", cuts=[1])
@example(session=DOCUMENT, kind="gzip", cuts=[1])
@example(session=DOCUMENT, kind="xz", cuts=[1])
@given(
    session=st.sampled_from(SESSIONS),
    kind=st.sampled_from(sorted(EVERY_KIND)),
    cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=3),
)
def test_a_compressed_copy_of_any_fixture_session_gives_the_plain_files_findings(
    session: str, kind: str, cuts: list[int]
) -> None:
    """The session's own folder is copied (a reader may look beside it: OpenCode's parts),
    the session replaced by its compressed copy (as one stream or several concatenated)."""
    top = session.split("/")[0]
    with tempfile.TemporaryDirectory() as work:
        tree = Path(work) / top
        shutil.copytree(FIXTURES / top, tree)
        plain = Path(work) / session
        packed = plain.with_name(plain.name + SUFFIX[kind])
        packed.write_bytes(_streams(plain.read_bytes(), kind, cuts))
        plain.unlink()
        assert c.sniff(packed.read_bytes()[:4]) is c.Compression(kind)
        assert _found([str(packed)]) == _found([str(FIXTURES / session)])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_compressed_session_in_a_folder_is_walked_and_read(tmp_path: Path, kind: str) -> None:
    suffix, compress = KINDS[kind]
    (tmp_path / ("s.jsonl" + suffix)).write_bytes(compress(CLAUDE.read_bytes()))
    result = invoke("scan", "--isolated", "--output-format", "json", str(tmp_path))
    report = json.loads(result.stdout)
    assert result.exit_code == 1, report
    assert len(report["findings"]) == CLAUDE_LEAKS
    assert not report["skipped"] and not report["errors"]


def _damaged(kind: str) -> dict[str, bytes]:
    """One session compressed in `kind`, damaged every way review10 built for `.gz`."""
    compress = KINDS[kind][1]
    data = CLAUDE.read_bytes()
    whole = compress(data)
    middle = len(whole) // 2
    return {
        "cut-10": whole[:-10],
        "cut-half": whole[:middle],
        "trailing-garbage": whole + b"junk\n",
        "trailing-text-line": whole + data[: data.index(b"\n") + 1],
        "second-stream-cut": whole + compress(data)[:middle],
        "flipped-byte": whole[:middle] + bytes([whole[middle] ^ 0x55]) + whole[middle + 1 :],
        "not-jsonl": compress(b"hello, this is no session\n" * 50),
    }


DAMAGE = sorted(_damaged("xz"))


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_compressed_session_is_an_error_never_clean(
    tmp_path: Path, kind: str, damage: str
) -> None:
    """Named on the command line, in a folder beside a clean session, and through stdin.
    A whole stream that holds no session is in a folder what any such file is there: a
    listed skip (`--unknown-format auto`), named an error."""
    data = _damaged(kind)[damage]
    folder = tmp_path / "sessions"
    folder.mkdir()
    bad = folder / ("s.jsonl" + KINDS[kind][0])
    bad.write_bytes(data)
    (folder / "clean.jsonl").write_bytes(CLAUDE.read_bytes().split(b"\n", 1)[0] + b"\n")
    for args, stdin in (([str(bad)], None), ([str(folder)], None), (["-"], data)):
        result = CliRunner().invoke(
            main,
            ["scan", "--isolated", "--output-format", "json", *args],
            input=stdin,
            catch_exceptions=False,
        )
        report = json.loads(result.stdout)
        assert "internal error" not in result.stderr
        if damage == "not-jsonl" and args == [str(folder)]:
            assert [s["path"] for s in report["skipped"]] == [str(bad)], report
            continue
        assert result.exit_code == 2, (args, report["summary"])
        assert report["errors"], (args, report)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_whole_compressed_session_reads_through_stdin(kind: str) -> None:
    data = KINDS[kind][1](CLAUDE.read_bytes())
    result = CliRunner().invoke(
        main, ["scan", "--isolated", "--output-format", "json", "-"], input=data
    )
    assert result.exit_code == 1, result.output
    assert len(json.loads(result.stdout)["findings"]) == CLAUDE_LEAKS


def test_xz_stream_padding_between_and_after_streams_is_read() -> None:
    """The xz format allows null bytes in fours between and after streams (xz writes them
    with --block-list; `xz -d` reads them); a padding of another length is damage."""
    data = CLAUDE.read_bytes()
    half = len(data) // 2
    one, two = lzma.compress(data[:half]), lzma.compress(data[half:])
    with c.wrap_reader(io.BytesIO(one + b"\0" * 8 + two + b"\0" * 4)) as fp:
        assert fp.read() == data
    with pytest.raises(OSError), c.wrap_reader(io.BytesIO(one + b"\0" * 3)) as fp:
        fp.read()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_repair_of_a_compressed_session_stays_compressed_and_undoes(
    tmp_path: Path, kind: str
) -> None:
    """As a `.gz` or `.zst` session is repaired (tests/engine/test_repair.py): written back
    in its own compression, its content the plain file's repair, and undone to its original
    bytes."""
    suffix, compress = KINDS[kind]
    packed = compress(CLAUDE.read_bytes())
    plain = tmp_path / "plain" / CLAUDE.name
    plain.parent.mkdir()
    plain.write_bytes(CLAUDE.read_bytes())
    run([plain], WriteMode.IN_PLACE, tmp_path / "plain", backup=False)
    work = tmp_path / (CLAUDE.name + suffix)
    work.write_bytes(packed)
    result = run([work], WriteMode.IN_PLACE, tmp_path, backup=False)
    assert result.files[0].status is FileStatus.REPAIRED
    assert c.sniff(work.read_bytes()[:4]) is c.Compression(kind)
    with c.open_read(work) as fp:
        assert fp.read() == plain.read_bytes() != CLAUDE.read_bytes()
    assert findings([work]) == findings([plain]) < CLAUDE_LEAKS
    assert result.manifest_path is not None
    restore.undo(result.manifest_path)
    assert work.read_bytes() == packed


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_diff_and_show_read_a_compressed_session(tmp_path: Path, kind: str) -> None:
    suffix, compress = KINDS[kind]
    work = tmp_path / (CLAUDE.name + suffix)
    work.write_bytes(compress(CLAUDE.read_bytes()))
    result = invoke("diff", "--isolated", "--output-format", "json", str(work))
    assert result.exit_code == 1, result.output
    assert load(str(work)).turns == load(str(CLAUDE)).turns


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("damage", ["cut-half", "trailing-garbage", "flipped-byte"])
def test_show_of_a_damaged_compressed_session_is_its_error(
    tmp_path: Path, kind: str, damage: str
) -> None:
    work = tmp_path / ("s.jsonl" + KINDS[kind][0])
    work.write_bytes(_damaged(kind)[damage])
    with pytest.raises(TranscriptError):
        load(str(work))


def test_the_reference_compressions_read_the_same_session() -> None:
    """The new kinds beside the old: one session, four wrappings, one content."""
    data = CLAUDE.read_bytes()
    for packed in (
        gzip.compress(data),
        zstandard.ZstdCompressor().compress(data),
        *(compress(data) for _, compress in KINDS.values()),
    ):
        with c.wrap_reader(io.BytesIO(packed)) as fp:
            assert fp.read() == data


def test_an_xz_stream_that_asks_more_memory_than_the_limit_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An xz header names its dictionary's size, which liblzma allocates to decode: a
    hostile one may ask gigabytes. Shown with the limit lowered under what preset 6 (8 MiB)
    needs."""
    monkeypatch.setattr(c, "XZ_MEMLIMIT", 1 << 20)
    with (
        pytest.raises(c.StreamError, match="damaged xz data"),
        c.wrap_reader(io.BytesIO(lzma.compress(CLAUDE.read_bytes(), preset=6))) as fp,
    ):
        fp.read()


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("tail", [b"junk\n", b"j", b"junk" * 4])
def test_bytes_after_the_last_stream_are_said_to_be_garbage(kind: str, tail: bytes) -> None:
    """A few bytes after a whole stream that no stream starts with are trailing garbage, said
    so: they read as `ended inside its xz stream (cut short?)`, where the decoder waited for
    a stream header that could never come (found using the program by hand)."""
    whole = KINDS[kind][1](CLAUDE.read_bytes())
    with c.wrap_reader(io.BytesIO(whole + tail)) as fp, pytest.raises(OSError) as raised:
        fp.read()
    assert "start no stream (trailing garbage?)" in str(raised.value)
    with c.wrap_reader(io.BytesIO(whole + whole[:3])) as fp, pytest.raises(EOFError) as cut:
        fp.read()  # the start of a second stream, cut short: said so
    assert "cut short" in str(cut.value)
