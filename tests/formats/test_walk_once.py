"""A record's messages are walked once per format (`FormatBase.checked_messages`): the scan
asks for them to count and again for the sites, and the second answer must be the first's."""

from __future__ import annotations

from collections.abc import Iterator

from tests.formats.support import fixture, read
from thinkfix.formats.base import Message
from thinkfix.formats.records import Record
from thinkfix.formats.registry import get

FMT = get("claude-code")
DATA = fixture("7f3c2a91").read_bytes()


def _assistant(records: list[Record]) -> list[Record]:
    return [r for r in records if FMT.checked_messages(Record(r.index, r.line, r.raw))]


def test_a_second_walk_is_the_first() -> None:
    for record in _assistant(read(FMT, DATA)):
        first = FMT.checked_messages(record, texts=True)
        assert FMT.checked_messages(record, texts=True) is first
        assert FMT.checked_messages(record) is first  # texts already computed serve a count


def test_sites_after_a_count_are_a_fresh_records() -> None:
    fresh = list(read(FMT, DATA))
    counted = list(read(FMT, DATA))
    for record in counted:
        FMT.checked_messages(record)  # without texts: the sites' walk must compute them
    assert [list(FMT.sites(r)) for r in counted] == [list(FMT.sites(r)) for r in fresh]


class _Other(type(FMT)):  # type: ignore[misc]
    """Claude Code's reader that finds one message of its own, with no text: another format
    reading the same records."""

    def messages(self, record: Record) -> Iterator[Message]:
        return iter([Message((), -1, [])])


def test_the_walk_belongs_to_its_format() -> None:
    other = _Other()
    for record in _assistant(read(FMT, DATA)):
        mine = FMT.checked_messages(record, texts=True)
        assert [m.index for m in other.checked_messages(record, texts=True)] == [-1]
        again = FMT.checked_messages(record, texts=True)
        assert [(m.index, m.path) for m in again] == [(m.index, m.path) for m in mine]
        assert [m.index for m in again] != [-1]
