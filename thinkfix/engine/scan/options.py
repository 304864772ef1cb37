"""What a scan is asked to find: `ScanOptions` and the leak kinds `--select`/`--ignore` pick.

What is reported: every finding whose kind changes the text. `unclosed_inline` (an opener
mid-text that never closed and stays visible) is a notice, left out unless selected
(`--select all` or `--select unclosed_inline`); when selected it counts like any other kind.
A message leaks when it has at least one reported finding.
"""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from thinkfix.engine.health.model import DEFAULT_HEALTH, HealthOptions
from thinkfix.engine.inputs.files import InputOptions
from thinkfix.engine.report.checks import Check
from thinkfix.engine.secrets.redaction import Redaction
from thinkfix.formats.records import DEFAULT_RECORD_LIMIT
from thinkfix.normalizer.kinds import LeakKind
from thinkfix.normalizer.policy import DEFAULT, Policy

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

#: Kinds reported unless `--select` says otherwise: every kind that changes the text.
#: `unclosed_inline` is a notice (the opener stays visible); select it to see it.
DEFAULT_KINDS: frozenset[str] = frozenset(k.value for k in LeakKind if k.changes_text)
ALL_KINDS: frozenset[str] = frozenset(k.value for k in LeakKind)


def select_kinds(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> frozenset[str]:
    """The kinds to report: `select` (or the default set) minus `ignore`; `ALL` selects all.

    Unknown names raise ValueError listing the valid ones.
    """
    chosen = set(DEFAULT_KINDS)
    select, ignore = (
        [s.strip().lower() for s in select if s.strip()],
        [s.strip().lower() for s in ignore if s.strip()],
    )
    for name in select + ignore:
        if name != "all" and name not in ALL_KINDS:
            raise ValueError(
                f"unknown leak kind {name!r} (choose from "
                + ", ".join(sorted(ALL_KINDS))
                + ", all)"
            )
    if select:
        chosen = set(ALL_KINDS) if "all" in select else set(select)
    chosen -= set(ALL_KINDS) if "all" in ignore else set(ignore)
    return frozenset(chosen)


class ScanOptions(NamedTuple):
    """Everything that decides what a scan finds (not how it is shown).

    A NamedTuple, not a frozen dataclass: every scan builds one, and a dataclass costs ~2 ms
    of every start-up to define (#26 item 3)."""

    policy: Policy = DEFAULT
    kinds: frozenset[str] = DEFAULT_KINDS
    inputs: InputOptions = InputOptions()
    # Opt-outs for applications whose own prompts use `<think>` as an annotation:
    # globs over model names (case-insensitive) and over file paths.
    disabled_models: tuple[str, ...] = ()
    disabled_paths: tuple[str, ...] = ()
    # A run whose paths hold no session file is an error unless this says it may happen
    # (a pre-commit hook on a commit that touches no session).
    allow_no_sessions: bool = False
    disabled_base: str | None = None  # folder the path globs are relative to (the config's)
    prefilter: bool = True  # skip parsing records the byte tests prove irrelevant
    # Trend: counts by day (from each message's time, else its file's) and a time window
    # (seconds since the epoch: since inclusive, until exclusive); messages outside it are
    # neither counted nor checked.
    by_day: bool = False
    since: float | None = None
    until: float | None = None

    @property
    def timed(self) -> bool:
        """Does the scan need each message's time?"""
        return self.by_day or self.since is not None or self.until is not None

    snippet_chars: int = 200
    # Findings reported per message at most (`--max-findings`, 0: no cap): past it the rest
    # of the message is not examined, so a record of millions of delimiters costs about what
    # a clean one does.
    max_findings: int = 1000
    # Records longer than this many bytes (`--max-record-size`, 0: no limit) are reported
    # as too large and never parsed; a decompressed stream is checked against it too.
    max_record_size: int = DEFAULT_RECORD_LIMIT
    # What a finding's snippet may show: secrets are masked before the snippet is cut, so
    # no prefix of a credential survives the cut (`--redact`).
    redaction: Redaction = Redaction.SECRETS
    # `--check`: the session health checks to run besides the leak scan (none: a scan as
    # before), and the thresholds of `size`.
    checks: tuple[Check, ...] = ()
    health: HealthOptions = DEFAULT_HEALTH

    def path_disabled(self, path: str) -> bool:
        """Does a `disable.paths` glob cover this file?"""
        if not self.disabled_paths or path == "-":
            return False
        from thinkfix.engine.inputs.ignore import glob_match  # only with path globs to match

        candidates = [path]
        if self.disabled_base is not None:
            rel = os.path.relpath(os.path.abspath(path), self.disabled_base)
            if not rel.startswith(".."):
                candidates.append(rel)
        return any(glob_match(p, c) for p in self.disabled_paths for c in candidates)

    def model_disabled(self, model: str | None) -> bool:
        """Does a `disable.models` glob cover this model?"""
        if not self.disabled_models or not model:
            return False
        import fnmatch  # only with model globs to match (#26 item 3: start-up)

        name = model.lower()
        return any(fnmatch.fnmatchcase(name, p.lower()) for p in self.disabled_models)
