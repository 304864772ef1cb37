"""Suite-wide test settings.

Under CI (the `CI` environment variable, which `.ci/run` and hosted runners set) the
hypothesis properties run derandomized and without the example database: a CI run
then checks the same examples every time, so a red build is reproducible and never
depends on examples a previous run happened to save.
"""

from __future__ import annotations

import os
import tempfile

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Runs keep their undo key, manifests and backups in the state folder: tests use a private
# one, never the user's ~/.local/state (subprocesses and CliRunner inherit it).
if "THINKFIX_STATE_DIR" not in os.environ:
    os.environ["THINKFIX_STATE_DIR"] = tempfile.mkdtemp(prefix="thinkfix-test-state-")

# Tests write a session and repair it in place a moment later; by default `repair --in-place`
# leaves a file modified in the last few seconds alone (a live agent may be appending), so the
# suite turns that quiet time off. The live-writer tests set it themselves.
os.environ.setdefault("THINKFIX_ACTIVE_SECONDS", "0")
