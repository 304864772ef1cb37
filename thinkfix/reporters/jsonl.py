"""JSON Lines: a header, then one object per finding, error and stale entry, for streaming tools.

The header carries the summary and the files that were skipped (`skipped`, always
present), so a reader of the first line knows what was and was not read."""

from __future__ import annotations

from typing import Any

from thinkfix._serialize import record
from thinkfix.engine.report import Report, document_head
from thinkfix.io import jsontext
from thinkfix.reporters.base import OutputFormat, RenderOptions, Reporter, escaped_controls


def _line(kind: str, body: dict[str, Any]) -> bytes:
    # `type` first so `grep '"type":"error"'` and eyes both find it at the start of the line.
    return escaped_controls(jsontext.dumps({"type": kind, **body}))


class JsonlReporter(Reporter):
    """Every line is a whole JSON object with a `type`: header, finding, error, stale_baseline
    or (with `scan --check`) health."""

    format = OutputFormat.JSONL
    media_type = "application/jsonl"
    suffix = ".jsonl"

    def document(self, report: Report, options: RenderOptions) -> bytes:
        head = {**document_head(report.tool_version), **record(report, ("summary", "skipped"))}
        lines = [_line("header", head)]
        lines += [_line("finding", f.to_dict()) for f in report.findings]
        lines += [_line("error", e.to_dict()) for e in report.errors]
        lines += [_line("stale_baseline", s.to_dict()) for s in report.stale_baseline]
        if report.health is not None:  # `scan --check`: one line per problem found
            lines += [_line("health", f.to_dict()) for f in report.health.findings]
        return b"\n".join(lines) + b"\n"
