"""The counter families both metric routes export, defined once.

`thinkfix scan --output-format openmetrics` (a cron job's file) and `thinkfix watch` (served
live, or its `--textfile`) used to name the same counts differently, so a query written for
one matched nothing from the other. Both now take their names, help, type and labels from
`COUNTERS`, and a test parses both routes with prometheus_client and compares them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One counter family: the name without `_total`, its help, and its label names."""

    name: str
    help: str
    labels: tuple[str, ...]


ASSISTANT_MESSAGES = Family(
    "thinkfix_assistant_messages",
    "Assistant messages read, by session format and model.",
    ("format", "model"),
)
LEAKING_MESSAGES = Family(
    "thinkfix_leaking_messages",
    "Assistant messages with leaked reasoning, by session format and model.",
    ("format", "model"),
)
FINDINGS = Family(
    "thinkfix_findings",
    "Leaks found, by leak kind, session format and model.",
    ("kind", "format", "model"),
)

#: The families both routes export, in the order they are written.
COUNTERS = (ASSISTANT_MESSAGES, LEAKING_MESSAGES, FINDINGS)
