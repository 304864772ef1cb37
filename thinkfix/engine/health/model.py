"""What the health checks are asked (which checks, the size thresholds) and what one file gives.

The finding itself (`HealthFinding`, its `Check` and `Problem`) is part of the report model
(engine/report/health.py and checks.py), beside the leaks and errors every report carries."""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

from collections.abc import Iterable
from typing import TYPE_CHECKING

from thinkfix.engine.report.checks import Check

if TYPE_CHECKING:  # annotations only: every scan loads this module, not the findings
    from typing import NamedTuple

    from thinkfix.engine.report.health import HealthFinding
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

ALL_CHECKS: tuple[Check, ...] = tuple(Check)


def parse_checks(value: str | Iterable[str]) -> tuple[Check, ...]:
    """`signature,lines` (or a list of names) as checks in report order; `all` names every
    check. Raises ValueError naming an unknown check and the known ones."""
    names = [n for v in ([value] if isinstance(value, str) else value) for n in v.split(",")]
    picked: set[Check] = set()
    for raw in names:
        name = raw.strip().lower()
        if not name:
            continue
        if name == "all":
            picked.update(Check)
            continue
        try:
            picked.add(Check(name))
        except ValueError:
            known = ", ".join(c.value for c in Check)
            raise ValueError(f"unknown check {raw.strip()!r} (known: {known}, all)") from None
    return tuple(c for c in Check if c in picked)


# NamedTuples, not frozen dataclasses: every scan's options carry a HealthOptions, and a
# dataclass costs ~1 ms of every start-up to define (#26 item 3).


class HealthOptions(NamedTuple):
    """The thresholds of the `size` check."""

    record_bytes: int = 1 << 20  # a record over this is a `large-record`
    file_bytes: int = 64 << 20  # a file over this is a `large-file`
    largest: int = 5  # at most this many `large-record` findings a file, the largest first


DEFAULT_HEALTH = HealthOptions()


class FileHealth(NamedTuple):
    """What the checks found in one file, and (with `size`) its bytes per record type:
    (type, records, bytes), the largest first."""

    findings: "tuple[HealthFinding, ...]" = ()
    bytes_by_type: tuple[tuple[str, int, int], ...] = ()
