"""Each check finds exactly the problems the health data holds, in each runtime's shapes.

`tests/data/health/<format>/<problem>/...` are sessions written in the runtimes' own shapes
with known problems (and traps that are none); `expected.json` lists every finding of
every check, so a check that finds too much fails as surely as one that finds too little.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thinkfix.engine.health.model import ALL_CHECKS, HealthOptions
from thinkfix.engine.health.run import check_bytes, check_file
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import HealthFinding, Problem
from thinkfix.formats import registry

DATA = Path(__file__).resolve().parents[2] / "data" / "health"
EXPECTED: dict[str, dict[str, object]] = json.loads((DATA / "expected.json").read_text())
#: Small enough that the size data's progress record is over it and no other record is.
SMALL = HealthOptions(record_bytes=4096, file_bytes=16384, largest=2)
CASES = sorted(EXPECTED)


def _row(f: HealthFinding) -> list[object]:
    row: list[object] = [f.line, f.problem.value, f.json_path, f.detail]
    if f.end_line:
        row.append(f.end_line)
    if f.stops_reading:
        row.append("stops")
    return row


def _check(rel: str, checks: tuple[Check, ...] = ALL_CHECKS) -> list[HealthFinding]:
    path = DATA / rel
    fmt = registry.detect_file(str(path))
    assert fmt.id == EXPECTED[rel]["format"]
    return list(check_file(str(path), fmt, checks, SMALL).findings)


def test_health_data_is_all_listed() -> None:
    files = {
        str(p.relative_to(DATA))
        for p in DATA.rglob("*")
        if p.is_file() and p.name not in ("expected.json", "README.md")
    }
    assert files == set(EXPECTED)


@pytest.mark.parametrize("rel", CASES)
def test_checks_find_exactly_the_listed_problems(rel: str) -> None:
    assert [_row(f) for f in _check(rel)] == EXPECTED[rel]["findings"]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=str)
@pytest.mark.parametrize("rel", CASES)
def test_each_check_alone_finds_only_its_own(rel: str, check: Check) -> None:
    wanted = [r for r in EXPECTED[rel]["findings"] if Problem(r[1]).check is check]  # type: ignore[index, union-attr]
    assert [_row(f) for f in _check(rel, (check,))] == wanted


def test_every_problem_of_the_checks_has_data() -> None:
    """Every problem a check can report occurs in the data (large-file: its own test)."""
    seen = {Problem(r[1]) for v in EXPECTED.values() for r in v["findings"]}  # type: ignore[attr-defined, index]
    assert set(Problem) - seen == {Problem.NOT_JSON, Problem.NOT_UTF8, Problem.LARGE_FILE}


def test_findings_name_the_file_and_serialize() -> None:
    rel = "claude-code/tool-pairs/6b9f2d4a-3c8e-4f0b-9d7a-2e1c4f6b8d03.jsonl"
    (first, second) = _check(rel)
    assert first.path == str(DATA / rel)
    assert first.session_id == "6b9f2d4a-3c8e-4f0b-9d7a-2e1c4f6b8d03"
    doc = first.to_dict()
    assert doc["check"] == "tool-pairs" and doc["problem"] == "call-without-result"
    assert HealthFinding(**doc) == first  # read back from JSON (a state file, a worker)
    assert first.fingerprint != second.fingerprint and len(first.fingerprint) == 32


def test_fingerprint_ignores_the_line() -> None:
    """A baseline keeps a problem's identity as lines are added before it."""
    rel = "codex/tool-pairs/rollout-2026-03-05T08-00-01-0196b1d5-8e4f-7b32-8c6a-4d9f3e2a7b58.jsonl"
    data = (DATA / rel).read_bytes()
    fmt = registry.get("codex")
    head, rest = data.split(b"\n", 1)
    extra = b'{"timestamp":"2026-03-05T08:00:01.500Z","type":"event_msg","payload":{"type":"token_count","info":null}}\n'
    before = check_bytes(data, fmt, ALL_CHECKS, rel).findings
    after = check_bytes(head + b"\n" + extra + rest, fmt, ALL_CHECKS, rel).findings
    assert [f.line + 1 for f in before] == [f.line for f in after]
    assert [f.fingerprint for f in before] == [f.fingerprint for f in after]


def test_size_reports_a_large_file_and_bytes_by_type() -> None:
    rel = "claude-code/size/9e2c5a7d-6f1b-4c3e-8a4d-5b4f7c9e1a36.jsonl"
    path = DATA / rel
    health = check_file(
        str(path), registry.get("claude-code"), (Check.SIZE,), HealthOptions(file_bytes=1000)
    )
    (large,) = health.findings
    assert large.problem is Problem.LARGE_FILE and large.size == path.stat().st_size
    assert health.bytes_by_type[0][:2] == ("progress", 1)
    assert sum(b for _, _, b in health.bytes_by_type) == path.stat().st_size
