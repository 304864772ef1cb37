"""Helpers for the repair, safe-write and manifest tests: fixture copies and independent checks."""

from __future__ import annotations

import io
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from tests.formats.support import ids, is_store, session_files, side_files
from thinkfix.engine.repair.driver import repair_paths
from thinkfix.engine.repair.model import RepairOptions, RepairResult, WriteMode
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.runner import scan
from thinkfix.formats import registry
from thinkfix.formats.records import Record

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


def fixture_files() -> list[Path]:
    """Every fixture session file (the streams folder, READMEs and a store's side files are
    not sessions of their own)."""
    return session_files(FIXTURES)


def session_unit(source: Path) -> Path:
    """What must travel with a fixture file for it to be read right: the file itself, or
    (OpenCode's file store and Kilo's, whose parts take their role from message files) its
    store."""
    parts = source.relative_to(FIXTURES).parts
    if parts[0] in ("opencode", "kilo") and "storage" in parts:
        return FIXTURES.joinpath(*parts[: parts.index("storage") + 1])
    return source


def copy_unit(source: Path, dest: Path) -> Path:
    """Copy a fixture's session unit under `dest`; the path of the copied `source`."""
    unit = session_unit(source)
    if unit == source:
        target = dest / source.name
        for part in [source, *side_files(source)]:  # a store's -wal holds rows too
            (dest / part.name).write_bytes(part.read_bytes())
        return target
    shutil.copytree(unit, dest / unit.name)
    return dest / unit.name / source.relative_to(unit)


def copy_fixtures(dest: Path) -> Path:
    """A private copy of the fixture tree (sessions only), so tests may write to it."""
    root = dest / "fixtures"
    for p in fixture_files():
        target = root / p.relative_to(FIXTURES)
        target.parent.mkdir(parents=True, exist_ok=True)
        for part in [p, *side_files(p)]:
            shutil.copy2(part, target.with_name(part.name))
    return root


def options(mode: WriteMode, tmp: Path, **kw: Any) -> RepairOptions:
    """Repair options whose manifest and backups live under `tmp` (never the user's home)."""
    kw.setdefault("run_dir", str(tmp / "run"))
    return RepairOptions(mode=mode, **kw)


def run(paths: list[Path | str], mode: WriteMode, tmp: Path, **kw: Any) -> RepairResult:
    return repair_paths([str(p) for p in paths], options(mode, tmp, **kw))


def records(path: Path, fmt_id: str, data: bytes | None = None) -> list[Record]:
    """The records of a session file (or of `data`); a database store's from the file
    itself, through the store layer (a store is never read as a stream)."""
    fmt = registry.get(fmt_id)
    if data is None and is_store(path):
        with open(path, "rb") as fp:
            return list(fmt.read(fp))
    return list(fmt.read(io.BytesIO(path.read_bytes() if data is None else data)))


def findings(paths: list[Path]) -> int:
    """What `thinkfix scan` finds, through the scan engine (not the repair planner)."""
    report = scan([str(p) for p in paths], ScanOptions(), jobs=1)
    assert not report.errors, report.errors
    return len(report.findings)


# The fixtures' all-reasoning messages: nothing visible would remain, so repair refuses them
# (an empty text block breaks resume and viewers drop it) and a scan keeps reporting them.
REFUSED = {
    ("2e8b4f60-91c3-4d7a-b5e2-7c1f0a9d3e48.jsonl", 8),
    ("session-1775200000000-0.jsonl", 7),
    ("openrouter-chat.jsonl", 7),
}


def leaking_lines(paths: list[Path]) -> set[tuple[str, int]]:
    """(file name, line) of every message `thinkfix scan` still reports."""
    report = scan([str(p) for p in paths], ScanOptions(), jobs=1)
    assert not report.errors, report.errors
    return {(Path(f.path).name, f.line) for f in report.findings}


def all_ids(path: Path, fmt_id: str) -> Counter[tuple[str, str]]:
    found: Counter[tuple[str, str]] = Counter()
    for r in records(path, fmt_id):
        if r.error is None and r.data is not None:
            found += ids(r.data)
    return found


def temp_files(folder: Path) -> list[str]:
    """Leftover temporary files anywhere under `folder`."""
    return sorted(str(p) for p in folder.rglob("*") if ".thinkfix-tmp" in p.name)


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def mode_bits(path: Path) -> int:
    return os.stat(path).st_mode & 0o7777
