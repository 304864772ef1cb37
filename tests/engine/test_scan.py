"""The scan engine: counts, findings, errors, determinism and opt-outs."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
from pathlib import Path

import orjson
import pytest

from tests.engine.conftest import FIXTURES, claude_line, fixtures_leaking_total
from tests.formats.support import fixture_totals
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.inputs.walk import walk
from thinkfix.engine.scan.options import DEFAULT_KINDS, ScanOptions, select_kinds
from thinkfix.engine.scan.report import build_report
from thinkfix.engine.scan.runner import scan
from thinkfix.engine.scan.task import scan_file
from thinkfix.reporters.sarif import to_sarif


def test_scan_fixtures_match_readme() -> None:
    report = scan([str(FIXTURES)], jobs=1)
    assert report.summary.leaking_messages == fixtures_leaking_total()
    assert report.summary.assistant_messages == fixture_totals().messages
    assert report.summary.files == fixture_totals().files
    assert not report.errors
    assert report.summary.findings == len(report.findings)
    assert report.summary.leaked_chars == sum(f.leaked_chars for f in report.findings)
    assert {f.format for f in report.findings} == set(report.summary.by_format)
    assert all(c.format for c in report.summary.by_file.values())


def test_scan_jobs_and_prefilter_do_not_change_the_report() -> None:
    one = scan([str(FIXTURES)], jobs=1)
    assert scan([str(FIXTURES)], jobs=2) == one
    assert scan([str(FIXTURES)], ScanOptions(prefilter=False), jobs=1) == one


def test_scan_report_is_independent_of_processing_order() -> None:
    items = list(walk([str(FIXTURES)]))
    results = [scan_file(i) for i in items]
    shuffled = results[:]
    random.Random(4).shuffle(shuffled)
    assert build_report(shuffled) == build_report(results)


def test_scan_clean_session(clean_session: Path) -> None:
    report = scan([str(clean_session)])
    assert report.summary.assistant_messages == 1
    assert report.summary.records == 2
    assert not report.findings and not report.errors
    assert report.exit_code() == 0


def test_scan_finding_fields(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        claude_line("hi", uuid="u1", role="user")
        + claude_line("<think>plan</think>Answer", uuid="a1", model="glm-4.6")
    )
    (finding,) = scan([str(path)]).findings
    assert (finding.path, finding.line, finding.json_path) == (
        str(path),
        2,
        "message.content[0].text",
    )
    assert (finding.format, finding.kind, finding.tag) == ("claude-code", "block", "<think>")
    assert (finding.session_id, finding.message_id, finding.model) == (
        "sess-1",
        "msg_a1",
        "glm-4.6",
    )
    assert finding.leaked_chars == len("<think>plan</think>") == finding.end - finding.start
    assert finding.snippet == "<think>plan</think>"
    assert len(finding.fingerprint) == 32


def test_scan_fingerprint_ignores_line_numbers(tmp_path: Path) -> None:
    leak = claude_line("<think>plan</think>Answer", uuid="a1")
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_bytes(leak)
    two.write_bytes(claude_line("hello", uuid="u0", role="user") * 3 + leak)
    (a,), (b,) = scan([str(one)]).findings, scan([str(two)]).findings
    assert a.line != b.line and a.fingerprint == b.fingerprint


def test_scan_unreadable_file_is_an_error_and_others_still_report(tmp_path: Path) -> None:
    for f in FIXTURES.glob("claude-code/*.jsonl"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "broken.jsonl.gz").write_bytes(gzip.compress(b'{"a": 1}\n' * 100)[:30])
    report = scan([str(tmp_path)])
    assert [e.kind for e in report.errors] == ["unreadable"]
    assert report.summary.leaking_messages == 6
    assert report.exit_code() == 2


def test_scan_bad_lines_are_reported_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        claude_line("hi", uuid="u1", role="user")
        + b'{"type": "user", "uuid": "x", "message": \n'
        + b'{"type":"assistant","uuid":"a0","message":{"content":\xff}}\n'
        + claude_line("fine", uuid="a1")
        + b'{"type":"assistant","uuid":"a2","sessionId":"s"'
    )  # cut off, no newline
    report = scan([str(path)])
    # Lines that could hold assistant text are parsed, and so is an unterminated last line;
    # every other line is checked to be one JSON object, and one that is not is reported
    # (line 2: it was not, before the eighteenth session, though a parse of every line says so)
    assert [(e.line, e.kind) for e in report.errors] == [
        (2, "bad_line"),
        (3, "bad_line"),
        (5, "bad_line"),
    ]
    assert report.summary.assistant_messages == 1
    assert report.summary.records == 5
    assert report.exit_code() == 2
    # --parse-all (no prefilter) parses and so validates every line: the same errors.
    strict = scan([str(path)], ScanOptions(prefilter=False))
    assert [e.line for e in strict.errors] == [2, 3, 5]


def test_scan_notices_are_excluded_unless_selected(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(claude_line("Answer first.\n<think>never closed", uuid="a1"))
    assert not scan([str(path)]).findings
    selected = scan([str(path)], ScanOptions(kinds=select_kinds(["all"])))
    assert [f.kind for f in selected.findings] == ["unclosed_inline"]


def test_scan_select_and_ignore() -> None:
    assert select_kinds() == DEFAULT_KINDS
    assert "unclosed_inline" not in DEFAULT_KINDS
    assert select_kinds(["block", "unclosed"]) == {"block", "unclosed"}
    assert select_kinds(ignore=["block"]) == DEFAULT_KINDS - {"block"}
    with pytest.raises(ValueError, match="unknown leak kind"):
        select_kinds(["blocks"])
    report = scan([str(FIXTURES)], ScanOptions(kinds=select_kinds(ignore=["block"])))
    assert "block" not in report.summary.by_kind and report.findings


def test_scan_disabled_models_and_paths(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    leak = claude_line("<think>x</think>y", uuid="a1", model="MiniMax-M2")
    (tmp_path / "data" / "a.jsonl").write_bytes(leak)
    (tmp_path / "b.jsonl").write_bytes(leak + claude_line("<think>x</think>y", uuid="a2"))
    report = scan(
        [str(tmp_path)],
        ScanOptions(
            disabled_models=("minimax-*",), disabled_paths=("data/**",), disabled_base=str(tmp_path)
        ),
    )
    assert [s.reason for s in report.skipped] == ["disabled by configuration"]
    assert report.summary.assistant_messages == 2
    assert [f.model for f in report.findings] == ["qwen3-32b"]
    assert report.summary.by_model["MiniMax-M2"].leaking_messages == 0


def test_scan_walk_skips_unknown_json_but_named_files_fail(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    (tmp_path / "s.jsonl").write_bytes(claude_line("hi", uuid="a1"))
    report = scan([str(tmp_path)])
    assert report.skipped and not report.errors and report.exit_code() == 0
    (tmp_path / "s.jsonl").unlink()
    named = scan([str(tmp_path / "package.json")])
    assert [e.kind for e in named.errors] == ["unknown_format"]
    forced = scan([str(tmp_path)], ScanOptions(inputs=InputOptions(format="claude-code")))
    assert forced.summary.files == 1 and forced.summary.assistant_messages == 0


def test_scan_that_read_no_session_file_is_an_error_not_clean(tmp_path: Path) -> None:
    """#10: a folder of other JSON used to exit 0 with a note on stderr. Before this change
    this test's first report had no errors and exit 0 (the old expectation of the test above,
    which now keeps a session beside the unknown file)."""
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    report = scan([str(tmp_path)])
    (error,) = report.errors
    assert (error.kind, error.path, report.exit_code()) == ("no_sessions", str(tmp_path), 2)
    assert "2 files found" in error.message and "package.json" in error.message
    assert "--format NAME" in error.message and "--exclude" in error.message
    assert report.exit_code(exit_zero=True) == 2  # --exit-zero never hides it
    allowed = scan([str(tmp_path)], ScanOptions(allow_no_sessions=True))
    assert not allowed.errors and allowed.exit_code() == 0 and len(allowed.skipped) == 2
    (tmp_path / "nothing").mkdir()
    (error,) = scan([str(tmp_path / "nothing")]).errors
    assert error.kind == "no_sessions" and "no file is named like one" in error.message
    assert "--format" not in error.message


def test_scan_of_disabled_sessions_only_is_what_the_user_asked(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(claude_line("<think>x</think>y", uuid="a1"))
    report = scan(
        [str(tmp_path)], ScanOptions(disabled_paths=("*.jsonl",), disabled_base=str(tmp_path))
    )
    assert [s.reason for s in report.skipped] == ["disabled by configuration"]
    assert not report.errors and report.exit_code() == 0


def test_thinkfix_own_files_are_known_never_unknown_sessions(tmp_path: Path) -> None:
    """#14 item 11: a repaired or scanned folder holds our sidecars, baseline and reports."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(claude_line("<think>x</think>y", uuid="a1"))
    (tmp_path / "s.jsonl.thinkfix.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "tool": "thinkfix",
                "source": "s.jsonl",
                "format": "claw-code",
                "reasoning": [],
            },
            indent=2,
        )
        + "\n"
    )
    (tmp_path / "thinkfix-baseline.json").write_text(
        json.dumps(
            {"findings": {}, "schema_version": 1, "tool": "thinkfix"}, indent=2, sort_keys=True
        )
    )
    first = scan([str(tmp_path)])
    (tmp_path / "report.json").write_bytes(orjson.dumps(first.to_dict()))
    (tmp_path / "report.sarif.json").write_bytes(orjson.dumps(to_sarif(first)))
    named = scan([str(tmp_path / "s.jsonl.thinkfix.json"), str(session)])
    report = scan([str(tmp_path)])
    assert {os.path.basename(s.path): s.reason for s in report.skipped} == {
        "s.jsonl.thinkfix.json": "thinkfix repair sidecar",
        "thinkfix-baseline.json": "thinkfix baseline",
        "report.json": "thinkfix report",
        "report.sarif.json": "thinkfix report",
    }
    assert not report.errors and not named.errors and named.skipped


def test_scan_models_sum_to_totals() -> None:
    s = scan([str(FIXTURES)]).summary
    for breakdown in (s.by_model, s.by_format, s.by_file):
        assert sum(c.assistant_messages for c in breakdown.values()) == s.assistant_messages
        assert sum(c.leaking_messages for c in breakdown.values()) == s.leaking_messages
        assert sum(c.findings for c in breakdown.values()) == s.findings


def test_scan_options_are_frozen_values() -> None:
    options = ScanOptions()
    assert options._replace(prefilter=False) != options


def test_scan_compressed_and_crlf_files_read_like_plain_ones(tmp_path: Path) -> None:
    import zstandard

    source = next((FIXTURES / "claude-code").glob("2e8b*.jsonl"))
    data = source.read_bytes()
    (tmp_path / "a.jsonl").write_bytes(data)
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(data))
    (tmp_path / "c.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    (tmp_path / "d.jsonl").write_bytes(data.replace(b"\n", b"\r\n"))
    report = scan([str(tmp_path)])
    per_file = {
        Path(p).name: (c.assistant_messages, c.leaking_messages)
        for p, c in report.summary.by_file.items()
    }
    assert set(per_file.values()) == {(4, 4)} and len(per_file) == 4
    lines = {
        Path(f.path).name: [x.line for x in report.findings if x.path == f.path]
        for f in report.findings
    }
    assert len({tuple(v) for v in lines.values()}) == 1
