"""The engine needs only the `SessionFormat` contract, reporters only `Reporter.document` (#12).

`FakeFormat` (tests/conftest.py) is not a `FormatBase`: before #12 the engine checked
`isinstance(fmt, FormatBase)`, probed hooks no format defined, and `sparse` required
`FormatBase`, so a format that kept only the contract took branches nothing tested.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FakeFormat, FakeReporter
from thinkfix.engine import sparse
from thinkfix.engine.inputs import InputOptions
from thinkfix.engine.scan import ScanOptions, scan
from thinkfix.engine.transcript import load
from thinkfix.formats.common import FormatBase
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
    report = scan([str(session)], ScanOptions(inputs=InputOptions(format=fmt.id),
                                              prefilter=prefilter))
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
