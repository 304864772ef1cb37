"""How much session text an output may show (`--redact`).

Apart from the rules that find credentials (`rules.py`): every scan's options name a
`Redaction`, but only a scan that shows a snippet loads the rules (#26 item 3: start-up).
"""

from __future__ import annotations

from enum import Enum


class Redaction(str, Enum):
    """How much session text an output may show."""

    NONE = "none"
    SECRETS = "secrets"  # likely credentials masked
    ALL = "all"  # every text replaced by its length and hash

    @classmethod
    def from_flag(cls, value: str | None) -> Redaction:
        """Absent or `--redact` alone means secrets (reports are handed to auditors, so
        credentials are masked by default); `--redact none` opts out; `--redact all`."""
        if value is None or value == "":
            return cls.SECRETS
        if value in ("secrets", "1", "true", "yes"):
            return cls.SECRETS
        return cls(value)
