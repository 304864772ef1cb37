"""The session health checks `scan --check` can name (#28), apart from what they find
(`report.health`): every scan's options carry the checks asked for, but only a scan that ran
one loads its findings' values (#26 item 3)."""

from __future__ import annotations

from enum import Enum


class Check(str, Enum):
    """A check `--check` can name, in the order reports list them."""

    SIGNATURE = "signature"
    TOOL_PAIRS = "tool-pairs"
    LINES = "lines"
    SECRETS = "secrets"
    SIZE = "size"

    def __str__(self) -> str:
        return self.value
