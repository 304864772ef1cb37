"""Repair's start-up: a repair that writes no report imports no diff renderer and no rich.

Every repair run pays its imports before the first file (#13's repair row is measured
through the CLI), so the renderers load only when `--report` (or `thinkfix diff`) asks.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.processes import run_python

_ROOT = Path(__file__).resolve().parents[2]
_PI = next(p for p in sorted((_ROOT / "fixtures" / "pi").iterdir()) if p.suffix == ".jsonl")


def _loaded(args: list[str]) -> list[str]:
    probe = (
        "import json, sys\n"
        "from thinkfix.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "sys.stdout.write('\\n' + json.dumps(sorted(sys.modules)))\n"
    )
    done = run_python(probe, cwd=_ROOT)
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


def test_repair_dry_run_imports_no_diff_renderer_nor_rich() -> None:
    modules = _loaded(["repair", "-q", "--dry-run", str(_PI)])
    assert "thinkfix.engine.repair.driver" in modules
    assert [
        m
        for m in modules
        if m == "rich"
        or m.startswith(("rich.", "thinkfix.reporters.diff."))
        and m != "thinkfix.reporters.diff.base"
    ] == []


def test_a_report_loads_its_renderer(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    modules = _loaded(["repair", "-q", "--dry-run", "--report", str(report), str(_PI)])
    assert "thinkfix.reporters.diff.json" in modules and report.exists()
    assert "thinkfix.reporters.diff.html" not in modules


def test_a_dry_run_loads_no_write_path_nor_database_machinery() -> None:
    """A read-only repair writes nothing and reads no database here: the ledger, the safe
    writes, sqlite3, the health checks and the diff builder stay unloaded (#26 items 3, 4)."""
    modules = _loaded(["repair", "-q", "--dry-run", str(_PI)])
    assert "thinkfix.engine.repair.plan" in modules
    unwanted = (
        "sqlite3",
        "thinkfix.engine.ledger.journal",
        "thinkfix.engine.ledger.restore",
        "thinkfix.engine.ledger.rows",
        "thinkfix.engine.repair.write",
        "thinkfix.engine.repair.store",
        "thinkfix.engine.repair.fixes",
        "thinkfix.engine.repair.diff",
        "thinkfix.io.safewrite",
        # the run's roots are sealed into a journal only a writing run starts; a temporary
        # file is made only for a compressed input or a URL (#26 item 4)
        "thinkfix.engine.ledger.integrity",
        "tempfile",
        # a dry run hashes nothing and names no temporary file (OpenSSL alone is ~3 ms)
        "hashlib",
        "secrets",
        # the auditor's view is built for --report and --diff only (12-16 ms)
        "thinkfix.engine.repair.audit",
        # an interrupt's exit status is a number (cli/repairing.py): not the signal module's
        # enum of every signal (~0.5 ms), where the scan does not load it either (on Python
        # 3.10 with the lowest dependencies something below thinkfix does)
        *(() if "signal" in _loaded(["scan", "-q", str(_PI)]) else ("signal",)),
    )
    assert [m for m in modules if m in unwanted] == []
