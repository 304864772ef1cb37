"""Follow session files as agents write them, counting each complete record once.

A pass walks the watched paths (stat only), skips files whose identity did not change,
and hands the others to `incremental.scan_increment`, which reads only what was appended
(a line being written is left for the next pass). The counters are monotonic: they grow by
what each file's committed counts gained; a file that shrinks (repaired, rewritten) or
disappears leaves its counts in place, and a truncated file's new content counts as new.
Counters and per-file entries are saved together (atomically) after every pass that
changed something, so a watcher killed at any moment and restarted neither counts a
record twice nor misses one.

No third-party import here: `prometheus_client` and `watchdog` are imported by the
command (the `thinkfix[watch]` extra), so importing thinkfix stays fast.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from thinkfix.engine.inputs.files import InputFile
from thinkfix.engine.inputs.walk import walk
from thinkfix.engine.report import LeakFinding
from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.result import ScannedFile
from thinkfix.engine.telemetry.incremental import options_key, scan_increment
from thinkfix.engine.telemetry.state import (
    Entry,
    State,
    decode,
    decoded,
    read_document,
    vouched,
    write_document,
)

#: (format, model) for message counters; (kind, format, model) for findings.
Labels = tuple[str, ...]


@dataclass
class Totals:
    """The monotonic counters the watcher exports."""

    messages: Counter[Labels] = field(default_factory=Counter)
    leaking: Counter[Labels] = field(default_factory=Counter)
    findings: Counter[Labels] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {
            name: [[*k, v] for k, v in sorted(getattr(self, name).items())]
            for name in ("messages", "leaking", "findings")
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Totals:
        out = cls()
        for name in ("messages", "leaking", "findings"):
            target: Counter[Labels] = getattr(out, name)
            for row in data.get(name, []):
                target[tuple(str(x) for x in row[:-1])] = int(row[-1])
        return out

    def copy(self) -> Totals:
        return Totals(Counter(self.messages), Counter(self.leaking), Counter(self.findings))


def counts(result: ScannedFile | None) -> Totals:
    """A file's committed counts as counter labels."""
    out = Totals()
    if result is None or result.format is None:
        return out
    fmt = result.format
    for model, assistant, leaking, _ in result.by_model:
        if assistant:
            out.messages[(fmt, model)] += assistant
        if leaking:
            out.leaking[(fmt, model)] += leaking
    for f in result.findings:
        out.findings[(f.kind, f.format, f.model or "")] += 1
    return out


def _grow(total: Counter[Labels], old: Counter[Labels], new: Counter[Labels]) -> None:
    for key, value in new.items():
        gain = value - old.get(key, 0)
        if gain > 0:
            total[key] += gain


def _finding_key(f: LeakFinding) -> tuple[Any, ...]:
    return (f.line, f.json_path, f.start, f.kind, f.fingerprint)


@dataclass
class WatchState:
    """The incremental entries plus the counters, saved as one file."""

    files: State = field(default_factory=State)
    totals: Totals = field(default_factory=Totals)

    @classmethod
    def load(cls, path: str) -> WatchState:
        """The saved entries and counters, or neither (never counters without the entries
        they came from, which would count every record again); `files.note` says why a
        state file that was there is not reused."""
        data, note = read_document(path)
        if data is None:
            return cls(State(note=note))
        both, note = decoded(path, data, lambda d: (decode(d), Totals.from_json(d["totals"])))
        if both is None:
            return cls(State(note=note))
        return cls(State(both[0]), both[1])

    def save(self, path: str) -> None:
        write_document(path, self.files.entries, totals=self.totals.to_json())


def _holds(path: str, entry: Entry) -> bool:
    """Is the file the entry remembers still at `path`?"""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (entry.dev, entry.ino)


class Watcher:
    """Passes over the watched paths; `snapshot()` is safe to call from another thread."""

    def __init__(
        self,
        paths: Iterable[str],
        options: ScanOptions,
        state_path: str,
        *,
        on_finding: Callable[[LeakFinding], None] | None = None,
    ) -> None:
        self.paths = list(paths)
        self.options = options
        self.state_path = state_path
        self.on_finding = on_finding
        self.key = options_key(options)
        self.state = WatchState.load(state_path)
        self._published = self.state.totals.copy()
        self._lock = threading.Lock()
        self.passes = 0

    def _renamed(self, path: str, st: os.stat_result) -> Entry | None:
        """The entry of a file rotated by renaming it (the same inode, its old name gone),
        moved to its new name so its records are not counted again."""
        entries = self.state.files.entries
        for old_path, entry in list(entries.items()):
            if (
                (entry.dev, entry.ino) == (st.st_dev, st.st_ino)
                and old_path != path
                and not _holds(old_path, entry)
            ):
                del entries[old_path]
                entry.committed = entry.committed._replace(
                    path=path,
                    findings=tuple(f._replace(path=path) for f in entry.committed.findings),
                    errors=tuple(e._replace(path=path) for e in entry.committed.errors),
                )
                entries[path] = entry
                return entry
        return None

    def snapshot(self) -> Totals:
        with self._lock:
            return self._published.copy()

    def run_pass(self, *, announce: bool = True) -> int:
        """Read what changed; save and publish the counters. Returns the new findings."""
        entries = self.state.files.entries
        totals = self.state.totals
        found: list[LeakFinding] = []
        seen: set[str] = set()
        changed = False
        for item in walk(self.paths, self.options.inputs):
            if isinstance(item, InputFile) and item.error is not None:
                continue  # not there (yet), or unreadable: the next pass looks again
            seen.add(item.path)
            try:
                st = os.stat(item.real_path)
            except OSError:
                continue
            old = entries.get(item.path) or self._renamed(item.path, st)
            if old is not None and old.options == self.key and vouched(old, st, item.real_path):
                continue  # untouched since it was read (a rewrite moves the ctime)
            inc = scan_increment(item, old, self.options, self.key)
            if inc.entry is None:
                continue  # unreadable for now: counted once it can be read
            truncated = (
                old is not None
                and (old.dev, old.ino) == (st.st_dev, st.st_ino)
                and st.st_size < old.offset
            )
            before = counts(None if old is None or truncated else old.committed)
            after = counts(inc.entry.committed)
            _grow(totals.messages, before.messages, after.messages)
            _grow(totals.leaking, before.leaking, after.leaking)
            _grow(totals.findings, before.findings, after.findings)
            known = (
                set()
                if old is None or truncated
                else {_finding_key(f) for f in old.committed.findings}
            )
            found.extend(f for f in inc.entry.committed.findings if _finding_key(f) not in known)
            entries[item.path] = inc.entry
            changed = True
        for path in [p for p in entries if p not in seen and not os.path.exists(p)]:
            del entries[path]  # deleted: its counts stay in the counters
            changed = True
        if changed or self.passes == 0:
            self.state.save(self.state_path)
            with self._lock:
                self._published = totals.copy()
        self.passes += 1
        if announce and self.on_finding is not None:
            for f in sorted(found):
                self.on_finding(f)
        return len(found)
