"""Shared fixtures for the reporter tests: the hand-made reports of `cases.py`."""

from __future__ import annotations

import pytest

from thinkfix.engine.report import Report

from .cases import clean_report, empty_report, full_report


@pytest.fixture
def full() -> Report:
    return full_report()


@pytest.fixture
def clean() -> Report:
    return clean_report()


@pytest.fixture
def empty() -> Report:
    return empty_report()


@pytest.fixture(params=["full", "clean", "empty"])
def any_report(request: pytest.FixtureRequest) -> Report:
    return {"full": full_report, "clean": clean_report, "empty": empty_report}[request.param]()
