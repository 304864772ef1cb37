"""Suite-wide test settings.

Under CI (the `CI` environment variable, which `.ci/run` and hosted runners set) the
hypothesis properties run derandomized and without the example database: a CI run
then checks the same examples every time, so a red build is reproducible and never
depends on examples a previous run happened to save.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
