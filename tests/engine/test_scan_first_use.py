"""What a folder scan loads on its way through the files (#26 items 3, 5: the fixed cost of
every CLI run and every pool worker, beside the per-byte cost the bench times).

A scan of a folder with no ignore file and no `exclude` needs no gitignore machinery: the
names it always skips and the names it takes for sessions are plain comparisons
(`files.name_globs`), held here to pathspec's answers. A scan of Codex and pi rollouts loads
no repair planner or JSON edit (the formats import them where a repair plans), and a text
that cannot pass the findings cap is normalized without the streaming normalizer. Each was
~5-28 ms of a CLI scan's first use (docs/performance.md)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pathspec
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.processes import run_python
from thinkfix.engine.inputs.files import (
    ALWAYS_SKIP,
    DEFAULT_INCLUDE,
    always_skipped,
    default_session_name,
    name_globs,
)

_ROOT = Path(__file__).resolve().parents[2]

#: Names built from the patterns' own pieces, so that near misses are common.
_NAMES = st.lists(
    st.sampled_from(
        [
            *"abz.-_*?[]!\\ ",
            "jsonl",
            "json",
            "db",
            "lock",
            ".git",
            "opencode-",
            "kilo",
            "crush",
            "thinkfix-tmp",
            "state.vscdb",
            ".aider.chat.history.md",
            "node_modules",
        ]
    ),
    min_size=1,
    max_size=6,
).map("".join)


@pytest.mark.parametrize(
    ("patterns", "simple"),
    [(ALWAYS_SKIP, always_skipped), (DEFAULT_INCLUDE, default_session_name)],
    ids=["ALWAYS_SKIP", "DEFAULT_INCLUDE"],
)
@given(name=_NAMES)
@example(name=".lock")
@example(name="opencode-.db")
@example(name="opencode-.dbx")
@example(name="x.jsonl ")
@example(name=".jsonl")
def test_a_name_matches_as_gitignore_matching_reads_the_pattern(
    patterns: tuple[str, ...], simple: object, name: str
) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    assert simple(name) is spec.match_file(name)  # type: ignore[operator]


@pytest.mark.parametrize("pattern", ["a?b", "[ab]c", "a*b*c", "!keep", "a/b", "\\*x"])
def test_a_pattern_plain_comparison_cannot_read_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="not simple name patterns"):
        name_globs(("x.jsonl", pattern))


#: Loaded by none of the scans below: gitignore matching (no ignore file, no `exclude`), the
#: repair side of the formats, and the streaming normalizer (no text near the findings cap).
_NEVER = (
    "pathspec",
    "thinkfix.formats.planner",
    "thinkfix.formats.jsonedit",
    "thinkfix.formats.jsonspans",
    "thinkfix.normalizer.stream",
)

_PROBE = """
import json, sys
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
report = scan([sys.argv[1]], ScanOptions(by_day=True), jobs=1)
print(json.dumps({"modules": sorted(sys.modules), "files": report.summary.files,
                  "leaks": report.summary.leaking_messages}))
"""


@pytest.mark.parametrize("runtime", ["codex", "pi", "claude-code"])
def test_a_folder_scan_loads_no_gitignore_matching_and_no_repair_side(
    runtime: str, tmp_path: Path
) -> None:
    """The fixtures' sessions of one runtime, copied where no ignore file is above them;
    leaks among them are normalized (the batch normalizer) and reported as usual."""
    folder = tmp_path / runtime
    shutil.copytree(_ROOT / "fixtures" / runtime, folder)
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKFIX_")}
    done = run_python(_PROBE, str(folder), cwd=tmp_path, env={**env, "PYTHONPATH": str(_ROOT)})
    found = json.loads(done.stdout)
    assert found["files"] == len(list(folder.rglob("*.jsonl")))
    assert found["leaks"] > 0  # a leak was normalized, without the streaming normalizer
    loaded = set(found["modules"])
    assert sorted(m for m in loaded if m.split(".")[0] == "pathspec" or m in _NEVER) == []
