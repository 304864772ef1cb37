"""pytest plugin for .ci/run's lowest-pins step only: each hypothesis property runs a quarter of
its examples (at least ten), derandomized as everywhere under CI.

That step is there to prove the floors (Python 3.10, the lowest dependency versions): an API a
floor lacks, a behaviour it changed, fails every example that reaches it, so it shows in the
first ones. The search for rare inputs is step 1's, which runs every property's full count on
the default Python; running it again here only doubled it (a fifth of the whole run's time).
Every test still runs here, none is skipped.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import settings

SHARE = 4
LEAST = 10


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    done: set[int] = set()
    for item in items:
        test = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        if not getattr(test, "is_hypothesis_test", False) or id(test) in done:
            continue
        done.add(id(test))
        # The settings hypothesis reads when the test runs (what @settings sets).
        full = test._hypothesis_internal_use_settings
        share = min(full.max_examples, max(LEAST, math.ceil(full.max_examples / SHARE)))
        test._hypothesis_internal_use_settings = settings(full, max_examples=share)
