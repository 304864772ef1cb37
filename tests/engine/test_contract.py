"""The engine needs only the `SessionFormat` contract, reporters only `Reporter.document` (#12).

`FakeFormat` (tests/conftest.py) is not a `FormatBase`: before #12 the engine checked
`isinstance(fmt, FormatBase)`, probed hooks no format defined, and `sparse` required
`FormatBase`, so a format that kept only the contract took branches nothing tested.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson
import pytest

from tests.conftest import FakeFormat, FakeReporter
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import FileStatus, RepairOptions, WriteMode
from thinkfix.engine.scan import sparse
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.transcript import load
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.common import FormatBase
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import DEFAULT_OPTIONS, ApplyOptions, Placement, PlacementKind, Repair
from thinkfix.formats.turns import Role

LINES = [
    b'{"who": "user", "say": "<think>not mine</think>hi"}',
    b'{"who": "bot", "say": "<think>plan the reply</think>Hello!", "model": "m1"}',
    b'{"who": "bot", "say": "A clean answer.", "model": "m1"}',
]


@pytest.fixture
def session(tmp_path: Path, fake_format: FakeFormat) -> Path:
    path = tmp_path / "talk.jsonl"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    return path


@pytest.mark.parametrize("prefilter", [True, False])
def test_scan_needs_only_the_format_contract(session: Path, prefilter: bool) -> None:
    fmt = FakeFormat()
    assert not isinstance(fmt, FormatBase)
    assert not sparse.supports(fmt)  # no line_records promise: every line is parsed
    report = scan(
        [str(session)], ScanOptions(inputs=InputOptions(format=fmt.id), prefilter=prefilter)
    )
    assert report.errors == ()
    assert report.summary.assistant_messages == 2
    assert report.summary.leaking_messages == 1
    (finding,) = report.findings
    assert (finding.line, finding.json_path, finding.model) == (2, "say", "m1")


def test_show_needs_only_the_format_contract(session: Path, fake_format: FakeFormat) -> None:
    transcript = load(str(session), fake_format.id)
    assert [(t.role, [p.text for p in t.parts]) for t in transcript.turns] == [
        (Role.ASSISTANT, ["<think>plan the reply</think>Hello!"]),
        (Role.ASSISTANT, ["A clean answer."]),
    ]
    normalized = load(str(session), fake_format.id, normalized=True)
    assert "plan the reply" not in normalized.turns[0].parts[-1].text


def test_a_reporter_needs_only_document(session: Path) -> None:
    report = scan([str(session)], ScanOptions(inputs=InputOptions(format="fake-lines")))
    assert FakeReporter().render(report) == "files=1 messages=2 leaking=1\n"
    assert FakeReporter().render_bytes(report) == b"files=1 messages=2 leaking=1\n"


class _WritableFake(FakeFormat):
    """The fake format with an `apply` of its own (re-dumps a repaired record), and nothing
    from FormatBase: repair must plan, write and verify through the contract alone."""

    def __init__(self, lines: bool) -> None:
        self._lines = lines

    @property
    def line_records(self) -> bool:
        return self._lines  # True: repair streams it (sparse survey, lazy records)

    assistant_marker = b'"bot"'

    def apply(
        self,
        records: list[Record],
        repairs: Iterable[Repair],
        options: ApplyOptions = DEFAULT_OPTIONS,
    ) -> tuple[list[Record], list[Placement]]:
        out, placements = list(records), []
        for repair in repairs:
            old = out[repair.site.record_index]
            data = dict(old.data)
            data["say"] = repair.visible
            out[old.index] = Record(
                old.index, old.line, orjson.dumps(data), old.eol, data=data, touched=True
            )
            placements.append(Placement(repair.site, PlacementKind.MANIFEST, "the manifest"))
        return out, placements


class _Strict(_WritableFake):
    """Raises on any attribute the `SessionFormat` contract does not name."""

    def __getattribute__(self, name: str) -> object:
        if (
            not name.startswith("__")
            and name not in _CONTRACT
            and name not in ("_lines", "apply", "line_records", "assistant_marker")
        ):
            raise AssertionError(f"the engine called {name}, which is not in the contract")
        return super().__getattribute__(name)


_CONTRACT = frozenset(n for n in dir(SessionFormat) if not n.startswith("__"))


@pytest.mark.parametrize("lines", [True, False], ids=["streamed", "whole"])
def test_repair_needs_only_the_format_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: bool
) -> None:
    fmt = _Strict(lines)
    assert not isinstance(fmt, FormatBase)
    monkeypatch.setitem(registry.FORMATS, FakeFormat.id, fmt)
    path = tmp_path / "in" / "talk.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\n".join(LINES) + b"\n")
    options = RepairOptions(
        mode=WriteMode.OUT,
        out_dir=str(tmp_path / "out"),
        run_dir=str(tmp_path / "run"),
        scan=ScanOptions(inputs=InputOptions(format=FakeFormat.id)),
    )
    result = repair_paths([str(path)], options)
    assert result.all_errors == ()
    (done,) = result.files
    assert done.status is FileStatus.REPAIRED and done.records_changed == 1
    written = (tmp_path / "out" / "talk.jsonl").read_bytes().split(b"\n")
    assert written[0] == LINES[0] and written[2] == LINES[2]  # untouched: byte-identical
    assert orjson.loads(written[1])["say"] == "Hello!"
