"""`secrets`: likely credentials anywhere in a session's stored text.

The rules are the ones that mask reports (`--redact secrets`: gitleaks' maintained rules
and the hand rules beside them), so what a report would mask is exactly what this check
reports. Every string of a record is read (prompts, tool inputs and outputs, answers,
keys), located by its JSON path; a finding names the rule, never the secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from thinkfix.engine.health.where import Where
from thinkfix.engine.report.health import HealthFinding, Problem
from thinkfix.engine.secrets.rules import mask_secrets
from thinkfix.formats.records import Record

_MASK = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")


def secret_kinds(text: str) -> list[str]:
    """The rule of each likely credential in `text`, in order (none: an empty list)."""
    if "[REDACTED:" in text:  # masks already in the text are not secrets
        before = len(_MASK.findall(text))
        masked = mask_secrets(text)
        return _MASK.findall(masked)[before:] if masked != text else []
    masked = mask_secrets(text)
    return _MASK.findall(masked) if masked != text else []


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string in a JSON value (object keys too), with its JSON path."""
    stack = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, str):
            yield p, v
        elif isinstance(v, dict):
            for k, item in reversed(list(v.items())):
                if isinstance(k, str) and len(k) > 16:
                    yield f"{p}{'.' if p else ''}{k}", k
                stack.append((item, f"{p}{'.' if p else ''}{k}"))
        elif isinstance(v, list):
            stack.extend((item, f"{p}[{i}]") for i, item in reversed(list(enumerate(v))))


class SecretCheck:
    """The `secrets` visitor: a record's bytes are masked once, and only a record where
    something was masked is walked string by string."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.found: list[HealthFinding] = []

    def feed(self, record: Record, offset: int) -> None:
        raw = record.raw
        text = raw.decode("utf-8", "replace")
        if b"\\u" not in raw and not secret_kinds(text):
            return
        data = record.data
        if data is None:  # an unreadable record: located by the record alone
            for kind in secret_kinds(text):
                self._add(record, "", kind, text)
            return
        for path, value in _strings(data, ""):
            for kind in secret_kinds(value):
                self._add(record, path, kind, value)

    def _add(self, record: Record, path: str, kind: str, text: str) -> None:
        self.found.append(
            self.where.finding(
                record,
                Problem.SECRET,
                f"a likely credential ({kind})",
                json_path=path,
                detail=kind,
                content=mask_secrets(text).encode("utf-8", "surrogatepass") + path.encode(),
            )
        )

    def finish(self) -> Iterator[HealthFinding]:
        return iter(self.found)
