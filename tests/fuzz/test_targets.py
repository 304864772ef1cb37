"""The fuzz targets (fuzz/targets.py) on their seed corpus: fixtures and issue 11's crash sites.

atheris mutates these seeds for minutes (`python fuzz/run.py`); here every seed runs
once through every target it belongs to, so a crash site stays fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.corpus import SEEDS, seed_files
from fuzz.targets import TARGETS


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_seed_passes_its_target(target: str) -> None:
    for seed in seed_files(target):
        TARGETS[target](seed.read_bytes())


def test_the_crash_sites_of_issue_11_are_seeds() -> None:
    names = {p.name for p in SEEDS.iterdir()}
    assert {
        "unhashable-type.jsonl",
        "lone-surrogate.jsonl",
        "hostile-delimiters.jsonl",
        "deep-nesting.jsonl",
        "bad-utf8-nul-bom-crlf.jsonl",
    } <= names


def test_a_broken_promise_is_reported() -> None:
    from fuzz import targets

    with pytest.raises(targets.Broken):
        targets._no_internal([type("E", (), {"kind": "internal_error", "message": "x"})()], "t")


def test_seeds_exist_for_every_target() -> None:
    assert all(seed_files(t) for t in TARGETS)
    assert all(isinstance(p, Path) for p in seed_files("cli"))
