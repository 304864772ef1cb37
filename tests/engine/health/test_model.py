"""The names `--check` takes."""

from __future__ import annotations

import pytest

from thinkfix.engine.health.model import ALL_CHECKS, parse_checks
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import Problem


def test_parse_checks_keeps_report_order_and_drops_repeats() -> None:
    assert parse_checks("size, lines,lines,SIGNATURE") == (Check.SIGNATURE, Check.LINES, Check.SIZE)


def test_all_names_every_check() -> None:
    assert parse_checks("all") == ALL_CHECKS == tuple(Check)
    assert parse_checks(["tool-pairs", "all"]) == ALL_CHECKS


def test_an_unknown_check_is_named_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown check 'leaks' \(known: signature, tool-pairs"):
        parse_checks("lines,leaks")


def test_every_problem_belongs_to_a_check() -> None:
    assert {p.check for p in Problem} == set(Check)
